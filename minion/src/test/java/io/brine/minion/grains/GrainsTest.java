package io.brine.minion.grains;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

class GrainsTest {

    @TempDir
    Path root;

    private Path write(String file, String content) throws IOException {
        Path path = root.resolve(file);
        Files.createDirectories(path.getParent());
        return Files.writeString(path, content);
    }

    @Test
    void thisHostsGrainsHaveSaltsKeysAndTypes() {
        Map<String, Object> grains = new Grains(Map.of()).get();
        assertThat(grains)
                .containsKeys(
                        "os",
                        "os_family",
                        "kernel",
                        "kernelrelease",
                        "fqdn",
                        "host",
                        "domain",
                        "ipv4",
                        "ipv6",
                        "num_cpus",
                        "mem_total",
                        "cpuarch");
        assertThat(grains.get("kernel")).isInstanceOf(String.class);
        if (OS.LINUX.isCurrentOs()) {
            assertThat(grains.get("kernel")).isEqualTo("Linux");
            assertThat(grains.get("ipv4"))
                    .asList()
                    .as("loopback included, as in Salt")
                    .contains("127.0.0.1");
        }
        assertThat(grains.get("num_cpus")).isInstanceOf(Long.class).isEqualTo((long)
                Runtime.getRuntime().availableProcessors());
        assertThat((Long) grains.get("mem_total")).isPositive();
        assertThat((String) grains.get("host")).isNotBlank().doesNotContain(".");
        assertThat((List<?>) grains.get("ipv4")).allSatisfy(a -> assertThat(a).isInstanceOf(String.class));
        assertThat((List<?>) grains.get("ipv6"))
                .allSatisfy(a -> assertThat((String) a).doesNotContain("%"));
        assertThat(List.copyOf(grains.keySet())).isSorted();
        assertThatThrownBy(() -> grains.put("x", 1)).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void debianOsReleaseMapsLikeSalt() throws IOException {
        write("etc/os-release", """
                PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
                NAME="Debian GNU/Linux"
                VERSION_ID="12"
                VERSION_CODENAME=bookworm
                ID=debian
                """);
        write("proc/meminfo", "MemTotal:       16318904 kB\nMemFree:         1000 kB\n");
        write("proc/sys/kernel/hostname", "web1\n");
        Map<String, Object> grains = new Grains(Map.of(), root, () -> "web1.example.com", Duration.ofSeconds(2)).get();
        assertThat(grains)
                .containsEntry("os", "Debian")
                .containsEntry("os_family", "Debian")
                .containsEntry("osrelease", "12")
                .containsEntry("osmajorrelease", 12L)
                .containsEntry("oscodename", "bookworm")
                .containsEntry("osfullname", "Debian GNU/Linux")
                .containsEntry("osfinger", "Debian-12")
                .containsEntry("mem_total", 15936L)
                .containsEntry("fqdn", "web1.example.com")
                .containsEntry("host", "web1")
                .containsEntry("domain", "example.com");
    }

    @Test
    void familiesComeFromTheOsOrFromIdLike() throws IOException {
        Map<String, Map<String, String>> cases = Map.of(
                "ID=ubuntu\nVERSION_ID=\"22.04\"\nID_LIKE=debian\n",
                        Map.of("os", "Ubuntu", "os_family", "Debian", "osfinger", "Ubuntu-22.04"),
                "ID=\"rocky\"\nVERSION_ID=\"9.3\"\nID_LIKE=\"rhel centos fedora\"\n",
                        Map.of("os", "Rocky", "os_family", "RedHat", "osfinger", "Rocky-9"),
                "ID=\"opensuse-leap\"\nVERSION_ID=\"15.5\"\n", Map.of("os", "Leap", "os_family", "Suse"),
                "ID=alpine\nVERSION_ID=3.19.1\n", Map.of("os", "Alpine", "os_family", "Alpine"),
                "ID=arch\n", Map.of("os", "Arch", "os_family", "Arch"),
                "ID=myos\nID_LIKE=\"ubuntu debian\"\n", Map.of("os", "Myos", "os_family", "Debian"),
                "ID=weird\n", Map.of("os", "Weird", "os_family", "Weird"));
        for (Map.Entry<String, Map<String, String>> c : cases.entrySet()) {
            write("etc/os-release", c.getKey());
            Map<String, Object> grains = new Grains(Map.of(), root, () -> "h", Duration.ofSeconds(1)).get();
            assertThat(grains).as(c.getKey()).containsAllEntriesOf(c.getValue());
        }
    }

    @Test
    void staticGrainsOverrideCollectedOnesAndNullRemovesOne() {
        Map<String, Object> config = new HashMap<>();
        config.put("os", "Custom");
        config.put("roles", List.of("web", 1));
        config.put("domain", null);
        Map<String, Object> grains = new Grains(config, root, () -> "h.example.com", Duration.ofSeconds(1)).get();
        assertThat(grains)
                .containsEntry("os", "Custom")
                .containsEntry("roles", List.of("web", 1L))
                .doesNotContainKey("domain");
        assertThatThrownBy(() -> new Grains(Map.of("when", new Object()))).hasMessageStartingWith("grains.when:");
    }

    @Test
    void aHangingDnsLookupFallsBackToTheHostNameWithinTheBound() throws Exception {
        write("proc/sys/kernel/hostname", "lonely\n");
        CountDownLatch never = new CountDownLatch(1);
        // The lookup never ends: that the grains are built at all (within the suite's wait) shows the bound works.
        CompletableFuture<Grains> built = CompletableFuture.supplyAsync(() -> new Grains(
                Map.of(),
                root,
                () -> {
                    never.await();
                    return "too.late";
                },
                Duration.ofMillis(200)));
        await().until(built::isDone);
        Grains grains = built.join();
        assertThat(grains.get())
                .containsEntry("fqdn", "lonely")
                .containsEntry("host", "lonely")
                .containsEntry("domain", "");
        never.countDown();
    }

    @Test
    void aReverseLookupThatGivesAnAddressIsNotAName() throws IOException {
        write("proc/sys/kernel/hostname", "box\n");
        assertThat(new Grains(Map.of(), root, () -> "10.1.2.3", Duration.ofSeconds(1)).get())
                .containsEntry("fqdn", "box");
    }

    @Test
    void refreshSaysWhetherAnythingChanged() throws IOException {
        write("etc/os-release", "ID=debian\nVERSION_ID=\"12\"\n");
        AtomicReference<String> fqdn = new AtomicReference<>("a.example.com");
        Grains grains = new Grains(Map.of(), root, fqdn::get, Duration.ofSeconds(1));
        Map<String, Object> before = grains.get();
        assertThat(grains.refresh()).isFalse();
        assertThat(grains.get()).isEqualTo(before);

        write("etc/os-release", "ID=debian\nVERSION_ID=\"13\"\n");
        fqdn.set("b.example.com");
        assertThat(grains.refresh()).isTrue();
        assertThat(grains.get()).containsEntry("osrelease", "13").containsEntry("host", "b");
        assertThat(before).containsEntry("osrelease", "12");
    }

    @Test
    void ipv6AddressesArePrintedCompressedWithoutScope() {
        assertThat(Grains.compressIpv6("0:0:0:0:0:0:0:1")).isEqualTo("::1");
        assertThat(Grains.compressIpv6("0:0:0:0:0:0:0:0")).isEqualTo("::");
        assertThat(Grains.compressIpv6("fe80:0:0:0:42:acff:fe11:2%eth0")).isEqualTo("fe80::42:acff:fe11:2");
        assertThat(Grains.compressIpv6("2001:db8:0:1:0:0:0:1")).isEqualTo("2001:db8:0:1::1");
        assertThat(Grains.compressIpv6("1:0:0:2:0:0:0:3")).isEqualTo("1:0:0:2::3");
        assertThat(Grains.compressIpv6("2001:db8:0:1:1:1:1:1")).isEqualTo("2001:db8:0:1:1:1:1:1");
    }

    @Test
    void osReleaseValuesMayBeQuotedAndEscaped() {
        assertThat(OsRelease.parse(List.of("# comment", "A=\"x \\\"y\\\"\"", "B='z'", "C=plain", "", "junk")))
                .containsExactly(Map.entry("A", "x \"y\""), Map.entry("B", "z"), Map.entry("C", "plain"));
    }
}
