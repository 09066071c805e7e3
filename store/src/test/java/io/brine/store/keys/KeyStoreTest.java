package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.protocol.InvalidIdException;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.TestKeys;
import io.brine.protocol.testing.TinyFileSystem;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.AdminResult.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyFactory;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KeyStoreTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeStores() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    private Path pki() {
        return tmp.resolve("pki");
    }

    private KeyStore open() throws Exception {
        AuditLog audit = AuditLog.open(tmp.resolve("cache"), Clock.systemUTC());
        opened.add(audit);
        return open(
                KeyStoreOptions.builder(pki()).auditLog(audit).masterKey(false).pollInterval(Duration.ZERO));
    }

    private KeyStore open(KeyStoreOptions.Builder builder) throws Exception {
        KeyStore store = FileKeyStore.open(builder.build());
        opened.add(store);
        return store;
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    private static String fp(int i) {
        return Fingerprints.of(key(i));
    }

    private Path file(KeyState state, String id) {
        return pki().resolve(state.dirName()).resolve(id);
    }

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }

    private List<JsonNode> auditLines() throws IOException {
        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(tmp.resolve("cache").resolve(AuditLog.FILE_NAME))) {
            lines.add(JSON.readTree(line));
        }
        return lines;
    }

    // ------------------------------------------------------------ layout

    @Test
    void firstOpenCreatesTheLayoutAndTheMasterKeyPairWithSafeModes() throws Exception {
        KeyStore store = open(KeyStoreOptions.builder(pki()).pollInterval(Duration.ZERO));

        assertThat(mode(pki())).isEqualTo("rwx------");
        for (KeyState state : KeyState.values()) {
            assertThat(mode(pki().resolve(state.dirName()))).as(state.dirName()).isEqualTo("rwx------");
        }
        assertThat(mode(pki().resolve("master.pem"))).isEqualTo("r--------");
        assertThat(mode(pki().resolve("master.pub"))).isEqualTo("rw-r--r--");
        String pem = Files.readString(pki().resolve("master.pem"));
        assertThat(pem).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        assertThat(Files.readString(pki().resolve("master.pub")))
                .startsWith("-----BEGIN PUBLIC KEY-----")
                .isEqualTo(Pem.publicKeySpki(store.masterKeyPair().getPublic()));
        store.close();

        KeyStore again = open(KeyStoreOptions.builder(pki()).pollInterval(Duration.ZERO));
        assertThat(again.masterKeyPair().getPublic())
                .isEqualTo(store.masterKeyPair().getPublic());
    }

    @Test
    void refusesAGroupReadableMasterKey() throws Exception {
        open(KeyStoreOptions.builder(pki()).pollInterval(Duration.ZERO)).close();
        Path pem = pki().resolve("master.pem");
        Files.setPosixFilePermissions(pem, PosixFilePermissions.fromString("r--r-----"));

        assertThatThrownBy(() -> open(KeyStoreOptions.builder(pki()).pollInterval(Duration.ZERO)))
                .isInstanceOf(KeyStoreException.class)
                .hasMessageContaining(pem.toString())
                .hasMessageContaining("chmod 400");
    }

    /** The lock's open failing names the system's reason, the owner and mode, the user and the fix, not just a path. */
    @Test
    void aPkiDirWhoseLockCannotBeCreatedSaysWhyAndTheFix() throws Exception {
        try (TinyFileSystem disk = TinyFileSystem.mount(tmp.resolve("disk"), "1m")) {
            Path pki = Files.createDirectory(
                    disk.root().resolve("pki"),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            disk.remountReadOnly();

            assertThatThrownBy(() ->
                            open(KeyStoreOptions.builder(pki).masterKey(false).pollInterval(Duration.ZERO)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(pki.resolve(".lock")
                            + " cannot be opened for writing: read-only file system (directory " + pki
                            + " is owned by root:root (uid 0), mode 0700; this process runs as root (uid 0)). Fix: the"
                            + " file system holding " + pki + " is mounted read-only: mount it read-write, or set"
                            + " pki_dir elsewhere.");
        }
    }

    @Test
    void refusesAMasterPubThatDoesNotMatchMasterPem() throws Exception {
        open(KeyStoreOptions.builder(pki()).pollInterval(Duration.ZERO)).close();
        Path pub = pki().resolve("master.pub");
        Files.writeString(pub, TestKeys.publicPem(3));

        assertThatThrownBy(() -> open(KeyStoreOptions.builder(pki()).pollInterval(Duration.ZERO)))
                .isInstanceOf(KeyStoreException.class)
                .hasMessageContaining("does not match");
    }

    @Test
    void refusesAMasterPubWithoutMasterPemInsteadOfReplacingIt() throws Exception {
        Files.createDirectories(pki());
        Files.writeString(pki().resolve("master.pub"), TestKeys.publicPem(3));

        assertThatThrownBy(() -> open(KeyStoreOptions.builder(pki()).pollInterval(Duration.ZERO)))
                .isInstanceOf(KeyStoreException.class)
                .hasMessageContaining("master.pem does not");
        assertThat(pki().resolve("master.pem")).doesNotExist();
    }

    @Test
    void refusesASymlinkedStateDirectory() throws Exception {
        Files.createDirectories(pki());
        Files.createDirectory(tmp.resolve("elsewhere"));
        Files.createSymbolicLink(pki().resolve("minions"), tmp.resolve("elsewhere"));

        assertThatThrownBy(this::open)
                .isInstanceOf(KeyStoreException.class)
                .hasMessageContaining("minions")
                .hasMessageContaining("symbolic link");
    }

    @Test
    void refusesAWorldWritablePkiDir() throws Exception {
        Files.createDirectories(pki());
        Files.setPosixFilePermissions(pki(), PosixFilePermissions.fromString("rwxrwxrwx"));

        assertThatThrownBy(this::open).isInstanceOf(KeyStoreException.class).hasMessageContaining("writable");
    }

    @Test
    void aMissingPkiDirIsAnErrorWhenCreationIsOff() {
        assertThatThrownBy(() -> open(KeyStoreOptions.builder(pki())
                        .masterKey(false)
                        .createPkiDir(false)
                        .pollInterval(Duration.ZERO)))
                .isInstanceOf(KeyStoreException.class)
                .hasMessageContaining("does not exist");
    }

    @Test
    void aStateDirectoryMadeByHandIsTightenedTo0700() throws Exception {
        Files.createDirectories(pki().resolve("minions_pre"));
        Files.setPosixFilePermissions(pki().resolve("minions_pre"), PosixFilePermissions.fromString("rwxr-xr-x"));

        open();

        assertThat(mode(pki().resolve("minions_pre"))).isEqualTo("rwx------");
    }

    @Test
    void refusesAGroupWritableStateDirectory() throws Exception {
        Files.createDirectories(pki().resolve("minions"));
        Files.setPosixFilePermissions(pki().resolve("minions"), PosixFilePermissions.fromString("rwxrwx---"));

        assertThatThrownBy(this::open).isInstanceOf(KeyStoreException.class).hasMessageContaining("chmod 700");
    }

    @Test
    void tempFilesLeftByACrashAreRemovedOnOpenAndNeverListed() throws Exception {
        open().close();
        Path temp = pki().resolve("minions_pre").resolve(".tmp-0123456789abcdef");
        Files.writeString(temp, TestKeys.publicPem(1));

        KeyStore store = open();

        assertThat(temp).doesNotExist();
        assertThat(store.list().problems()).isEmpty();
    }

    // ------------------------------------------------------------ offers

    @Test
    void anUnknownKeyBecomesPendingWith0600AndAnAuditLine() throws Exception {
        KeyStore store = open();

        KeyDecision decision = store.offer("web1", key(1), PolicyVerdict.NONE);

        assertThat(decision).isEqualTo(new KeyDecision.Pending("web1", fp(1), "new key awaits acceptance"));
        Path file = file(KeyState.PENDING, "web1");
        assertThat(Files.readString(file)).isEqualTo(TestKeys.publicPem(1));
        assertThat(mode(file)).isEqualTo("rw-------");
        assertThat(store.lookup("web1", key(1))).isEqualTo(KeyLookup.PENDING_SAME);
        assertThat(store.lookup("web1", key(2))).isEqualTo(KeyLookup.PENDING_OTHER);
        JsonNode line = auditLines().get(0);
        assertThat(line.get("event").asText()).isEqualTo("key-pending");
        assertThat(line.get("actor").asText()).isEqualTo("master");
        assertThat(line.get("id").asText()).isEqualTo("web1");
        assertThat(line.has("from")).isFalse();
        assertThat(line.get("to").asText()).isEqualTo("pending");
        assertThat(line.get("fingerprint").asText()).isEqualTo(fp(1));
        assertThat(line.get("time").asText()).endsWith("Z");
    }

    @Test
    void policyVerdictsOnUnknownKeys() throws Exception {
        KeyStore store = open();

        assertThat(store.offer("ok", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(store.offer("bad", key(2), PolicyVerdict.REJECT)).isInstanceOf(KeyDecision.Rejected.class);

        assertThat(file(KeyState.ACCEPTED, "ok")).exists();
        assertThat(file(KeyState.REJECTED, "bad")).exists();
        assertThat(store.acceptedKey("ok")).contains(key(1));
        assertThat(store.acceptedIds()).containsExactly("ok");
    }

    @Test
    void aPendingKeyIsPromotedWhenAPolicyNowAccepts() throws Exception {
        KeyStore store = open();
        store.offer("web1", key(1), PolicyVerdict.NONE);

        assertThat(store.offer("web1", key(1), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Pending.class);
        assertThat(store.offer("web1", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);

        assertThat(file(KeyState.PENDING, "web1")).doesNotExist();
        assertThat(file(KeyState.ACCEPTED, "web1")).exists();
    }

    @Test
    void aDifferentKeyIsDeniedAndTheStoredKeyIsUntouched() throws Exception {
        KeyStore store = open();
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);

        KeyDecision decision = store.offer("web1", key(2), PolicyVerdict.ACCEPT);

        assertThat(decision).isEqualTo(new KeyDecision.Denied("web1", fp(2), "key differs from the accepted key"));
        assertThat(Files.readString(file(KeyState.ACCEPTED, "web1"))).isEqualTo(TestKeys.publicPem(1));
        assertThat(Files.readString(file(KeyState.DENIED, "web1"))).isEqualTo(TestKeys.publicPem(2));
        assertThat(store.acceptedKey("web1")).contains(key(1));
        assertThat(store.list().ids(KeyState.DENIED)).containsExactly("web1");
    }

    @Test
    void theSameDeniedKeyOfferedAgainIsNotWrittenAgain() throws Exception {
        KeyStore store = open();
        store.offer("web1", key(1), PolicyVerdict.NONE);
        store.offer("web1", key(2), PolicyVerdict.NONE);
        int lines = auditLines().size();

        assertThat(store.offer("web1", key(2), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Denied.class);

        assertThat(auditLines()).hasSize(lines);
    }

    @Test
    void aRejectedIdStaysRejectedWhateverItOffers() throws Exception {
        KeyStore store = open();
        store.offer("bad", key(1), PolicyVerdict.REJECT);

        assertThat(store.offer("bad", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Rejected.class);
        assertThat(store.offer("bad", key(2), PolicyVerdict.ACCEPT))
                .isEqualTo(new KeyDecision.Rejected("bad", fp(2), "id is rejected"));
        assertThat(file(KeyState.DENIED, "bad")).doesNotExist();
    }

    @Test
    void maxPendingReachedAnswersFullAndWritesNothing() throws Exception {
        KeyStore store = open(
                KeyStoreOptions.builder(pki()).masterKey(false).maxPending(2).pollInterval(Duration.ZERO));
        store.offer("a", key(1), PolicyVerdict.NONE);
        store.offer("b", key(2), PolicyVerdict.NONE);

        assertThat(store.offer("c", key(3), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Full.class);
        assertThat(file(KeyState.PENDING, "c")).doesNotExist();
        assertThat(store.offer("c", key(3), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
    }

    @Test
    void maxMinionsReachedAnswersFullForANewAcceptance() throws Exception {
        KeyStore store = open(
                KeyStoreOptions.builder(pki()).masterKey(false).maxMinions(1).pollInterval(Duration.ZERO));
        store.offer("a", key(1), PolicyVerdict.ACCEPT);

        assertThat(store.offer("b", key(2), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Full.class);
        assertThat(store.offer("a", key(1), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Accepted.class);
        store.offer("b", key(2), PolicyVerdict.NONE);
        assertThat(store.accept("b", null, "test").status()).isEqualTo(Status.REFUSED);
    }

    @Test
    void aKeyUnder2048BitsIsNeverWritten() throws Exception {
        KeyStore store = open();
        String pem;
        try (var in = getClass().getResourceAsStream("/io/brine/protocol/fixtures/rsa1024.spki.pub")) {
            pem = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        }
        byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
        RSAPublicKey small = (RSAPublicKey) KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(der));

        assertThatThrownBy(() -> store.offer("web1", small, PolicyVerdict.ACCEPT))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1024");
        assertThat(file(KeyState.ACCEPTED, "web1")).doesNotExist();
    }

    @Test
    void anInvalidIdIsRefusedEverywhere() throws Exception {
        KeyStore store = open();
        assertThatThrownBy(() -> store.offer("../etc", key(1), PolicyVerdict.NONE))
                .isInstanceOf(InvalidIdException.class);
        assertThatThrownBy(() -> store.lookup("Web1", key(1))).isInstanceOf(InvalidIdException.class);
        assertThatThrownBy(() -> store.accept("a/b", null, "test")).isInstanceOf(InvalidIdException.class);
    }

    // ------------------------------------------------------------ admin operations

    @Test
    void acceptBoundToAFingerprintChangesNothingOnMismatch() throws Exception {
        KeyStore store = open();
        store.offer("web1", key(1), PolicyVerdict.NONE);

        AdminResult wrong = store.accept("web1", fp(2), "admin");
        assertThat(wrong.status()).isEqualTo(Status.REFUSED);
        assertThat(wrong.message()).contains("web1").contains(fp(1)).contains("nothing changed");
        assertThat(file(KeyState.PENDING, "web1")).exists();

        AdminResult right = store.accept("web1", fp(1).toUpperCase().replace(":", ""), "admin");
        assertThat(right.status()).isEqualTo(Status.DONE);
        assertThat(right.to()).contains(KeyState.ACCEPTED);
        assertThat(file(KeyState.ACCEPTED, "web1")).exists();
        assertThat(store.accept("web1", null, "admin").status()).isEqualTo(Status.UNCHANGED);
    }

    @Test
    void rejectAndDeleteMoveOnlyFromTheStatesAsked() throws Exception {
        KeyStore store = open();
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);

        assertThat(store.reject("web1", KeyState.PENDING, null, "admin").status())
                .isEqualTo(Status.NOT_FOUND);
        assertThat(store.reject("web1", KeyState.ACCEPTED, null, "admin").status())
                .isEqualTo(Status.DONE);
        assertThat(file(KeyState.REJECTED, "web1")).exists();
        assertThat(store.accept("web1", KeyState.PENDING, null, "admin").status())
                .isEqualTo(Status.NOT_FOUND);
        assertThat(store.accept("web1", KeyState.REJECTED, null, "admin").status())
                .isEqualTo(Status.DONE);
        assertThat(store.delete("web1", KeyState.ACCEPTED, null, "admin").status())
                .isEqualTo(Status.DONE);
        assertThat(store.list().keys().values()).allMatch(List::isEmpty);

        List<JsonNode> lines = auditLines();
        assertThat(lines)
                .extracting(l -> l.get("event").asText())
                .containsExactly("key-accepted", "key-rejected", "key-accepted", "key-deleted");
        assertThat(lines.get(1).get("actor").asText()).isEqualTo("admin");
        assertThat(lines.get(1).get("from").asText()).isEqualTo("accepted");
        assertThat(lines.get(1).get("to").asText()).isEqualTo("rejected");
    }

    @Test
    void rejectWithoutAStateRevokesAnAcceptedOrAPendingKey() throws Exception {
        KeyStore store = open();
        store.offer("acc", key(1), PolicyVerdict.ACCEPT);
        store.offer("pre", key(2), PolicyVerdict.NONE);

        assertThat(store.reject("acc", null, "admin").from()).contains(KeyState.ACCEPTED);
        assertThat(store.reject("pre", fp(2), "admin").from()).contains(KeyState.PENDING);
        assertThat(store.reject("acc", null, "admin").status()).isEqualTo(Status.UNCHANGED);
        assertThat(store.reject("nobody", null, "admin").status()).isEqualTo(Status.NOT_FOUND);
        assertThat(store.list().ids(KeyState.REJECTED)).containsExactly("acc", "pre");
    }

    @Test
    void deleteWithoutAStateRemovesEveryKeyOfTheId() throws Exception {
        KeyStore store = open();
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        store.offer("web1", key(2), PolicyVerdict.NONE);

        AdminResult result = store.delete("web1", "admin");

        assertThat(result.status()).isEqualTo(Status.DONE);
        assertThat(result.from()).contains(KeyState.ACCEPTED);
        assertThat(file(KeyState.ACCEPTED, "web1")).doesNotExist();
        assertThat(file(KeyState.DENIED, "web1")).doesNotExist();
        assertThat(store.delete("web1", "admin").status()).isEqualTo(Status.NOT_FOUND);
    }

    @Test
    void aDeniedKeyIsNeverAcceptedOverAStoredKey() throws Exception {
        KeyStore store = open();
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        store.offer("web1", key(2), PolicyVerdict.NONE);

        AdminResult result = store.accept("web1", KeyState.DENIED, null, "admin");

        assertThat(result.status()).isEqualTo(Status.REFUSED);
        assertThat(result.message()).contains("never replaces");
        assertThat(store.acceptedKey("web1")).contains(key(1));

        store.delete("web1", KeyState.ACCEPTED, null, "admin");
        assertThat(store.accept("web1", KeyState.DENIED, fp(2), "admin").status())
                .isEqualTo(Status.DONE);
        assertThat(store.acceptedKey("web1")).contains(key(2));
        assertThat(file(KeyState.DENIED, "web1")).doesNotExist();
    }

    @Test
    void filesThatAreNotKeysAreReportedAndNeverActedOn() throws Exception {
        KeyStore store = open();
        Path pre = pki().resolve("minions_pre");
        Files.writeString(pre.resolve("Web1"), TestKeys.publicPem(1));
        Files.writeString(pre.resolve("junk"), "not a key");
        Files.writeString(pre.resolve("private"), TestKeys.privatePem(1));
        Files.createSymbolicLink(pre.resolve("linked"), pre.resolve("junk"));
        Files.writeString(pki().resolve("minions").resolve("dup"), TestKeys.publicPem(2));
        Files.writeString(pre.resolve("dup"), TestKeys.publicPem(2));
        store.refresh();

        KeyListing listing = store.list();

        assertThat(listing.keys().values())
                .flatExtracting(l -> l)
                .extracting(StoredKey::id)
                .containsExactly("dup");
        assertThat(listing.problems())
                .extracting(KeyProblem::file)
                .containsExactly(
                        "'minions_pre/Web1'",
                        "'minions_pre/dup'",
                        "'minions_pre/junk'",
                        "'minions_pre/linked'",
                        "'minions_pre/private'");
        assertThat(listing.problems().get(0).reason()).contains("not a valid id");
        assertThat(listing.problems().get(1).reason()).contains("also in minions/");
        assertThat(listing.problems().get(2).reason()).contains("not a valid public key");
        assertThat(listing.problems().get(3).reason()).contains("symbolic link");
        assertThat(listing.problems().get(4).reason()).contains("private key");

        AdminResult accept = store.accept("junk", null, "admin");
        assertThat(accept.status()).isEqualTo(Status.REFUSED);
        assertThat(accept.message()).contains("minions_pre/junk").contains("not acted on");
        assertThat(store.delete("linked", KeyState.PENDING, null, "admin").status())
                .isEqualTo(Status.REFUSED);
        assertThat(Files.isSymbolicLink(pre.resolve("linked"))).isTrue();
        assertThat(store.offer("junk", key(3), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Denied.class);
        assertThat(Files.readString(pre.resolve("junk"))).isEqualTo("not a key");

        // A directory planted where an accepted key belongs: an integrity warning, and the offered key is not
        // written beside it (nor beside the damaged file above).
        Files.createDirectory(pki().resolve("minions").resolve("planted"));
        store.refresh();
        KeyDecision planted = store.offer("planted", key(4), PolicyVerdict.ACCEPT);
        assertThat(planted).isInstanceOf(KeyDecision.Denied.class);
        assertThat(planted.reason()).startsWith(KeyTransitions.UNREADABLE_ENTRY).contains("accepted entry");
        assertThat(file(KeyState.DENIED, "planted")).doesNotExist();
        assertThat(file(KeyState.DENIED, "junk")).doesNotExist();
        assertThat(Files.isDirectory(pki().resolve("minions").resolve("planted")))
                .isTrue();
    }

    @Test
    void changesByAnotherStoreInstanceAreSeenByList() throws Exception {
        KeyStore first = open();
        KeyStore second = open();
        first.offer("web1", key(1), PolicyVerdict.NONE);

        assertThat(second.list().ids(KeyState.PENDING)).containsExactly("web1");
        assertThat(second.accept("web1", fp(1), "admin").done()).isTrue();
        assertThat(first.list().ids(KeyState.ACCEPTED)).containsExactly("web1");
        assertThat(first.offer("web1", key(1), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Accepted.class);
    }

    @Test
    void theFastPathAnswersAnAcceptedKeyFromMemory() throws Exception {
        KeyStore store = open();
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        // Removed behind the store's back, without a change it could see before its next poll:
        Files.delete(file(KeyState.ACCEPTED, "web1"));

        assertThat(store.offer("web1", key(1), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Accepted.class);
        store.refresh();
        assertThat(store.acceptedKey("web1")).isEqualTo(Optional.empty());
        assertThat(store.offer("web1", key(1), PolicyVerdict.NONE)).isInstanceOf(KeyDecision.Pending.class);
    }

    @Test
    void masterPublicKeyIsReadFromMasterPubWithoutThePrivateKey() throws Exception {
        KeyStore full = open(KeyStoreOptions.builder(pki()).pollInterval(Duration.ZERO));
        RSAPublicKey expected = (RSAPublicKey) full.masterKeyPair().getPublic();

        KeyStore keysOnly = open();

        assertThat(keysOnly.masterPublicKey()).contains(expected);
        assertThatThrownBy(keysOnly::masterKeyPair).isInstanceOf(IllegalStateException.class);
        assertThat(new String(Files.readAllBytes(pki().resolve("master.pub")), StandardCharsets.US_ASCII))
                .isEqualTo(Pem.publicKeySpki(expected));
    }

    @Test
    void theChangeCounterHasItsBytesFromTheStoresCreationSoARenameNeverNeedsANewBlock() throws Exception {
        open();

        assertThat(Files.size(pki().resolve(".lock"))).isEqualTo(Long.BYTES);
    }
}
