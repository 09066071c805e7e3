package io.brine.keytool;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.testing.TestKeys;
import io.brine.protocol.testing.TinyFileSystem;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.RotationAsks;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * brine-key on a full file system: a real one, a 512 KiB tmpfs mounted for the test ({@link TinyFileSystem}). The
 * pki dir and the audit log live on it; a filler file takes the rest.
 */
class FullDiskTest {

    @TempDir
    Path tmp;

    TinyFileSystem fs;
    Path pki;
    Path cache;

    record Result(int exit, String out, String err) {}

    @BeforeEach
    void mountSmallFileSystem() throws Exception {
        fs = TinyFileSystem.mount(tmp.resolve("fs"), "512k");
        pki = fs.root().resolve("pki");
        cache = fs.root().resolve("cache");
        try (KeyStore store = FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build())) {
            for (int i = 1; i <= 10; i++) {
                store.offer("web" + i, (RSAPublicKey) TestKeys.pair(i).getPublic(), PolicyVerdict.NONE);
            }
        }
        Files.createDirectories(cache);
        // Ends 40 bytes short of a page: the next record fits only in part (as on a disk with a few bytes free).
        String head = "{\"event\":\"before\",\"pad\":\"\"}\n";
        Files.writeString(
                cache.resolve("audit.log"),
                head.replace("\"\"}", "\"" + "x".repeat(4096 - 40 - head.length()) + "\"}"));
    }

    @AfterEach
    void unmount() throws Exception {
        if (fs != null) {
            fs.close();
        }
    }

    private Result run(String... args) {
        return runWithCache(cache, args);
    }

    private Result runWithCache(Path cachedir, String... args) {
        List<String> all = new ArrayList<>(List.of("--pki-dir", pki.toString(), "--cachedir", cachedir.toString()));
        all.addAll(List.of(args));
        KeytoolConfig.Defaults defaults =
                new KeytoolConfig.Defaults(tmp.resolve("etc"), tmp.resolve("nopki"), tmp.resolve("default-cache"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = BrineKey.commandLine(new BrineKey(new BrineKeyTest.FakeTerminal(), Map.of(), defaults))
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(all.toArray(String[]::new));
        return new Result(exit, out.toString(), err.toString());
    }

    @Test
    void anAcceptOnAFullDiskIsNotReportedAsFailedAndTheMissingAuditIsNamed() throws Exception {
        fs.fill();

        Result result = run("-a", "web1", "-y");

        assertThat(Files.exists(pki.resolve(KeyState.ACCEPTED.dirName()).resolve("web1")))
                .isTrue();
        assertThat(result.err())
                .doesNotContain("accept failed")
                .contains("accepted but NOT written to the audit log " + cache.resolve("audit.log") + ": web1");
        assertThat(result.exit()).isEqualTo(1);
    }

    @Test
    void auditRecordsAreWholeOrNotThereAtAll() throws Exception {
        fs.fill();

        Result result = run("-r", "web*", "-y");

        assertThat(result.err()).contains("rejected but NOT written to the audit log");
        assertThat(result.err()).contains("web1", "web10", "web5");
        assertThat(result.exit()).isEqualTo(1);
        ObjectMapper json = new ObjectMapper();
        for (String line : Files.readAllLines(cache.resolve("audit.log"))) {
            assertThat(json.readTree(line).isObject()).as(line).isTrue();
        }
        assertThat(Files.readString(cache.resolve("audit.log"))).endsWith("\n");
    }

    @Test
    void rotateOnAFullDiskNamesTheFile() throws Exception {
        fs.fill();

        Result result = run("--rotate");

        assertThat(result.exit()).isNotZero();
        assertThat(result.err()).contains(pki.toString()).contains("No space left on device");
    }

    /**
     * {@code --rotate-keys} on a pki dir that fills up part way (issue 25): the disk takes the asks of web1 and web2
     * and refuses web3's. The two written are kept whole, synced and audited (the audit log is on another disk here),
     * and brine-key says which were asked and which not, with exit 1; no half-written ask, no temp file.
     */
    @Test
    void aRotateKeysBatchStoppedByAFullDiskKeepsAndAuditsTheAsksWrittenAndNamesTheRest() throws Exception {
        try (KeyStore store = FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build())) {
            for (String id : List.of("web1", "web2", "web3", "web4")) {
                store.accept(id, KeyState.PENDING, null, "test");
            }
        }
        Path asks = pki.resolve(RotationAsks.DIRECTORY);
        Files.createDirectory(asks, PosixFilePermissions.asFileAttribute(AtomicFiles.OWNER_DIR));
        // Two pages left once full: an ask file takes one.
        List<Path> spacers = List.of(fs.root().resolve("spacer1"), fs.root().resolve("spacer2"));
        for (Path spacer : spacers) {
            Files.writeString(spacer, "x");
        }
        fs.fill();
        for (Path spacer : spacers) {
            Files.delete(spacer);
        }
        Path otherCache = tmp.resolve("other-cache");

        Result result = runWithCache(otherCache, "--rotate-keys", "web*");

        assertThat(result.exit()).isEqualTo(1);
        assertThat(result.out())
                .contains("web1: asked to rotate")
                .contains("web2: asked to rotate")
                .doesNotContain("web3: asked")
                .contains("2 asked, 0 already asked, 1 refused, 0 may or may not be asked, 7 not asked");
        assertThat(result.err())
                .contains("stopped at web3, which cannot be asked (")
                .contains("No space left on device")
                .contains("NOT asked (ask them again once the cause is fixed): web3, web4, web5, web6, web7, web8,"
                        + " web9");
        try (Stream<Path> files = Files.list(asks)) {
            assertThat(files.map(f -> f.getFileName().toString())).containsExactlyInAnyOrder("web1", "web2");
        }
        assertThat(RotationAsks.read(pki)).containsOnlyKeys("web1", "web2");
        List<String> audited = Files.readAllLines(otherCache.resolve("audit.log")).stream()
                .filter(line -> line.contains("key-rotation-asked"))
                .toList();
        assertThat(audited).hasSize(2);
        assertThat(audited.get(0)).contains("\"web1\"");
        assertThat(audited.get(1)).contains("\"web2\"");
    }
}
