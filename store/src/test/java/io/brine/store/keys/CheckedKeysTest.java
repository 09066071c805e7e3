package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.CheckedKeys.Digest;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.security.KeyFactory;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.RSAKeyGenParameterSpec;
import java.security.spec.RSAPublicKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master's start checks in full only the keys it has not checked before ({@code pki_dir/.checked_keys}); a key
 * copied in by hand, other bytes under a known id, and anything read from a file the master cannot vouch for are
 * checked in full.
 */
class CheckedKeysTest {

    @TempDir
    Path tmp;

    private Path pki;

    @BeforeEach
    void masterKey() throws Exception {
        pki = tmp.resolve("pki");
        Files.createDirectories(pki);
        Files.setPosixFilePermissions(pki, PosixFilePermissions.fromString("rwx------"));
        Files.writeString(pki.resolve("master.pem"), TestKeys.privatePem(0));
        Files.setPosixFilePermissions(pki.resolve("master.pem"), PosixFilePermissions.fromString("r--------"));
    }

    private FileKeyStore open() throws Exception {
        return FileKeyStore.open(
                KeyStoreOptions.builder(pki).pollInterval(Duration.ZERO).build());
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    /** A 2,061-bit modulus with the factor 7919: every check passes but the small-factor one. */
    private static String weakPem() throws Exception {
        BigInteger n = key(9).getModulus().multiply(BigInteger.valueOf(7919));
        return Pem.publicKeySpki(
                KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(n, RSAKeyGenParameterSpec.F4)));
    }

    private void handCopy(String id, String pem) throws Exception {
        Path file = pki.resolve("minions").resolve(id);
        Files.writeString(file, pem);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    }

    private Path cacheFile() {
        return pki.resolve(CheckedKeys.FILE_NAME);
    }

    private byte[] macKey() throws Exception {
        return Files.readAllBytes(pki.resolve(CheckedKeys.SECRET_FILE_NAME));
    }

    /** Three accepted keys, recorded by the store's close. */
    private void threeAccepted() throws Exception {
        try (FileKeyStore store = open()) {
            for (int i = 1; i <= 3; i++) {
                store.offer("web" + i, key(i), PolicyVerdict.ACCEPT);
            }
        }
    }

    private static Digest digestOf(String pem) {
        return Digest.of(Pem.bytes(pem));
    }

