package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** bin/brine-key as an admin runs it, on the build of this checkout: the "done when" walk-through. */
class BrineKeyLauncherIT {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    record Run(int exit, String out, String err) {
    }

    private static Run run(Path launcher, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("bash", launcher.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File(
                "/dev/null"))).start();
        byte[] out = process.getInputStream().readAllBytes();
        byte[] err = process.getErrorStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(process.exitValue(), new String(out, StandardCharsets.UTF_8),
                new String(err, StandardCharsets.UTF_8));
    }

    @Test
    void generateListAcceptAndFingerprintAKey() throws Exception {
        Path launcher = ROOT.resolve("bin/brine-key");
        Path keys = tmp.resolve("keys");
        Path pki = tmp.resolve("pki");
        String cache = tmp.resolve("cache").toString();

        Run gen = run(launcher, "--gen-keys", "web1", "--gen-keys-dir", keys.toString());
        assertThat(gen.exit()).as(gen.err()).isZero();
        assertThat(keys.resolve("web1.pem")).exists();
        assertThat(keys.resolve("web1.pub")).exists();

        Files.createDirectories(pki.resolve("minions_pre"));
        Files.copy(keys.resolve("web1.pub"), pki.resolve("minions_pre/web1"), StandardCopyOption.COPY_ATTRIBUTES);

        Run list = run(launcher, "--pki-dir", pki.toString(), "-L", "--out", "json");
        assertThat(list.exit()).as(list.err()).isZero();
        assertThat(list.err()).isEmpty();
        JsonNode listing = JSON.readTree(list.out());
        assertThat(listing.get("minions_pre").toString()).isEqualTo("[\"web1\"]");

        Run noTerminal = run(launcher, "--pki-dir", pki.toString(), "--cachedir", cache, "-a", "web*");
        assertThat(noTerminal.exit()).isEqualTo(1);
        assertThat(pki.resolve("minions_pre/web1")).exists();

        Run accept = run(launcher, "--pki-dir", pki.toString(), "--cachedir", cache, "-a", "web*", "-y");
        assertThat(accept.exit()).as(accept.err()).isZero();
        assertThat(accept.out()).contains("Key for minion web1 accepted.");
        assertThat(pki.resolve("minions/web1")).exists();
        assertThat(pki.resolve("minions_pre/web1")).doesNotExist();

        Run finger = run(launcher, "--pki-dir", pki.toString(), "-f", "web1");
        assertThat(finger.exit()).isZero();
        String fingerprint = gen.out().lines().filter(l -> l.startsWith("Fingerprint: ")).findFirst().orElseThrow()
                .substring("Fingerprint: ".length());
        assertThat(finger.out()).isEqualTo("Accepted Keys:\nweb1:  " + fingerprint + "\n");
        assertThat(fingerprint).matches("([0-9a-f]{2}:){31}[0-9a-f]{2}");

        Run usage = run(launcher, "--pki-dir", pki.toString(), "-a", "Web1", "-y");
        assertThat(usage.exit()).isEqualTo(2);
        assertThat(usage.err()).startsWith("brine-key: ").doesNotContain("Exception");
    }

    @Test
    void anUnbuiltCheckoutSaysHowToBuild() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("checkout/bin"));
        for (String script : List.of("brine-key", "brine-common.sh")) {
            Files.copy(ROOT.resolve("bin").resolve(script), bin.resolve(script));
        }

        Run run = run(bin.resolve("brine-key"), "-L");

        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("brine is not built yet: run ./mvnw -q -DskipTests package");
    }
}
