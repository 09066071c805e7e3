package io.brine.keytool;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.protocol.testing.TestKeys;
import io.brine.protocol.testing.TinyFileSystem;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.PolicyVerdict;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
        List<String> all = new ArrayList<>(List.of("--pki-dir", pki.toString(), "--cachedir", cache.toString()));
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
}
