package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** brine-minion --check-config, in-process: the directories it will use are checked as the start uses them. */
class MinionMainTest {

    @TempDir
    Path dir;

    record Result(int exit, String out, String err) {
    }

    private Result checkConfig() {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(stdout, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
            int exit = new CommandLine(new MinionMain()).execute("-c", dir.toString(), "--check-config");
            return new Result(exit, stdout.toString(StandardCharsets.UTF_8), stderr.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }

    @Test
    void aPkiDirOrCachedirThatIsAFileIsRefusedWithOwnerModeAndFix() throws Exception {
        Files.writeString(dir.resolve("minion.yaml"), "id: web1\nmaster: 127.0.0.1\npki_dir: pki\ncachedir: cache\n");
        Files.writeString(dir.resolve("pki"), "a file");
        Files.writeString(dir.resolve("cache"), "a file");

        Result refused = checkConfig();

        assertThat(refused.exit()).isEqualTo(2);
        assertThat(refused.err())
                .contains("Minion cannot start: pki_dir " + dir.resolve("pki") + " is not a directory (regular file ")
                .contains("Minion cannot start: cachedir " + dir.resolve("cache") + " is not a directory")
                .contains("this process runs as ")
                .contains("must be a directory, or set pki_dir elsewhere");
        assertThat(refused.out()).doesNotContain("configuration OK");

        Files.delete(dir.resolve("pki"));
        Files.delete(dir.resolve("cache"));
        Result ok = checkConfig();
        assertThat(ok.exit()).as(ok.err()).isZero();
        assertThat(ok.out()).contains("configuration OK");
        assertThat(dir.resolve("pki")).doesNotExist(); // the check leaves nothing behind
    }
}
