package io.brine.keytool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.brine.daemon.config.ConfigException;
import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.salt.SaltPubkeySignature;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.SaltMarks;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** brine-key run in-process on a temp pki dir, with captured output and a fake terminal. */
class BrineKeyTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MASTER_KEY = 20;

    @TempDir
    Path tmp;

    private Path pki;
    private Path cache;
    private final FakeTerminal terminal = new FakeTerminal();
    private final Map<String, String> environment = new HashMap<>();

    record Result(int exit, String out, String err) {}

    static final class FakeTerminal implements Terminal {
        boolean interactive;
        boolean colour;
        final Deque<String> answers = new ArrayDeque<>();
        final List<String> prompts = new ArrayList<>();

        @Override
        public boolean interactive() {
            return interactive;
        }

        @Override
        public boolean colour() {
            return colour;
        }

        @Override
        public String readLine(String prompt) {
            prompts.add(prompt);
            return answers.poll();
        }
    }

    @BeforeEach
    void createStore() throws Exception {
        pki = tmp.resolve("pki");
        cache = tmp.resolve("cache");
        try (KeyStore store = FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build())) {
            store.offer("web1", key(1), PolicyVerdict.NONE);
            store.offer("web2", key(2), PolicyVerdict.NONE);
            store.offer("app1", key(3), PolicyVerdict.NONE);
            store.offer("db1", key(4), PolicyVerdict.ACCEPT);
            store.offer("db1", key(5), PolicyVerdict.NONE);
            store.offer("evil", key(6), PolicyVerdict.REJECT);
        }
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    private static String fp(int i) {
        return Fingerprints.of(key(i));
    }

    private Result run(String... args) {
        List<String> all = new ArrayList<>(List.of("--pki-dir", pki.toString(), "--cachedir", cache.toString()));
        all.addAll(List.of(args));
        return runRaw(all.toArray(String[]::new));
    }

    private Result runRaw(String... args) {
        KeytoolConfig.Defaults defaults =
                new KeytoolConfig.Defaults(tmp.resolve("etc"), tmp.resolve("nopki"), tmp.resolve("default-cache"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = BrineKey.commandLine(new BrineKey(terminal, environment, defaults))
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(args);
        return new Result(exit, out.toString(), err.toString());
    }

    private boolean exists(KeyState state, String id) {
        return Files.exists(pki.resolve(state.dirName()).resolve(id));
    }

    private List<String> auditEvents() throws Exception {
        List<String> events = new ArrayList<>();
        for (String line : Files.readAllLines(cache.resolve("audit.log"))) {
            JsonNode node = JSON.readTree(line);
            events.add(node.get("event").asText() + " " + node.get("id").asText() + " by "
                    + node.get("actor").asText());
        }
        return events;
    }

    // ------------------------------------------------------------ progress

    /** {@code count} more pending keys, all with one test key (a listing does not care). */
    private void manyPending(int count) throws Exception {
        String pem = new String(Pem.bytes(TestKeys.publicPem(7)), StandardCharsets.US_ASCII);
        for (int i = 0; i < count; i++) {
            Path file = pki.resolve("minions_pre").resolve(String.format("bulk%04d", i));
            Files.writeString(file, pem);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        }
    }

    @Test
    void acceptingManyKeysOnATerminalShowsACounterInsteadOfALineEach() throws Exception {
        manyPending(1200);
        terminal.interactive = true;
        // The bulk keys share one test key: accepting them needs the flag (one key, one id).
        Result result = run("-A", "-y", "--allow-shared-key");
        assertThat(result.exit()).as(result.err()).isZero();
        assertThat(result.err()).contains("\r1,203/1,203").contains("\r12/1,203");
        assertThat(result.out())
                .doesNotContain("Key for minion bulk0001 accepted.")
                .endsWith("1,203 keys accepted.\n");
        assertThat(exists(KeyState.ACCEPTED, "bulk1199")).isTrue();
    }

    @Test
    void onAPipeThereIsNoCounterAndEachKeyHasItsLine() throws Exception {
        manyPending(150);
        Result result = run("-D", "-y");
        assertThat(result.exit()).as(result.err()).isZero();
        assertThat(result.err()).doesNotContain("\r");
        assertThat(result.out()).contains("Key for minion bulk0149 deleted.");
    }

    @Test
    void includeAllIsIncludeRejectedAcceptedAndDeniedAsInSalt() {
        Result accept = run("-a", "evil", "--include-all", "-y");
        assertThat(accept.exit()).as(accept.err()).isZero();
        assertThat(exists(KeyState.ACCEPTED, "evil")).isTrue();
        Result reject = run("-r", "evil", "--include-all", "-y");
        assertThat(reject.exit()).as(reject.err()).isZero();
        assertThat(exists(KeyState.REJECTED, "evil")).isTrue();
    }

    // ------------------------------------------------------------ key_rotation: pending (issue 25)

    @Test
    void aRotationWaitingForAnAdminIsListedUnaccepted_AndAcceptedOnlyBoundToItsNewKey() throws Exception {
        onStore(store -> store.rotate("db1", key(4), key(8), KeyRotationPolicy.PENDING, "minion db1"));

        assertThat(run("-l", "un").out())
                .isEqualTo("Unaccepted Keys:\napp1\nweb1\nweb2\ndb1  (rotation of its" + " accepted key, new key "
                        + fp(8) + ")\n");
        JsonNode json = JSON.readTree(run("-L", "--out", "json").out());
        assertThat(json.get("minions_rotating").get("db1").asText()).isEqualTo(fp(8));
        assertThat(json.get("minions_pre").toString()).doesNotContain("db1");

        Result unbound = run("-a", "db1", "-y");
        assertThat(unbound.exit()).isEqualTo(1);
        assertThat(unbound.err()).contains("a key rotation waits with the new key " + fp(8), "-a db1 -f " + fp(8));
        Result wrong = run("-a", "db1", "-f", fp(4), "-y");
        assertThat(wrong.exit()).isEqualTo(1);
        assertThat(wrong.err()).contains("not " + fp(4) + "; nothing changed");
        assertThat(lookup("db1", 4)).isEqualTo(KeyLookup.ACCEPTED_SAME);

        Result accept = run("-a", "db1", "-f", fp(8), "-y");
        assertThat(accept.exit()).as(accept.err()).isZero();
        assertThat(accept.out()).contains("db1: key rotation to " + fp(8) + " accepted");
        assertThat(lookup("db1", 8)).isEqualTo(KeyLookup.ACCEPTED_SAME);
        assertThat(auditEvents()).last().asString().startsWith("key-rotated db1 by brine-key:");
        assertThat(run("-L", "--out", "json").out()).doesNotContain("minions_rotating");
    }

    @Test
    void aRejectedRotationKeepsTheAcceptedKey() throws Exception {
        onStore(store -> store.rotate("db1", key(4), key(8), KeyRotationPolicy.PENDING, "minion db1"));

        Result reject = run("-r", "db1", "-f", fp(8), "-y");

        assertThat(reject.exit()).as(reject.err()).isZero();
        assertThat(lookup("db1", 4)).isEqualTo(KeyLookup.ACCEPTED_SAME);
        assertThat(run("-l", "un").out()).doesNotContain("rotation");
    }

    // ------------------------------------------------------------ --rotate-keys (issue 25)

    @Test
    void rotateKeysAsksTheMatchingAcceptedMinionsOnce_AndTheListingShowsAskedThenRotated() throws Exception {
        onStore(store -> store.offer("db2", key(7), PolicyVerdict.ACCEPT));

        Result asked = run("--rotate-keys", "db*");
        assertThat(asked.exit()).as(asked.err()).isZero();
        assertThat(asked.out())
                .contains(
                        "db1: asked to rotate " + fp(4) + " at its next heartbeat",
                        "db2: asked to rotate " + fp(7),
                        "2 asked, 0 already asked, 0 refused");
        Result again = run("--rotate-keys", "db1", "--out", "json");
        assertThat(again.exit()).as(again.err()).isZero();
        assertThat(JSON.readTree(again.out()).get("already_asked").toString()).isEqualTo("[\"db1\"]");
        assertThat(JSON.readTree(again.out()).get("asked").toString()).isEqualTo("[]");
        assertThat(auditEvents())
                .filteredOn(e -> e.startsWith("key-rotation-asked"))
                .hasSize(2);
        assertThat(run("-l", "acc").out())
                .matches("Accepted Keys:\ndb1  \\(rotation asked \\S+Z, not yet"
                        + " rotated\\)\ndb2  \\(rotation asked \\S+Z, not yet rotated\\)\n");

        onStore(store -> store.rotate("db1", key(4), key(8), KeyRotationPolicy.ALLOW, "minion db1"));

        assertThat(run("-l", "acc").out()).contains("db1  (rotated, asked ", "db2  (rotation asked ");
        JsonNode json = JSON.readTree(run("-L", "--out", "json").out()).get("minions_rotation_asked");
        assertThat(json.get("db1").get("status").asText()).isEqualTo("rotated");
        assertThat(json.get("db1").get("asked_fingerprint").asText()).isEqualTo(fp(4));
        assertThat(json.get("db1").get("fingerprint").asText()).isEqualTo(fp(8));
        assertThat(json.get("db2").get("status").asText()).isEqualTo("asked");
        assertThat(run("-d", "db2", "-y").exit()).isZero();
        assertThat(pki.resolve("minions_rotation_asked/db2"))
                .as("deleted with its key")
                .doesNotExist();
    }

    @Test
    void rotateKeysRefusesAGlobMatchingNothingAKeyNotAcceptedASaltMinionsAndKeyRotationDeny() throws Exception {
        onStore(store -> store.offer("salt1", key(9), MinionKind.SALT, current -> PolicyVerdict.ACCEPT));
        Path etc = Files.createDirectories(tmp.resolve("deny"));
        Files.writeString(
                etc.resolve("master.yaml"), "pki_dir: " + pki + "\ncachedir: " + cache + "\nkey_rotation: deny\n");

        Result denied = runRaw("-c", etc.toString(), "--rotate-keys", "db1");
        assertThat(denied.exit()).isEqualTo(1);
        assertThat(denied.err()).contains("key_rotation: deny", "nothing was asked");
        Result none = run("--rotate-keys", "nosuch*");
        assertThat(none.exit()).isEqualTo(1);
        assertThat(none.err()).isEqualTo("brine-key: the key glob 'nosuch*' does not match any key\n");
        assertThat(pki.resolve("minions_rotation_asked")).doesNotExist();
        Result salt = run("--rotate-keys", "salt1");
        assertThat(salt.exit()).isEqualTo(1);
        assertThat(salt.err()).contains("salt1: a Salt minion cannot rotate its key", "brine-key -d salt1");

        Result all = run("--rotate-keys", "*");

        assertThat(all.exit()).isEqualTo(1);
        assertThat(all.out()).contains("db1: asked to rotate " + fp(4), "1 asked, 0 already asked, 5 refused");
        assertThat(all.err())
                .contains(
                        "web1: no accepted key (the id is pending)",
                        "evil: no accepted key (the id is rejected)",
                        "salt1: a Salt minion");
        assertThat(pki.resolve("minions_rotation_asked")).isDirectoryContaining(path -> path.endsWith("db1"));
    }

    // ------------------------------------------------------------ listing

    @Test
    void longListingShowsEachKeysFingerprintSinceWhenItsAgeAndItsIdsLastRotation() throws Exception {
        onStore(store -> store.rotate("db1", key(4), key(8), KeyRotationPolicy.ALLOW, "minion db1"));
        Instant accepted = Instant.parse("2026-01-01T00:00:00Z");
        Instant rotated = Instant.parse("2026-01-02T00:00:00Z");
        Files.setLastModifiedTime(pki.resolve("minions/db1"), FileTime.from(accepted));
        Files.setLastModifiedTime(pki.resolve("minions_retired/db1"), FileTime.from(rotated));

        Result text = run("-l", "acc", "--long");

        assertThat(text.exit()).as(text.err()).isZero();
        assertThat(text.out())
                .matches("Accepted Keys:\ndb1  " + fp(8) + "  since 2026-01-01T00:00:00Z \\(\\d+d"
                        + " \\d+h\\)  last rotation 2026-01-02T00:00:00Z\n");
        assertThat(run("-l", "un", "--long").out()).contains("web1  " + fp(1) + "  since ", "last rotation never");
        JsonNode json = JSON.readTree(run("-L", "--long", "--out", "json").out());
        JsonNode db1 = json.get("minions").get(0);
        assertThat(db1.get("id").asText()).isEqualTo("db1");
        assertThat(db1.get("fingerprint").asText()).isEqualTo(fp(8));
        assertThat(db1.get("since").asText()).isEqualTo("2026-01-01T00:00:00Z");
        assertThat(db1.get("last_rotation").asText()).isEqualTo("2026-01-02T00:00:00Z");
        assertThat(db1.get("age_seconds").asLong()).isGreaterThan(86_400);
        assertThat(json.get("minions_pre").get(0).get("last_rotation").isNull()).isTrue();
        assertThat(run("-L", "--out", "json").out())
                .as("without --long, ids as before")
                .contains("\"db1\"")
                .doesNotContain("fingerprint");
    }

    @Test
    void listAllGroupsIdsLikeSaltKeyWithoutColourOffATerminal() {
        Result result = run("-L");

        assertThat(result.exit()).isZero();
        assertThat(result.out()).isEqualTo("""
                Accepted Keys:
                db1
                Denied Keys:
                db1
                Unaccepted Keys:
                app1
                web1
                web2
                Rejected Keys:
                evil
                """);
        // On a pipe, the total goes to stderr: stdout stays salt-key's layout for scripts.
        assertThat(result.err()).isEqualTo("brine-key: 6 keys: 1 accepted, 1 denied, 3 unaccepted, 1 rejected\n");
        assertThat(run().out()).isEqualTo(result.out());
        terminal.interactive = true;
        assertThat(run("-L").err()).isEmpty();
    }

    @Test
    void colourOnlyOnATerminalAndNeverWithNoColor() {
        terminal.colour = true;
        assertThat(run("-L").out()).contains("\u001b[0;32mAccepted Keys:\u001b[0m", "\u001b[0;31mweb1\u001b[0m");
        assertThat(run("-L", "--no-color").out()).doesNotContain("\u001b[");
        environment.put("NO_COLOR", "1");
        assertThat(run("-L").out()).doesNotContain("\u001b[");
        environment.remove("NO_COLOR");
        assertThat(run("-L", "--out", "json").out()).doesNotContain("\u001b[");
    }

    @Test
    void listAsJsonUsesSaltsKeysSorted() throws Exception {
        Result result = run("-L", "--out", "json");

        assertThat(result.exit()).isZero();
        JsonNode json = JSON.readTree(result.out());
        assertThat(json.fieldNames())
                .toIterable()
                .containsExactly("minions", "minions_pre", "minions_rejected", "minions_denied");
        assertThat(json)
                .isEqualTo(JSON.valueToTree(Map.of(
                        "minions",
                        List.of("db1"),
                        "minions_pre",
                        List.of("app1", "web1", "web2"),
                        "minions_rejected",
                        List.of("evil"),
                        "minions_denied",
                        List.of("db1"))));
    }

    @Test
    void aStockSaltMinionIsMarkedInTheListingAndItsOwnJsonField() throws Exception {
        new SaltMarks(pki).mark("web2");
        new SaltMarks(pki).mark("db1");

        assertThat(run("-L").out()).contains("\ndb1  (salt)\n").contains("\nweb1\nweb2  (salt)\n");
        JsonNode json = JSON.readTree(run("-L", "--out", "json").out());
        assertThat(json.get("minions_pre").toString()).isEqualTo("[\"app1\",\"web1\",\"web2\"]");
        assertThat(json.get("salt_minions").toString()).isEqualTo("[\"db1\",\"web2\"]");
        // Only the states asked for: the pending list names web2 alone.
        assertThat(JSON.readTree(run("-l", "un", "--out", "json").out())
                        .get("salt_minions")
                        .toString())
                .isEqualTo("[\"web2\"]");
    }

    @Test
    void listWithSaltsNestedAndTxtOutputters() {
        Result nested = run("-L", "--out", "nested");
        assertThat(nested.exit()).as(nested.err()).isZero();
        assertThat(nested.out())
                .isEqualTo("minions:\n    - db1\nminions_pre:\n    - app1\n    - web1\n    - web2\n"
                        + "minions_rejected:\n    - evil\nminions_denied:\n    - db1\n");
        Result txt = run("-l", "acc", "--out", "txt");
        assertThat(txt.exit()).as(txt.err()).isZero();
        assertThat(txt.out()).isEqualTo("minions: ['db1']\n");
        assertThat(run("-f", "web1", "--out", "TXT").out()).isEqualTo("minions_pre: {'web1': '" + fp(1) + "'}\n");
    }

    @Test
    void listAsYaml() throws Exception {
        Result result = run("-l", "un", "--out", "YAML");

        assertThat(result.exit()).isZero();
        assertThat(new YAMLMapper().readTree(result.out()).get("minions_pre").toString())
                .isEqualTo("[\"app1\",\"web1\",\"web2\"]");
        assertThat(result.out()).doesNotContain("minions:");
    }

    @Test
    void listOneStateBySaltsNames() {
        assertThat(run("-l", "acc").out()).isEqualTo("Accepted Keys:\ndb1\n");
        assertThat(run("-l", "rejected").out()).isEqualTo("Rejected Keys:\nevil\n");
        assertThat(run("-l", "den").out()).isEqualTo("Denied Keys:\ndb1\n");
        Result bad = run("-l", "pending");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("expected one of pre, un, unaccepted");
    }

    @Test
    void filesThatAreNotKeysAreListedUnderAWarningOnStderr() throws Exception {
        Files.writeString(pki.resolve("minions_pre").resolve("Bad_Name"), TestKeys.publicPem(7));
        Files.writeString(pki.resolve("minions_pre").resolve("junk"), "hello");

        Result result = run("-L", "--out", "json");

        assertThat(result.exit()).isZero();
        assertThat(JSON.readTree(result.out()).get("minions_pre").toString()).isEqualTo("[\"app1\",\"web1\",\"web2\"]");
        assertThat(result.err())
                .contains("warning: 2 files")
                .contains("'minions_pre/Bad_Name': name is not a valid id")
                .contains("'minions_pre/junk': is not a valid public key");
        Files.writeString(
                pki.resolve("minions_pre").resolve("junk"),
                "-----BEGIN \u001b[31mEVIL-----\nAAAA\n" + "-----END \u001b[31mEVIL-----\n");
        assertThat(run("-L").err()).contains("'minions_pre/junk'").doesNotContain("\u001b");
        Result accept = run("-a", "junk", "-y");
        assertThat(accept.exit()).isEqualTo(1);
        assertThat(exists(KeyState.PENDING, "junk")).isTrue();
    }

    // ------------------------------------------------------------ accept, reject, delete

    @Test
    void acceptTakesAGlobOrACommaListOfThem() throws Exception {
        Result result = run("-a", "web*,app1", "-y");

        assertThat(result.exit()).isZero();
        assertThat(result.out())
                .contains(
                        "The following keys are going to be accepted:",
                        "Key for minion app1 accepted.",
                        "Key for minion web1 accepted.",
                        "Key for minion web2 accepted.");
        assertThat(exists(KeyState.ACCEPTED, "web1")).isTrue();
        assertThat(exists(KeyState.ACCEPTED, "app1")).isTrue();
        assertThat(auditEvents())
                .hasSize(3)
                .allMatch(e -> e.startsWith("key-accepted ") && e.contains(" by brine-key:"));
    }

    @Test
    void globsSupportQuestionMarksAndClasses() {
        assertThat(run("-f", "web?").out()).contains("web1:", "web2:").doesNotContain("app1");
        assertThat(run("-f", "web[!2]").out()).contains("web1:").doesNotContain("web2:");
        assertThat(run("-f", "[a-d]*").out()).contains("app1:", "db1:").doesNotContain("web1:");
        assertThat(run("-a", "web[0-9]", "-y").out()).contains("web1 accepted", "web2 accepted");
    }

    @Test
    void acceptBoundToAFingerprintChangesNothingWhenItDiffers() {
        Result wrong = run("-a", "web1", "--finger", fp(2), "-y");
        assertThat(wrong.exit()).isEqualTo(1);
        assertThat(wrong.err()).contains("web1").contains(fp(1)).contains("nothing changed");
        assertThat(exists(KeyState.PENDING, "web1")).isTrue();

        Result right = run("-a", "web1", "-f", fp(1).toUpperCase(), "-y");
        assertThat(right.exit()).isZero();
        assertThat(exists(KeyState.ACCEPTED, "web1")).isTrue();
    }

    // ------------------------------------------------------------ a change is bound to the keys it listed

    /** brine-key with {@code between} run on the store after the keys were listed and confirmed, before the write. */
    private Result runWithChangeBetween(ThrowingConsumer<KeyStore> between, String... args) {
        List<String> all = new ArrayList<>(List.of("--pki-dir", pki.toString(), "--cachedir", cache.toString()));
        all.addAll(List.of(args));
        return PlannedChange.run(
                new KeytoolConfig.Defaults(tmp.resolve("etc"), tmp.resolve("nopki"), tmp.resolve("default-cache")),
                () -> onStore(between),
                all.toArray(String[]::new));
    }

    interface ThrowingConsumer<T> {
        void accept(T value) throws Exception;
    }

    private void onStore(ThrowingConsumer<KeyStore> action) {
        try (KeyStore store = FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build())) {
            action.accept(store);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Another admin deletes {@code id}, and someone else's key is offered under it, decided by {@code verdict}. */
    private static void replace(KeyStore store, String id, int key, PolicyVerdict verdict) {
        store.delete(id, "another-admin");
        store.offer(id, key(key), verdict);
    }

    /** brine-key's line for a listed pending key {@code listed} that another pending key {@code now} replaced. */
    private static String replacedWhilePending(String id, int now, int listed) {
        return id + ": the pending key has fingerprint " + fp(now) + ", not " + fp(listed) + "; nothing changed";
    }

    /** brine-key's line for a listed pending key {@code listed} replaced by key {@code now}, now in {@code state}. */
    private static String replacedBy(String id, String state, int now, int listed) {
        return id + ": the id now holds " + (state.equals("accepted") ? "an " : "a ") + state + " key with fingerprint "
                + fp(now) + ", not the pending key " + fp(listed) + "; nothing changed";
    }

    private KeyLookup lookup(String id, int key) {
        KeyLookup[] found = new KeyLookup[1];
        onStore(store -> found[0] = store.lookup(id, key(key)));
        return found[0];
    }

    @Test
    void anAcceptTakesOnlyTheKeysItListedAnIdDeletedAndReofferedMeanwhileStaysPending() throws Exception {
        Result result =
                runWithChangeBetween(store -> replace(store, "web1", 9, PolicyVerdict.NONE), "-a", "web*", "-y");

        assertThat(result.exit()).isEqualTo(1);
        assertThat(result.out())
                .contains("web1  " + fp(1), "Key for minion web2 accepted.")
                .doesNotContain("web1 accepted");
        assertThat(result.err()).contains(replacedWhilePending("web1", 9, 1));
        assertThat(lookup("web1", 9)).isEqualTo(KeyLookup.PENDING_SAME);
        assertThat(lookup("web2", 2)).isEqualTo(KeyLookup.ACCEPTED_SAME);
        assertThat(auditEvents()).singleElement().asString().startsWith("key-accepted web2 by brine-key:");
    }

    @Test
    void anIdAcceptedMeanwhileWithAnotherKeyIsReportedNotAcceptedByThisRun() throws Exception {
        // web1 deleted, and another key offered under it accepted, as an autosign policy would
        Result result = runWithChangeBetween(
                store -> replace(store, "web1", 9, PolicyVerdict.ACCEPT), "-a", "web*", "-y", "--out", "json");

        assertThat(result.exit()).isEqualTo(1);
        assertThat(result.err()).contains(replacedBy("web1", "accepted", 9, 1));
        JsonNode document = JSON.readTree(result.out());
        assertThat(document.get("accepted").toString()).isEqualTo("[\"web2\"]");
        assertThat(document.get("refused").get("web1").asText()).contains(fp(9), fp(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"-r", "-d"})
    void aRejectOrADeleteIsBoundToTheListedKeysToo(String option) {
        Result result = runWithChangeBetween(
                store -> {
                    replace(store, "web1", 9, PolicyVerdict.REJECT);
                    replace(store, "web2", 10, PolicyVerdict.NONE);
                },
                option,
                "web*,app1",
                "-y");

        assertThat(result.exit()).isEqualTo(1);
        assertThat(result.err()).contains(replacedBy("web1", "rejected", 9, 1), replacedWhilePending("web2", 10, 2));
        assertThat(result.out()).doesNotContain("already rejected");
        assertThat(lookup("web1", 9)).isEqualTo(KeyLookup.REJECTED);
        assertThat(lookup("web2", 10)).isEqualTo(KeyLookup.PENDING_SAME);
        assertThat(lookup("app1", 3)).isEqualTo(option.equals("-r") ? KeyLookup.REJECTED : KeyLookup.UNKNOWN);
    }

    @Test
    void fingerprintBindingNeedsOneIdAndAFingerprint() {
        assertThat(run("-a", "web*", "--finger", fp(1), "-y").exit()).isEqualTo(2);
        assertThat(run("-A", "--finger", fp(1), "-y").exit()).isEqualTo(2);
        Result notFp = run("-a", "web1", "--finger", "ab:cd", "-y");
        assertThat(notFp.exit()).isEqualTo(2);
        assertThat(notFp.err()).contains("not a fingerprint");
        assertThat(exists(KeyState.PENDING, "web1")).isTrue();
    }

    @Test
    void withoutATerminalAndWithoutYesNothingChanges() {
        Result result = run("-A");

        assertThat(result.exit()).isEqualTo(1);
        assertThat(result.err()).contains("no terminal").contains("-y").contains("nothing changed");
        assertThat(exists(KeyState.PENDING, "web1")).isTrue();
        assertThat(cache).doesNotExist();
    }

    @Test
    void acceptAndRejectDefaultToYesDeleteDefaultsToNo() {
        terminal.interactive = true;
        terminal.answers.add("");
        assertThat(run("-a", "web1").exit()).isZero();
        assertThat(exists(KeyState.ACCEPTED, "web1")).isTrue();

        terminal.answers.add("");
        assertThat(run("-r", "web2").exit()).isZero();
        assertThat(exists(KeyState.REJECTED, "web2")).isTrue();

        terminal.answers.add("");
        Result declined = run("-d", "app1");
        assertThat(declined.exit()).isEqualTo(1);
        assertThat(exists(KeyState.PENDING, "app1")).isTrue();

        terminal.answers.add("Y");
        assertThat(run("-d", "app1").exit()).isZero();
        assertThat(exists(KeyState.PENDING, "app1")).isFalse();
        assertThat(terminal.prompts)
                .containsExactly("Proceed? [n/Y] ", "Proceed? [n/Y] ", "Proceed? [N/y] ", "Proceed? [N/y] ");

        terminal.answers.add("no");
        assertThat(run("-A").exit()).isEqualTo(1);
    }

    @Test
    void rejectTouchesAcceptedKeysOnlyWithIncludeAccepted() {
        Result pendingOnly = run("-r", "db1", "-y");
        assertThat(pendingOnly.exit()).isEqualTo(1);
        assertThat(pendingOnly.err()).contains("does not match any unaccepted key");

        assertThat(run("-r", "db1", "--include-accepted", "-y").exit()).isZero();
        assertThat(exists(KeyState.REJECTED, "db1")).isTrue();
        assertThat(run("-a", "evil", "-y").exit()).isEqualTo(1);
        assertThat(run("-a", "evil", "--include-rejected", "-y").exit()).isZero();
        assertThat(exists(KeyState.ACCEPTED, "evil")).isTrue();
    }

    @Test
    void aDeniedKeyIsNotAcceptedOverAnAcceptedOne() {
        Result result = run("-a", "db1", "--include-denied", "-y");

        assertThat(result.exit()).isEqualTo(1);
        assertThat(result.err()).contains("db1: already has an accepted key").contains("never replaces");
        assertThat(Files.exists(pki.resolve("minions_denied/db1"))).isTrue();
    }

    @Test
    void deleteRemovesEveryKeyOfTheIdIncludingDenied() throws Exception {
        Result result = run("-d", "db1", "-y", "--out", "json");

        assertThat(result.exit()).isZero();
        assertThat(JSON.readTree(result.out()).get("deleted").toString()).isEqualTo("[\"db1\",\"db1\"]");
        assertThat(exists(KeyState.ACCEPTED, "db1")).isFalse();
        assertThat(exists(KeyState.DENIED, "db1")).isFalse();
        assertThat(result.err()).contains("The following keys are going to be deleted:");
    }

    @Test
    void deletingOrRejectingAnAcceptedKeyRemovesItsClassification() throws Exception {
        Path classes = Files.createDirectories(cache.resolve("classes"));
        Files.writeString(
                classes.resolve("db1.json"), "{\"fingerprint\":\"" + fp(4) + "\",\"class\":{\"role\":\"db\"}}\n");
        Files.writeString(classes.resolve("web1.json"), "{\"fingerprint\":\"" + fp(1) + "\",\"class\":{}}\n");

        assertThat(run("-d", "db1", "-y").exit()).isZero();
        assertThat(run("-r", "web1", "-y").exit()).isZero(); // pending, not accepted: a grant's class was never used

        assertThat(classes.resolve("db1.json")).doesNotExist();
        assertThat(classes.resolve("web1.json")).exists();
    }

    @Test
    void aKeyStoredUnderAnotherIdIsMarkedAndAcceptedOnlyWithAnExplicitFlag() throws Exception {
        try (KeyStore store = FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build())) {
            store.offer("web9", key(4), PolicyVerdict.ACCEPT); // db1's accepted key: stays pending
        }
        assertThat(run("-L").out()).contains("web9  (same key as db1)\n", "db1  (same key as web9)\n");
        assertThat(run("-f", "web9").out()).contains("web9:  " + fp(4) + "  (same key as db1)");

        Result refused = run("-a", "web9", "-y");
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.err())
                .contains("web9: same key as db1 (one key, one id); nothing changed", "--allow-shared-key");
        assertThat(exists(KeyState.PENDING, "web9")).isTrue();

        assertThat(run("-a", "web9", "-y", "--allow-shared-key").exit()).isZero();
        assertThat(exists(KeyState.ACCEPTED, "web9")).isTrue();
        assertThat(Files.readString(cache.resolve("audit.log"))).contains("same key as db1");
    }

    @Test
    void aKeyFiledUnderAReservedIdIsListedWithAWarningKeptAndNotAcceptedUnlessTheListAllowsIt() throws Exception {
        try (KeyStore store = FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build())) {
            store.offer("con.example.com", key(8), PolicyVerdict.NONE); // filed before reserved_ids existed
            store.offer("master", key(9), PolicyVerdict.ACCEPT);
        }
        Result listed = run("-L");
        assertThat(listed.exit()).isZero();
        assertThat(listed.out()).contains("con.example.com\n", "master\n");
        assertThat(listed.err())
                .contains(
                        "brine-key: warning: con.example.com (pending): id con.example.com is"
                                + " reserved (reserved_ids entry con.*)",
                        "brine-key: warning: master (accepted): id master is reserved",
                        "brine-key -d con.example.com")
                .doesNotContain("web1");

        Result refused = run("-a", "con.example.com", "-y");
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.err())
                .contains(
                        "con.example.com: id con.example.com is reserved (reserved_ids entry con.*)",
                        "Nothing changed");
        assertThat(exists(KeyState.PENDING, "con.example.com")).isTrue();

        Path etc = Files.createDirectories(tmp.resolve("etc-open"));
        Files.writeString(
                etc.resolve("master.yaml"), "pki_dir: " + pki + "\ncachedir: " + cache + "\nreserved_ids: []\n");
        Result open = runRaw("-c", etc.toString(), "-L");
        assertThat(open.err()).doesNotContain("reserved");
        Result accepted = runRaw("-c", etc.toString(), "-a", "con.example.com", "-y");
        assertThat(accepted.exit()).as(accepted.err()).isZero();
        assertThat(exists(KeyState.ACCEPTED, "con.example.com")).isTrue();
    }

    @Test
    void nothingMatchedExitsOne() {
        Result result = run("-a", "nope*", "-y");
        assertThat(result.exit()).isEqualTo(1);
        assertThat(cache).as("no change, no audit log").doesNotExist();
        assertThat(result.err()).contains("'nope*' does not match any unaccepted key");
        assertThat(run("-d", "nope", "-y").err()).contains("'nope' does not match any key");
        assertThat(run("-a", "nope", "--include-rejected", "--include-denied", "-y")
                        .err())
                .contains("does not match any unaccepted, rejected or denied key");
    }

    @Test
    void invalidIdsAndGlobsInArgumentsAreUsageErrors() {
        for (String bad : List.of(
                "Web1", "../etc", "web1/x", "web$", "web1,,db1", "web1,", "[web", "-x", "web[^2]", "web[A-Z]")) {
            Result result = run("-a", bad, "-y");
            assertThat(result.exit()).as(bad).isEqualTo(2);
            assertThat(result.err())
                    .as(bad)
                    .startsWith("brine-key: ")
                    .doesNotContain("Exception")
                    .doesNotContain("\tat ");
        }
        assertThat(run("-a", "Web1", "-y").err()).contains("'Web1'").contains("[a-z0-9._-]");
        assertThat(run("-a", "web[^2]", "-y").err()).contains("negated with [!...]");
        assertThat(exists(KeyState.PENDING, "web1")).isTrue();
    }

    @Test
    void oneActionAtATime() {
        Result result = run("-a", "web1", "-d", "web2");
        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.err()).contains("choose one action").contains("-a and -d");
    }

    @Test
    void unknownOptionIsAUsageError() {
        Result result = run("--frobnicate");
        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.err()).contains("Unknown option").contains("--help");
    }

    // ------------------------------------------------------------ print, finger

    @Test
    void fingerPrintsIdAndFingerprintGroupedByState() throws Exception {
        Result result = run("-f", "web1,db1");

        assertThat(result.exit()).isZero();
        assertThat(result.out())
                .isEqualTo("Accepted Keys:\ndb1:  " + fp(4) + "\nDenied Keys:\ndb1:  " + fp(5)
                        + "\nUnaccepted Keys:\nweb1:  " + fp(1) + "\n");
        JsonNode json = JSON.readTree(run("-f", "web1", "--out", "json").out());
        assertThat(json.get("minions_pre").get("web1").asText()).isEqualTo(fp(1));
    }

    /**
     * The daemon's store on the pki dir, with a master key pair as a master's first start leaves it: master.pem from
     * the test keys (generating one cost a second of CPU), master.pub written by the store.
     */
    private KeyStore masterStore() throws Exception {
        AtomicFiles.write(
                pki.resolve("master.pem"), Pem.bytes(TestKeys.privatePem(MASTER_KEY)), AtomicFiles.OWNER_READ);
        return FileKeyStore.open(
                KeyStoreOptions.builder(pki).pollInterval(Duration.ZERO).build());
    }

    @Test
    void fingerAllShowsTheMasterKeyToo() throws Exception {
        try (KeyStore store = masterStore()) {
            String master = Fingerprints.of(store.masterKeyPair().getPublic());
            Result result = run("-F");
            assertThat(result.out()).startsWith("Local Keys:\nmaster.pub:  " + master + "\nAccepted Keys:\n");
        }
    }

    @Test
    void fingerOfMasterPubShowsTheMasterKeyAsSaltKeyDoes() throws Exception {
        try (KeyStore store = masterStore()) {
            String master = Fingerprints.of(store.masterKeyPair().getPublic());
            Result result = run("-f", "master.pub");
            assertThat(result.exit()).as(result.err()).isZero();
            assertThat(result.out()).isEqualTo("Local Keys:\nmaster.pub:  " + master + "\n");
            assertThat(JSON.readTree(run("-f", "master.pub", "--out", "json").out())
                            .get("local")
                            .get("master.pub")
                            .asText())
                    .isEqualTo(master);
        }
    }

    @Test
    void printShowsThePem() throws Exception {
        Result result = run("-p", "web1");
        assertThat(result.out()).isEqualTo("Unaccepted Keys:\nweb1:  " + TestKeys.publicPem(1));
        JsonNode json = JSON.readTree(run("-P", "--out", "json").out());
        assertThat(json.get("minions").get("db1").asText()).isEqualTo(TestKeys.publicPem(4));
        assertThat(run("-p", "zzz").exit()).isEqualTo(1);
    }

    // ------------------------------------------------------------ --gen-keys

    @Test
    void genKeysWritesAPrivateAndAPublicKeyAndRefusesToOverwrite() throws Exception {
        Path dir = tmp.resolve("keys");
        Result result = runRaw("--gen-keys", "web9", "--gen-keys-dir", dir.toString());

        assertThat(result.exit()).as(result.err()).isZero();
        Path pem = dir.resolve("web9.pem");
        Path pub = dir.resolve("web9.pub");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(pem)))
                .isEqualTo("r--------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(pub)))
                .isEqualTo("rw-r--r--");
        assertThat(Files.readString(pem)).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        assertThat(Files.readString(pub)).startsWith("-----BEGIN PUBLIC KEY-----");
        assertThat(result.out()).contains("Fingerprint: ");
        String before = Files.readString(pub);

        Result again = runRaw("--gen-keys", "web9", "--gen-keys-dir", dir.toString());
        assertThat(again.exit()).isEqualTo(1);
        assertThat(again.err()).contains("already exists");
        assertThat(Files.readString(pub)).isEqualTo(before);
    }

    @Test
    void genKeysValidatesTheNameAndTheSize() {
        assertThat(runRaw("--gen-keys", "../web9", "--gen-keys-dir", tmp.toString())
                        .exit())
                .isEqualTo(2);
        Result small = runRaw("--gen-keys", "web9", "--keysize", "1024", "--gen-keys-dir", tmp.toString());
        assertThat(small.exit()).isEqualTo(2);
        assertThat(small.err()).contains("1024");
        assertThat(tmp.resolve("web9.pem")).doesNotExist();
    }

    // ------------------------------------------------------------ configuration

    @Test
    void configDirSuppliesPkiDirAndCachedirRelativeToTheFile() throws Exception {
        Path etc = Files.createDirectories(tmp.resolve("conf"));
        Files.writeString(
                etc.resolve("master.yaml"), "# test\npki_dir: ../pki\ncachedir: ../cache2\n" + "interface: 0.0.0.0\n");

        Result result = runRaw("-c", etc.toString(), "-a", "web1", "-y");

        assertThat(result.exit()).as(result.err()).isZero();
        assertThat(exists(KeyState.ACCEPTED, "web1")).isTrue();
        assertThat(tmp.resolve("cache2/audit.log")).exists();
    }

    @Test
    void theMastersAuditLogIsWhereChangesAreAudited() throws Exception {
        Path etc = Files.createDirectories(tmp.resolve("conf"));
        Files.writeString(
                etc.resolve("master.yaml"), "pki_dir: ../pki\ncachedir: ../cache2\n" + "audit_log: ../logs/keys.log\n");

        Result result = runRaw("-c", etc.toString(), "-a", "web1", "-y");

        assertThat(result.exit()).as(result.err()).isZero();
        assertThat(Files.readString(tmp.resolve("logs/keys.log"))).contains("\"key-accepted\"");
        assertThat(tmp.resolve("cache2/audit.log")).doesNotExist();
    }

    @Test
    void configurationErrorsExitTwoNamingTheFile() throws Exception {
        Path etc = Files.createDirectories(tmp.resolve("conf"));
        Result missing = runRaw("-c", etc.toString(), "-L");
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err())
                .contains(etc.resolve("master.yaml").toString())
                .contains("does not exist");

        Files.writeString(etc.resolve("master.yaml"), "pki_dir: [1, 2]\n");
        Result wrongType = runRaw("-c", etc.toString(), "-L");
        assertThat(wrongType.exit()).isEqualTo(2);
        assertThat(wrongType.err()).contains("master.yaml:1: pki_dir: expected a single value");

        Files.writeString(etc.resolve("master.yaml"), "pki_dir: x\n  bad: : indent\n");
        Result badYaml = runRaw("-c", etc.toString(), "-L");
        assertThat(badYaml.exit()).isEqualTo(2);
        assertThat(badYaml.err()).contains("master.yaml:");

        Result noPki = runRaw("--pki-dir", tmp.resolve("absent").toString(), "-L");
        assertThat(noPki.exit()).isEqualTo(2);
        assertThat(noPki.err()).contains("does not exist");

        Path notPki = Files.createDirectories(tmp.resolve("home"));
        Result wrongDir = runRaw("--pki-dir", notPki.toString(), "-L");
        assertThat(wrongDir.exit()).isEqualTo(2);
        assertThat(wrongDir.err()).contains("does not look like a pki dir");
        try (var entries = Files.list(notPki)) {
            assertThat(entries).isEmpty();
        }
    }

    @Test
    void masterYamlIsReadByTheMastersStrictReaderSoATypoIsTheErrorCheckConfigGives() throws Exception {
        Path etc = Files.createDirectories(tmp.resolve("conf"));
        Path file = Files.writeString(
                etc.resolve("master.yaml"), "pki_dir: ../pki\npki_dirr: ../other\n" + "keysize: 1000\n");
        String checkConfig = assertThrows(ConfigException.class, () -> MasterConfig.load(etc))
                .getMessage();

        Result result = runRaw("-c", etc.toString(), "-a", "web1", "-y");

        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.err()).isEqualTo("brine-key: " + checkConfig + System.lineSeparator());
        assertThat(checkConfig).contains(file + ":2: pki_dirr: unknown key", file + ":3: keysize");
        assertThat(exists(KeyState.PENDING, "web1")).as("nothing changed").isTrue();
    }

    @Test
    void aDefaultCachedirThatCannotBeWrittenOnlyWarns() throws Exception {
        Files.writeString(tmp.resolve("default-cache"), "a file, not a directory");

        Result result = runRaw("--pki-dir", pki.toString(), "-a", "web1", "-y");

        assertThat(result.exit()).isZero();
        assertThat(result.err()).contains("warning: cannot write the audit log").contains("--cachedir");
        assertThat(exists(KeyState.ACCEPTED, "web1")).isTrue();

        Result explicit = runRaw(
                "--pki-dir",
                pki.toString(),
                "--cachedir",
                tmp.resolve("default-cache").toString(),
                "-a",
                "web2",
                "-y");
        assertThat(explicit.exit()).isEqualTo(2);
        assertThat(exists(KeyState.PENDING, "web2")).isTrue();
    }

    @Test
    void rotateBumpsTheRequestCounterTheMasterWatchesAndIsAudited() throws Exception {
        Result first = run("--rotate");
        assertThat(first.exit()).as(first.err()).isZero();
        assertThat(first.out()).contains("rotation requested (request 1)");
        Result second = run("--rotate", "--out", "json");
        assertThat(second.exit()).isZero();
        assertThat(JSON.readTree(second.out()).get("rotation_requested").asLong())
                .isEqualTo(2);

        try (KeyStore store = FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build())) {
            assertThat(store.rotationRequests()).isEqualTo(2);
        }
        assertThat(Files.readString(pki.resolve(FileKeyStore.ROTATE_FILE))).isEqualTo("2\n");
        List<String> lines = Files.readAllLines(cache.resolve("audit.log"));
        assertThat(lines).hasSize(2);
        JsonNode line = JSON.readTree(lines.get(1));
        assertThat(line.get("event").asText()).isEqualTo("rotation-requested");
        assertThat(line.get("actor").asText()).startsWith("brine-key:");
        assertThat(exists(KeyState.PENDING, "web1")).isTrue();

        Result both = run("--rotate", "-a", "web1", "-y");
        assertThat(both.exit()).isEqualTo(2);
        assertThat(both.err()).contains("choose one action");
    }

    @Test
    void helpAndVersion() {
        Result help = runRaw("--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).contains("--accept", "--finger-all", "Exit codes:", "Examples:");
        Result version = runRaw("--version");
        assertThat(version.exit()).isZero();
        assertThat(version.out()).startsWith("brine ").doesNotContain("unknown");
    }

    @Test
    void printShowsEachKeyAsItsFileHoldsIt() throws Exception {
        String pem = Pem.publicKeySpki(key(1));

        assertThat(run("-p", "web1").out()).isEqualTo("Unaccepted Keys:\nweb1:  " + pem.stripTrailing() + "\n");
        assertThat(JSON.readTree(run("-P", "--out", "json").out())
                        .get("minions_pre")
                        .get("web1")
                        .asText())
                .isEqualTo(pem);
    }

    // ------------------------------------------------------------ --clean

    /** One entry of each kind that is not a key file, next to the valid keys; returns their paths. */
    private List<Path> invalidEntries() throws Exception {
        String pem = new String(Pem.bytes(TestKeys.publicPem(7)), StandardCharsets.US_ASCII);
        Path accepted = pki.resolve("minions");
        Path badName = accepted.resolve("Web 9"); // a valid key under a name that is not an id
        Files.writeString(badName, pem);
        Path garbage = pki.resolve("minions_pre").resolve("garbage");
        Files.writeString(garbage, "not a key\n");
        Path directory = pki.resolve("minions_rejected").resolve("adir");
        Files.createDirectory(directory);
        Files.writeString(directory.resolve("inside"), "kept");
        Path link = pki.resolve("minions_denied").resolve("link");
        Files.createSymbolicLink(link, accepted.resolve("db1"));
        return List.of(badName, garbage, directory, link);
    }

    @Test
    void cleanListsEachInvalidEntryWithItsReasonThenMovesItAsideAuditedAndNoValidKey() throws Exception {
        List<Path> invalid = invalidEntries();
        Map<String, Long> valid = new HashMap<>();
        for (KeyState state : KeyState.values()) {
            try (var files = Files.list(pki.resolve(state.dirName()))) {
                for (Path file : files.toList()) {
                    if (!invalid.contains(file)) {
                        valid.put(pki.relativize(file).toString(), Files.size(file));
                    }
                }
            }
        }
        assertThat(valid)
                .containsKeys("minions/db1", "minions_pre/web1", "minions_rejected/evil", "minions_denied/db1");

        Result result = run("--clean", "-y");

        assertThat(result.exit()).as(result.err()).isZero();
        assertThat(result.out())
                .contains(
                        "'minions/Web 9': name is not a valid id",
                        "minions_pre/garbage': is not a valid public key",
                        "minions_rejected/adir': is not a regular file",
                        "minions_denied/link': is a symbolic link");
        for (Path entry : invalid) {
            assertThat(entry).doesNotExist();
        }
        try (var stamps = Files.list(pki.resolve("invalid"))) {
            Path moved = stamps.findFirst().orElseThrow();
            assertThat(moved.resolve("minions").resolve("Web 9"))
                    .hasContent(new String(Pem.bytes(TestKeys.publicPem(7)), StandardCharsets.US_ASCII));
            assertThat(moved.resolve("minions_rejected/adir/inside")).hasContent("kept");
            assertThat(Files.isSymbolicLink(moved.resolve("minions_denied/link")))
                    .isTrue();
            assertThat(moved.resolve("minions_pre/garbage")).exists();
        }
        valid.forEach(
                (file, size) -> assertThat(pki.resolve(file)).as(file).exists().hasSize(size));
        List<String> audit = Files.readAllLines(cache.resolve("audit.log"));
        assertThat(audit).hasSize(4).allMatch(line -> line.contains("\"event\":\"key-invalid-moved\""));
        assertThat(run("-L").err()).doesNotContain("not a usable key");
        assertThat(run("--clean").err()).contains("nothing to clean");
    }

    @Test
    void cleanMovesNothingWhenTheConfirmationIsRefusedOrImpossible() throws Exception {
        List<Path> invalid = invalidEntries();
        terminal.interactive = true;
        terminal.answers.add("n");

        Result refused = run("--clean");

        assertThat(refused.exit()).isEqualTo(1);
        assertThat(terminal.prompts).containsExactly("Proceed? [N/y] ");
        assertThat(refused.out()).contains("minions_pre/garbage");
        terminal.interactive = false;
        Result noTerminal = run("--clean");
        assertThat(noTerminal.exit()).isEqualTo(1);
        assertThat(noTerminal.err()).contains("no terminal to confirm on and no -y");
        for (Path entry : invalid) {
            assertThat(Files.exists(entry, LinkOption.NOFOLLOW_LINKS))
                    .as(entry.toString())
                    .isTrue();
        }
        assertThat(pki.resolve("invalid")).doesNotExist();
        assertThat(cache.resolve("audit.log")).doesNotExist();
    }

    /**
     * A master key (60) in pki, master_sign_pubkey on in etc/master.yaml with 61's public half in pki; returns the
     * offline directory holding 61's private key (master_sign.pem) and another key (other.pem), each 0400.
     */
    private Path signingSetup() throws Exception {
        Files.writeString(pki.resolve("master.pem"), TestKeys.privatePem(60));
        Files.setPosixFilePermissions(pki.resolve("master.pem"), PosixFilePermissions.fromString("r--------"));
        Files.writeString(pki.resolve("master.pub"), TestKeys.publicPem(60));
        Files.writeString(pki.resolve("master_sign.pub"), TestKeys.publicPem(61));
        Path offline = Files.createDirectories(tmp.resolve("usb"));
        Path signing = Files.writeString(offline.resolve("master_sign.pem"), TestKeys.privatePem(61));
        Files.setPosixFilePermissions(signing, PosixFilePermissions.fromString("r--------"));
        Path other = Files.writeString(offline.resolve("other.pem"), TestKeys.privatePem(62));
        Files.setPosixFilePermissions(other, PosixFilePermissions.fromString("r--------"));
        Files.writeString(
                Files.createDirectories(tmp.resolve("etc")).resolve("master.yaml"),
                "pki_dir: " + pki + "\ncachedir: " + cache + "\nmaster_sign_pubkey: true\n");
        return offline;
    }

    @Test
    void aRotationUnderMasterSignPubkeyNeedsTheOfflineSigningKeyAndSaysItSigned() throws Exception {
        Path offline = signingSetup();
        Path signing = offline.resolve("master_sign.pem");
        Path other = offline.resolve("other.pem");
        Path conf = tmp.resolve("etc");

        Result unsigned = runRaw("-c", conf.toString(), "--rotate-master-key");
        assertThat(unsigned.exit()).isEqualTo(2);
        assertThat(unsigned.err()).contains("master_sign_pubkey is on", "--master-sign-key FILE", "nothing changed");
        Result wrongKey = runRaw("-c", conf.toString(), "--rotate-master-key", "--master-sign-key", other.toString());
        assertThat(wrongKey.exit()).isEqualTo(2);
        assertThat(wrongKey.err()).contains("is not the private half of " + pki.resolve("master_sign.pub"));
        Result notARotation = runRaw("-c", conf.toString(), "-L", "--master-sign-key", signing.toString());
        assertThat(notARotation.exit()).isEqualTo(2);
        assertThat(notARotation.err()).contains("--master-sign-key applies to --rotate-master-key");
        assertThat(pki.resolve("master_chain")).doesNotExist();
        assertThat(Files.readString(pki.resolve("master.pub"))).isEqualTo(TestKeys.publicPem(60));

        Result signed = runRaw(
                "-c", conf.toString(), "--rotate-master-key", "--master-sign-key", signing.toString(), "--out", "json");
        assertThat(signed.exit()).as(signed.err()).isZero();
        assertThat(JSON.readTree(signed.out()).get("signing_key_signed").asBoolean())
                .isTrue();
        assertThat(pki.resolve("master_chain")).exists();
        assertThat(Files.readString(cache.resolve("audit.log"))).contains("signed by the master signing key too");
        // Salt's pub_sig of the new key, for minions with verify_master_pubkey_sign.
        assertThat(SaltPubkeySignature.parse(Files.readString(pki.resolve(SaltPubkeySignature.FILE)))
                        .verifies(
                                Pem.readPublicKey(Files.readString(pki.resolve("master.pub"))),
                                TestKeys.pair(61).getPublic()))
                .isTrue();
    }

    @Test
    void aRotationSignedOfflineInTwoStepsPutsThePreparedKeyInForceAndRefusesEverySignatureButItsOwn() throws Exception {
        Path offline = signingSetup();
        Path signing = offline.resolve("master_sign.pem");
        Path other = offline.resolve("other.pem");
        Path conf = tmp.resolve("etc");
        Path request = offline.resolve("master_sign.request");

        Result nothingPrepared = runRaw(
                "-c",
                conf.toString(),
                "--rotate-master-key",
                "--signature",
                offline.resolve("none.sig").toString());
        assertThat(nothingPrepared.exit()).isEqualTo(2);
        Result prepared = runRaw("-c", conf.toString(), "--rotate-master-key", "--prepare");
        assertThat(prepared.exit()).as(prepared.err()).isZero();
        assertThat(prepared.out()).contains("prepared, not in force", "--sign-master-key");
        assertThat(Files.readString(pki.resolve("master.pub"))).isEqualTo(TestKeys.publicPem(60));
        assertThat(pki.resolve("master_chain")).doesNotExist();
        Result again = runRaw("-c", conf.toString(), "--rotate-master-key", "--prepare");
        assertThat(again.exit()).isEqualTo(1);
        assertThat(again.err()).contains("a prepared rotation is waiting", "--cancel");
        Result oneStep = runRaw("-c", conf.toString(), "--rotate-master-key", "--master-sign-key", signing.toString());
        assertThat(oneStep.exit()).isEqualTo(2);
        assertThat(oneStep.err()).contains("a prepared rotation is waiting");

        // Off the master: no config, no pki dir; another signing key signs too, but the master refuses it.
        Files.copy(pki.resolve("master_sign.request"), request);
        Result wrongSigner = runRaw(
                "--sign-master-key",
                request.toString(),
                "--master-sign-key",
                other.toString(),
                "--signature",
                offline.resolve("other.sig").toString());
        assertThat(wrongSigner.exit()).as(wrongSigner.err()).isZero();
        Result noKey = runRaw("--sign-master-key", request.toString());
        assertThat(noKey.exit()).isEqualTo(2);
        assertThat(noKey.err()).contains("--master-sign-key FILE");
        Result sign = runRaw("--sign-master-key", request.toString(), "--master-sign-key", signing.toString());
        assertThat(sign.exit()).as(sign.err()).isZero();
        assertThat(sign.out())
                .contains(
                        Fingerprints.of(TestKeys.pair(60).getPublic()),
                        Fingerprints.of(TestKeys.pair(61).getPublic()));
        Path signature = offline.resolve("master_sign.request.sig");
        Result twice = runRaw("--sign-master-key", request.toString(), "--master-sign-key", signing.toString());
        assertThat(twice.exit()).isEqualTo(1);
        assertThat(twice.err()).contains("exists");

        Result refused = runRaw(
                "-c",
                conf.toString(),
                "--rotate-master-key",
                "--signature",
                offline.resolve("other.sig").toString());
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.err()).contains("not made by the master signing key", "nothing changed");
        assertThat(Files.readString(pki.resolve("master.pub"))).isEqualTo(TestKeys.publicPem(60));

        Result done = runRaw(
                "-c", conf.toString(), "--rotate-master-key", "--signature", signature.toString(), "--out", "json");
        assertThat(done.exit()).as(done.err()).isZero();
        assertThat(JSON.readTree(done.out()).get("signing_key_signed").asBoolean())
                .isTrue();
        RSAPublicKey next = Pem.readPublicKey(Files.readString(pki.resolve("master.pub")));
        assertThat(Fingerprints.of(next))
                .isEqualTo(JSON.readTree(done.out()).get("next").asText());
        assertThat(next).isNotEqualTo(TestKeys.pair(60).getPublic());
        assertThat(SaltPubkeySignature.parse(Files.readString(pki.resolve(SaltPubkeySignature.FILE)))
                        .verifies(next, TestKeys.pair(61).getPublic()))
                .isTrue();
        assertThat(pki.resolve("master.pem.pending")).doesNotExist();
        assertThat(pki.resolve("master_sign.request")).doesNotExist();
        Result reused = runRaw("-c", conf.toString(), "--rotate-master-key", "--signature", signature.toString());
        assertThat(reused.exit()).isEqualTo(1);
        assertThat(reused.err()).contains("no prepared rotation");

        // A signature of an earlier request, for a key since dropped, is for another key.
        assertThat(runRaw("-c", conf.toString(), "--rotate-master-key", "--prepare")
                        .exit())
                .isZero();
        Path first = offline.resolve("first.sig");
        assertThat(runRaw(
                                "--sign-master-key",
                                pki.resolve("master_sign.request").toString(),
                                "--master-sign-key",
                                signing.toString(),
                                "--signature",
                                first.toString())
                        .exit())
                .isZero();
        Result cancelled = runRaw("-c", conf.toString(), "--rotate-master-key", "--cancel");
        assertThat(cancelled.exit()).as(cancelled.err()).isZero();
        assertThat(runRaw("-c", conf.toString(), "--rotate-master-key", "--prepare")
                        .exit())
                .isZero();
        Result otherKey = runRaw("-c", conf.toString(), "--rotate-master-key", "--signature", first.toString());
        assertThat(otherKey.exit()).isEqualTo(1);
        assertThat(otherKey.err()).contains("the signature is for another key");
        assertThat(Pem.readPublicKey(Files.readString(pki.resolve("master.pub"))))
                .isEqualTo(next);
        assertThat(Files.readString(cache.resolve("audit.log")))
                .contains(
                        "master-key-rotation-prepared",
                        "signed offline by the master signing key",
                        "master-key-rotation-cancelled");
    }

    /**
     * Issue 25: the key in force, never rotated, gets Salt's pub_sig without a rotation: a request for it, signed
     * where the signing key is, installed once it verifies against master_sign.pub; another signing key's, one of a
     * key rotated since, a rotation's signature given to it (and its signature given to a rotation), and the steps
     * without master_sign_pubkey are refused with nothing changed.
     */
    @Test
    void theKeyInForceIsSignedWithoutARotationAndEverySignatureButItsOwnIsRefused() throws Exception {
        Path offline = signingSetup();
        Path signing = offline.resolve("master_sign.pem");
        Path conf = tmp.resolve("etc");
        Result both = runRaw("-c", conf.toString(), "--master-pubkey-signature");
        assertThat(both.exit()).isEqualTo(2);
        assertThat(both.err()).contains("choose one of --prepare and --signature FILE");
        Result oneStep =
                runRaw("-c", conf.toString(), "--master-pubkey-signature", "--master-sign-key", signing.toString());
        assertThat(oneStep.exit()).isEqualTo(2);
        assertThat(oneStep.err()).contains("--master-pubkey-signature --prepare here", "--sign-master-key");
        Result cancelled = runRaw("-c", conf.toString(), "--master-pubkey-signature", "--cancel");
        assertThat(cancelled.exit()).isEqualTo(2);
        assertThat(cancelled.err()).contains("nothing to cancel");

        Result prepared = runRaw("-c", conf.toString(), "--master-pubkey-signature", "--prepare");
        assertThat(prepared.exit()).as(prepared.err()).isZero();
        assertThat(prepared.out()).contains(Fingerprints.of(TestKeys.pair(60).getPublic()), "no rotation");
        Path request = Files.copy(
                pki.resolve("master_pubkey_signature.request"), offline.resolve("master_pubkey_signature.request"));
        Result sign = runRaw("--sign-master-key", request.toString(), "--master-sign-key", signing.toString());
        assertThat(sign.exit()).as(sign.err()).isZero();
        assertThat(sign.out()).contains("--master-pubkey-signature --signature");
        Path signature = offline.resolve("master_pubkey_signature.request.sig");
        Path foreign = offline.resolve("other.sig");
        assertThat(runRaw(
                                "--sign-master-key",
                                request.toString(),
                                "--master-sign-key",
                                offline.resolve("other.pem").toString(),
                                "--signature",
                                foreign.toString())
                        .exit())
                .isZero();

        Result refused = runRaw("-c", conf.toString(), "--master-pubkey-signature", "--signature", foreign.toString());
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.err()).contains("not made by the master signing key", "nothing changed");
        Result notARotation = runRaw("-c", conf.toString(), "--rotate-master-key", "--prepare");
        assertThat(notARotation.exit()).isZero();
        Result given = runRaw("-c", conf.toString(), "--rotate-master-key", "--signature", signature.toString());
        assertThat(given.exit()).isEqualTo(1);
        assertThat(given.err()).contains("not of a rotation", "--master-pubkey-signature --signature");
        assertThat(runRaw("-c", conf.toString(), "--rotate-master-key", "--cancel")
                        .exit())
                .isZero();
        assertThat(pki.resolve(SaltPubkeySignature.FILE)).doesNotExist();

        Result installed =
                runRaw("-c", conf.toString(), "--master-pubkey-signature", "--signature", signature.toString());
        assertThat(installed.exit()).as(installed.err()).isZero();
        assertThat(installed.out())
                .contains("installed", Fingerprints.of(TestKeys.pair(60).getPublic()));
        assertThat(SaltPubkeySignature.parse(Files.readString(pki.resolve(SaltPubkeySignature.FILE)))
                        .verifies(
                                TestKeys.pair(60).getPublic(), TestKeys.pair(61).getPublic()))
                .isTrue();
        assertThat(Files.readString(cache.resolve("audit.log"))).contains("master-key-signature-installed");

        // Rotated since (unsigned: master_sign_pubkey is switched off for it): the old key's signature is stale.
        Files.writeString(conf.resolve("master.yaml"), "pki_dir: " + pki + "\ncachedir: " + cache + "\n");
        Result off = runRaw("-c", conf.toString(), "--master-pubkey-signature", "--prepare");
        assertThat(off.exit()).isEqualTo(2);
        assertThat(off.err()).contains("master_sign_pubkey is off", "nothing changed");
        assertThat(runRaw("-c", conf.toString(), "--rotate-master-key").exit()).isZero();
        Files.writeString(conf.resolve("master.yaml"), "master_sign_pubkey: true\n", StandardOpenOption.APPEND);
        Result stale = runRaw("-c", conf.toString(), "--master-pubkey-signature", "--signature", signature.toString());
        assertThat(stale.exit()).isEqualTo(1);
        assertThat(stale.err()).contains("not the key in force", "nothing changed");
        assertThat(pki.resolve(SaltPubkeySignature.FILE)).doesNotExist();
    }
}