    @Test
    void aStartChecksInFullOnlyTheKeysNoStartCheckedBefore() throws Exception {
        threeAccepted();
        assertThat(cacheFile()).exists();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(cacheFile())))
                .isEqualTo("rw-------");

        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).isZero();
            assertThat(store.list().ids(KeyState.ACCEPTED)).containsExactly("web1", "web2", "web3");
        }
    }

    @Test
    void aRecordedVerdictIsWhatSparesTheCheck() throws Exception {
        threeAccepted();
        handCopy("weak", weakPem());
        // A file this master's key vouches for, naming the weak key's bytes: the only way past its factor check.
        Set<Digest> digests = new HashSet<>(CheckedKeys.decode(Files.readAllBytes(cacheFile()), macKey()));
        digests.add(digestOf(weakPem()));
        Files.write(cacheFile(), CheckedKeys.encode(digests, macKey()));

        try (FileKeyStore store = open()) {
            assertThat(store.list().ids(KeyState.ACCEPTED)).contains("weak");
            assertThat(store.checkedKeys().fullChecks()).isZero();
        }
    }

    @Test
    void aKeyCopiedIntoMinionsByHandIsCheckedInFull() throws Exception {
        threeAccepted();
        handCopy("weak", weakPem());
        handCopy("web4", TestKeys.publicPem(4));

        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).isEqualTo(2);
            assertThat(store.list().ids(KeyState.ACCEPTED)).containsExactly("web1", "web2", "web3", "web4");
            assertThat(store.list().problems())
                    .singleElement()
                    .satisfies(p -> assertThat(p.reason()).contains("small prime factor (7919)"));
        }
        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks())
                    .as("the weak key again, never recorded")
                    .isEqualTo(1);
        }
    }

    @Test
    void otherBytesUnderAKnownIdAreCheckedInFull() throws Exception {
        threeAccepted();
        handCopy("web1", weakPem());

        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).isEqualTo(1);
            assertThat(store.list().ids(KeyState.ACCEPTED)).containsExactly("web2", "web3");
        }
    }

    @Test
    void aDamagedFileIsIgnoredAsAWholeAndWrittenAgain() throws Exception {
        threeAccepted();
        byte[] bytes = Files.readAllBytes(cacheFile());
        bytes[bytes.length / 2] ^= 1;
        Files.write(cacheFile(), bytes);

        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).isEqualTo(3);
        }
        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks())
                    .as("rewritten at the last open")
                    .isZero();
        }
        Files.write(cacheFile(), "garbage".getBytes());
        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).isEqualTo(3);
        }
    }

    @Test
    void aFileUnderAnotherSecretIsNotUsed() throws Exception {
        threeAccepted();
        handCopy("weak", weakPem());
        Set<Digest> digests = new HashSet<>(CheckedKeys.decode(Files.readAllBytes(cacheFile()), macKey()));
        digests.add(digestOf(weakPem()));
        byte[] otherSecret = macKey().clone();
        otherSecret[0] ^= 1;
        Files.write(cacheFile(), CheckedKeys.encode(digests, otherSecret));

        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).isEqualTo(4);
            assertThat(store.list().ids(KeyState.ACCEPTED)).doesNotContain("weak");
        }
    }

    @Test
    void aMasterKeyRotationCostsTheNextStartNoCheck() throws Exception {
        threeAccepted();
        // master.pem replaced, as a rotation leaves it: the entries are about the minions' key bytes, still true.
        Files.delete(pki.resolve("master.pub"));
        Files.delete(pki.resolve("master.pem"));
        Files.writeString(pki.resolve("master.pem"), TestKeys.privatePem(5));
        Files.setPosixFilePermissions(pki.resolve("master.pem"), PosixFilePermissions.fromString("r--------"));

        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).isZero();
        }
    }

    @Test
    void aKeyCopiedInByHandInAnotherLayoutIsCheckedInFullOnce() throws Exception {
        threeAccepted();
        handCopy("web4", TestKeys.publicPem(4).replace("\n", "\r\n"));

        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).isEqualTo(1);
            assertThat(store.list().ids(KeyState.ACCEPTED)).contains("web4");
        }
        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks())
                    .as("its bytes recorded at the close")
                    .isZero();
        }
    }

    @Test
    void aSecretOthersCouldReadIsReplacedAndTheFileNotUsed() throws Exception {
        threeAccepted();
        Path secret = pki.resolve(CheckedKeys.SECRET_FILE_NAME);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(secret)))
                .isEqualTo("rw-------");
        byte[] before = Files.readAllBytes(secret);
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-r-----"));

        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).isEqualTo(3);
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(secret)))
                .isEqualTo("rw-------");
        assertThat(Files.readAllBytes(secret)).hasSize(CheckedKeys.SECRET_BYTES).isNotEqualTo(before);
        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks())
                    .as("the file rewritten under the new secret")
                    .isZero();
        }
        Files.write(secret, new byte[CheckedKeys.SECRET_BYTES + 1]);
        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks())
                    .as("a secret one byte too long")
                    .isEqualTo(3);
        }
    }

    @Test
    void aFileAtItsBoundIsReadAndOneEntryPastItIsNot() throws Exception {
        threeAccepted();
        Set<Digest> digests = new HashSet<>(CheckedKeys.decode(Files.readAllBytes(cacheFile()), macKey()));
        Random random = new Random(1);
        while (digests.size() < CheckedKeys.MAX_ENTRIES) {
            byte[] digest = new byte[32];
            random.nextBytes(digest);
            digests.add(new Digest(digest));
        }
        byte[] atBound = CheckedKeys.encode(digests, macKey());
        assertThat(atBound).hasSize(CheckedKeys.MAX_BYTES);
        Files.write(cacheFile(), atBound);
        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).isZero();
        }

        digests.add(Digest.of("one more".getBytes()));
        Files.write(cacheFile(), CheckedKeys.encode(digests, macKey()));
        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).isEqualTo(3);
        }
        assertThat(Files.size(cacheFile())).as("written again, three keys").isLessThan(200);
    }

    @Test
    void aFileAnotherUserCouldHaveWrittenIsNotUsed() throws Exception {
        threeAccepted();
        Files.setPosixFilePermissions(cacheFile(), PosixFilePermissions.fromString("rw--w----"));
        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).as("group-writable").isEqualTo(3);
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(cacheFile())))
                .isEqualTo("rw-------");

        assumeTrue(System.getProperty("user.name").equals("root"), "giving a file to another user takes root");
        UserPrincipal stranger =
                pki.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
        Files.setOwner(cacheFile(), stranger);
        try (FileKeyStore store = open()) {
            assertThat(store.checkedKeys().fullChecks()).as("owned by nobody").isEqualTo(3);
        }
        assertThat(Files.getOwner(cacheFile())).isEqualTo(Files.getOwner(pki));
    }

    @Test
    void concurrentWritersLeaveOneWholeFile() throws Exception {
        threeAccepted();
        List<RSAPublicKey> first = List.of(key(1), key(2));
        List<RSAPublicKey> second = List.of(key(3), key(4), key(5));
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> writers = new ArrayList<>();
            for (List<RSAPublicKey> keys : List.of(first, second)) {
                writers.add(threads.submit(() -> {
                    start.await();
                    for (int round = 0; round < 20; round++) {
                        // A fresh reader each time, so every save writes.
                        CheckedKeys.open(pki).save(round % 2 == 0 ? keys : List.of());
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> writer : writers) {
                writer.get();
            }
        } finally {
            threads.shutdownNow();
        }
        Set<Digest> found = CheckedKeys.decode(Files.readAllBytes(cacheFile()), macKey());
        assertThat(found).isNotNull();
        assertThat(List.of(Set.<Digest>of(), digests(first), digests(second))).contains(found);
        try (var leftovers = Files.list(pki)) {
            assertThat(leftovers.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith(".tmp-"));
        }
    }

    /**
     * A rotation checks the new key and takes the old one from memory while {@code minions/ID} is the file the store
     * read or wrote: the accepted key was checked when it was admitted (here: accepted during this run, so the file
     * spares it nothing), and checking it again was 14 % of a rotation's master CPU.
     */
    @Test
    void aRotationDoesNotReadOrCheckTheAcceptedKeyAgain() throws Exception {
        try (FileKeyStore store = open()) {
            store.offer("web1", key(1), PolicyVerdict.ACCEPT);
            long before = store.checkedKeys().fullChecks();

            assertThat(store.rotate("web1", key(1), key(2), KeyRotationPolicy.ALLOW, "minion web1"))
                    .isInstanceOf(RotationDecision.Rotated.class);
            assertThat(store.rotate("web1", key(2), key(3), KeyRotationPolicy.ALLOW, "minion web1"))
                    .isInstanceOf(RotationDecision.Rotated.class);

            assertThat(store.checkedKeys().fullChecks()).isEqualTo(before);
            assertThat(store.acceptedKey("web1")).contains(key(3));
        }
    }

    /**
     * A rotation replaces the id's accepted key in place: the accepted ids are the same set, and their listing (which
     * each publication to all minions walks) is kept, not rebuilt over every id after each of a fleet's rotations.
     */
    @Test
    void aRotationKeepsTheListOfAcceptedIds() throws Exception {
        try (FileKeyStore store = open()) {
            store.offer("web1", key(1), PolicyVerdict.ACCEPT);
            store.offer("web2", key(2), PolicyVerdict.ACCEPT);
            Set<String> ids = store.acceptedIds();

            assertThat(store.rotate("web1", key(1), key(3), KeyRotationPolicy.ALLOW, "minion web1"))
                    .isInstanceOf(RotationDecision.Rotated.class);

            assertThat(store.acceptedIds()).isSameAs(ids).containsExactly("web1", "web2");
            assertThat(store.acceptedKey("web1")).contains(key(3));
        }
    }

    /**
     * An admin's edit of {@code minions/ID} in place (the directory unchanged, so no rescan) is another version of the
     * file: the rotation reads it, checks it in full and refuses the minion's old key, which is no longer the
     * accepted one; the admin's key stays.
     */
    @Test
    void aRotationOfAKeyReplacedByHandInPlaceReadsTheFileAndIsRefused() throws Exception {
        try (FileKeyStore store = open()) {
            store.offer("web1", key(1), PolicyVerdict.ACCEPT);
            Path file = pki.resolve("minions").resolve("web1");
            FileTime written = Files.getLastModifiedTime(file);
            Files.writeString(file, Pem.publicKeySpki(key(4)));
            // The kernel's file clock is coarse: an edit within its tick would keep the time a later one changes.
            Files.setLastModifiedTime(file, FileTime.fromMillis(written.toMillis() + 1_000));
            long before = store.checkedKeys().fullChecks();

            assertThat(store.rotate("web1", key(1), key(2), KeyRotationPolicy.ALLOW, "minion web1")
                            .reason())
                    .isEqualTo("the old key is no longer the accepted key (replaced meanwhile)");

            assertThat(store.checkedKeys().fullChecks()).isEqualTo(before + 1);
            assertThat(Files.readString(file)).isEqualTo(Pem.publicKeySpki(key(4)));
        }
    }

    private static Set<Digest> digests(List<RSAPublicKey> keys) {
        Set<Digest> digests = new HashSet<>();
        keys.forEach(k -> digests.add(digestOf(Pem.publicKeySpki(k))));
        return digests;
    }
}
