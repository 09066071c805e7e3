package io.brine.keytool;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.store.api.ApiTokens;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** brine-key api-token create, list and revoke, run in-process. */
class ApiTokenCommandTest {

    @TempDir
    Path tmp;

    Path etc;
    Path pki;

    record Result(int exit, String out, String err) {}

    @BeforeEach
    void setUp() throws Exception {
        etc = Files.createDirectories(tmp.resolve("etc"));
        pki = tmp.resolve("pki");
        Files.writeString(etc.resolve("master.yaml"), "pki_dir: ../pki\ncachedir: ../cache\n");
    }

    private Result run(String... args) {
        KeytoolConfig.Defaults defaults = new KeytoolConfig.Defaults(etc, pki, tmp.resolve("default-cache"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] all = new String[args.length + 2];
        all[0] = "-c";
        all[1] = etc.toString();
        System.arraycopy(args, 0, all, 2, args.length);
        int exit = BrineKey.commandLine(new BrineKey(
                        new BrineKeyTest.FakeTerminal(), Map.of(), defaults, new ByteArrayInputStream(new byte[0])))
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(all);
        return new Result(exit, out.toString(), err.toString());
    }

    @Test
    void aTokenIsPrintedOnceStoredHashedListedAndRevokedWithAuditLines() throws Exception {
        Result created = run(
                "api-token",
                "create",
                "ci",
                "--acl",
                "web*,db*",
                "--functions",
                "test.*",
                "--key-admin",
                "--expires",
                "90d");
        assertThat(created.exit()).as(created.err()).isZero();
        String token = created.out().strip();
        assertThat(token).startsWith(ApiTokens.PREFIX).hasSizeGreaterThan(40);
        assertThat(created.err()).contains("token ci created", "shown only now");

        Path file = ApiTokens.file(pki);
        assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(Files.readString(file)).doesNotContain(token.substring(ApiTokens.PREFIX.length()));
        List<ApiTokens.Entry> entries = ApiTokens.read(file);
        assertThat(ApiTokens.find(entries, token)).hasValueSatisfying(entry -> {
            assertThat(entry.targets()).containsExactly("web*", "db*");
            assertThat(entry.keyAdmin()).isTrue();
        });

        Result listed = run("api-token", "list");
        assertThat(listed.out())
                .contains("ci  acl=web*,db*  functions=test.*  key-admin  expires=")
                .doesNotContain(token);

        Result again = run("api-token", "create", "ci", "--expires", "1h");
        assertThat(again.exit()).isEqualTo(1);
        assertThat(again.err()).contains("a token named ci exists");

        Result revoked = run("api-token", "revoke", "ci");
        assertThat(revoked.exit()).as(revoked.err()).isZero();
        assertThat(ApiTokens.read(file)).isEmpty();
        Result unknown = run("api-token", "revoke", "ci");
        assertThat(unknown.exit()).isEqualTo(1);
        assertThat(unknown.err()).contains("no token named ci; nothing changed");

        String audit = Files.readString(tmp.resolve("cache/audit.log"));
        assertThat(audit).contains("api-token-created", "api-token-revoked", "brine-key:");
        assertThat(audit).doesNotContain(token);
    }

    @Test
    void badNamesExpiriesAndGlobsAreRefusedWithNothingWritten() {
        assertThat(run("api-token", "create", "CI", "--expires", "1d").err()).contains("NAME 'CI': id has a character");
        assertThat(run("api-token", "create", "ci", "--expires", "forever").err())
                .contains("--expires 'forever': expected a duration");
        assertThat(run("api-token", "create", "ci", "--expires", "400d").err()).contains("at most 366d");
        assertThat(run("api-token", "create", "ci", "--expires", "1d", "--acl", "Web*")
                        .exit())
                .isEqualTo(2);
        assertThat(run("api-token", "create", "ci").exit()).isEqualTo(2);
        assertThat(ApiTokens.file(pki)).doesNotExist();
    }
}
