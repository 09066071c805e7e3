package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.salt.SaltPubkeySignature;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code brine-key --rotate-master-key}'s files (PROTOCOL.md 6.4): the new pair beside the old, 0400, the chain
 * bounded, the previous key kept for its grace, and a crash on either side of the chain's write leaving one pair.
 */
class MasterKeyRotationTest {

    private static final Duration GRACE = Duration.ofDays(7);

    @TempDir
    Path pki;
    /** Where the offline master signing key is brought from (removable media): not in pki_dir. */
    @TempDir
    Path offline;

    private KeyPair seed() throws Exception {
        KeyPair pair = TestKeys.pair(70);
        Files.writeString(pki.resolve(MasterKeys.PRIVATE_FILE), Pem.privateKeyPkcs1(pair.getPrivate()));
        Files.setPosixFilePermissions(
                pki.resolve(MasterKeys.PRIVATE_FILE), PosixFilePermissions.fromString("r--------"));
        Files.writeString(pki.resolve(MasterKeys.PUBLIC_FILE), Pem.publicKeySpki(pair.getPublic()));
        return pair;
    }

    private static String mode(Path file) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(file));
    }

    @Test
    void aRotationPutsTheNewPairInForceKeepsTheOldForItsGraceAndTheNewestRecordsOnly() throws Exception {
        KeyPair first = seed();
        MovableClock clock = new MovableClock(Instant.parse("2026-11-28T00:00:00Z"));
        MasterKeyRotation.Rotated rotated = MasterKeyRotation.rotate(pki, 2048, GRACE, 2, Optional.empty(), clock);

        KeyPair current = MasterKeys.loadOrCreate(pki, 2048);
        assertThat(current.getPublic()).isEqualTo(rotated.next()).isNotEqualTo(first.getPublic());
        assertThat(rotated.previous()).isEqualTo(first.getPublic());
        assertThat(mode(pki.resolve(MasterKeys.PRIVATE_FILE))).isEqualTo("r--------");
        assertThat(mode(pki.resolve(MasterKeyRotation.PREVIOUS_FILE))).isEqualTo("r--------");
        assertThat(pki.resolve(MasterKeyRotation.NEW_FILE)).doesNotExist();
        assertThat(MasterSuccessions.walk(
                        (RSAPublicKey) first.getPublic(), MasterKeyRotation.readChain(pki), Optional.empty()))
                .isInstanceOf(MasterSuccessions.Walk.Verified.class);
        MasterKeyRotation.MasterKeySet set = MasterKeyRotation.load(pki, current, clock.millis());
        assertThat(set.previous().map(KeyPair::getPublic)).contains(first.getPublic());
        assertThat(MasterKeyRotation.load(pki, current, clock.millis() + GRACE.toMillis())
                        .previous())
                .isEmpty();

        MasterKeyRotation.rotate(pki, 2048, GRACE, 2, Optional.empty(), clock);
        MasterKeyRotation.rotate(pki, 2048, GRACE, 2, Optional.empty(), clock);
        assertThat(MasterKeyRotation.readChain(pki)).hasSize(2);
        // Three rotations and two records kept: the first key is outside the chain now.
        assertThat(MasterSuccessions.walk(
                        (RSAPublicKey) first.getPublic(), MasterKeyRotation.readChain(pki), Optional.empty()))
                .isInstanceOf(MasterSuccessions.Walk.Refused.class);
    }

    @Test
    void aCrashBeforeTheChainNamesTheNewKeyKeepsTheOldPairAndOneAfterIsCompleted() throws Exception {
        KeyPair first = seed();
        // Before the commit: a new private key written, the chain not.
        Files.writeString(
                pki.resolve(MasterKeyRotation.NEW_FILE),
                Pem.privateKeyPkcs1(TestKeys.pair(71).getPrivate()));
        Files.setPosixFilePermissions(
                pki.resolve(MasterKeyRotation.NEW_FILE), PosixFilePermissions.fromString("r--------"));
        assertThat(MasterKeys.loadOrCreate(pki, 2048).getPublic()).isEqualTo(first.getPublic());
        assertThat(pki.resolve(MasterKeyRotation.NEW_FILE)).doesNotExist();

        // After the commit: the chain names the new key, master.pem and master.pub still hold the old one.
        MasterKeyRotation.Rotated rotated =
                MasterKeyRotation.rotate(pki, 2048, GRACE, 5, Optional.empty(), new MovableClock(Instant.EPOCH));
        Files.move(
                pki.resolve(MasterKeys.PRIVATE_FILE),
                pki.resolve(MasterKeyRotation.NEW_FILE),
                StandardCopyOption.ATOMIC_MOVE);
        Files.copy(pki.resolve(MasterKeyRotation.PREVIOUS_FILE), pki.resolve(MasterKeys.PRIVATE_FILE));
        Files.writeString(pki.resolve(MasterKeys.PUBLIC_FILE), Pem.publicKeySpki(first.getPublic()));
        assertThat(MasterKeys.loadOrCreate(pki, 2048).getPublic()).isEqualTo(rotated.next());
        assertThat(Files.readString(pki.resolve(MasterKeys.PUBLIC_FILE))).isEqualTo(Pem.publicKeySpki(rotated.next()));
    }

    @Test
    void saltsPubSigFileIsReadUpToItsBoundAndRefusedOneBytePast() throws Exception {
        Path file = pki.resolve(SaltPubkeySignature.FILE);
        Files.writeString(file, "\n".repeat(SaltPubkeySignature.MAX_BYTES));
        // At the bound it is read (and found to hold no signature); one byte past, it is not read at all.
        assertThatThrownBy(() -> MasterKeyRotation.readSaltSignature(pki))
                .isInstanceOf(KeyStoreException.class)
                .hasMessageContaining("no signature");
        Files.writeString(file, "\n".repeat(SaltPubkeySignature.MAX_BYTES + 1));
        assertThatThrownBy(() -> MasterKeyRotation.readSaltSignature(pki))
                .isInstanceOf(IOException.class)
                .isNotInstanceOf(KeyStoreException.class);
    }

    @Test
    void thereIsNoRotationWithoutAMasterKey() {
        assertThatThrownBy(() -> MasterKeyRotation.rotate(
                        pki, 2048, GRACE, 5, Optional.empty(), new MovableClock(Instant.EPOCH)))
                .isInstanceOf(KeyStoreException.class)
                .hasMessageContaining("no master key to rotate");
        assertThat(pki.resolve(MasterKeyRotation.CHAIN_FILE)).doesNotExist();
    }

    private static Path privateKeyFile(Path file, KeyPair pair, String mode) throws Exception {
        Files.writeString(file, Pem.privateKeyPkcs1(pair.getPrivate()));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    @Test
    void theOfflineSigningKeySignsTheRecordAndIsRefusedInPkiDirReadableByOthersTheMasterKeyOrNotTheConfiguredOne()
            throws Exception {
        KeyPair first = seed();
        KeyPair signing = TestKeys.pair(72);
        Path key = privateKeyFile(offline.resolve("master_sign.pem"), signing, "r--------");
        Path pub = Files.writeString(pki.resolve("master_sign.pub"), Pem.publicKeySpki(signing.getPublic()));

        // Kept in pki_dir, by name or through a link to it.
        Path inPki = privateKeyFile(pki.resolve("master_sign.pem"), signing, "r--------");
        Files.createSymbolicLink(offline.resolve("pki"), pki);
        for (Path file : List.of(inPki, offline.resolve("pki/master_sign.pem"))) {
            assertThatThrownBy(() -> MasterKeyRotation.readSigningKey(file, pki, Optional.empty()))
                    .isInstanceOf(KeyStoreException.class)
                    .hasMessageContaining("inside pki_dir");
        }
        Path loose = privateKeyFile(offline.resolve("loose.pem"), signing, "r--r-----");
        assertThatThrownBy(() -> MasterKeyRotation.readSigningKey(loose, pki, Optional.empty()))
                .hasMessageContaining("accessible by group or others");
        Path master = privateKeyFile(offline.resolve("master.pem"), first, "r--------");
        assertThatThrownBy(() -> MasterKeyRotation.readSigningKey(master, pki, Optional.empty()))
                .hasMessageContaining("the master key itself");
        Path other = privateKeyFile(offline.resolve("other.pem"), TestKeys.pair(73), "r--------");
        assertThatThrownBy(() -> MasterKeyRotation.readSigningKey(other, pki, Optional.of(pub)))
                .hasMessageContaining("not the private half of " + pub);
        assertThatThrownBy(() -> MasterKeyRotation.readSigningKey(key, pki, Optional.of(pki.resolve("none.pub"))))
                .hasMessageContaining("does not exist");
        assertThat(pki.resolve(MasterKeyRotation.CHAIN_FILE)).doesNotExist();

        MasterKeyRotation.Rotated rotated = MasterKeyRotation.rotate(
                pki,
                2048,
                GRACE,
                5,
                Optional.of(MasterKeyRotation.readSigningKey(key, pki, Optional.of(pub))),
                new MovableClock(Instant.EPOCH));
        assertThat(rotated.record().signingSignature()).isNotNull();
        assertThat(MasterSuccessions.walk(
                        (RSAPublicKey) first.getPublic(),
                        MasterKeyRotation.readChain(pki),
                        Optional.of(signing.getPublic())))
                .isInstanceOf(MasterSuccessions.Walk.Verified.class);
    }

    @Test
    void aTwoStepRotationIsRefusedOnceStaleAndOtherwiseVerifiesWithTheSigningKeyAndCarriesSaltsPubSig()
            throws Exception {
        KeyPair first = seed();
        KeyPair signing = TestKeys.pair(72);
        MovableClock clock = new MovableClock(Instant.parse("2026-11-28T00:00:00Z"));
        OfflineMasterSigning.Request request = OfflineMasterSigning.prepare(pki, 2048, GRACE, clock);
        OfflineMasterSigning.Signature signature = OfflineMasterSigning.Signature.parse(OfflineMasterSigning.sign(
                        OfflineMasterSigning.Request.parse(request.text()), signing.getPrivate(), (RSAPublicKey)
                                signing.getPublic())
                .text());
        RSAPublicKey signer = (RSAPublicKey) signing.getPublic();

        // Its grace over: the previous key would be retired at once.
        clock.advance(GRACE);
        assertThatThrownBy(() -> OfflineMasterSigning.complete(pki, signature, signer, 5, clock))
                .hasMessageContaining("stale request: prepared at 2026-11-28T00:00:00Z");
        clock.set(Instant.parse("2026-11-29T00:00:00Z"));
        // The key in force is no longer the one it was prepared after (a restored backup).
        Files.setPosixFilePermissions(
                pki.resolve(MasterKeys.PRIVATE_FILE), PosixFilePermissions.fromString("rw-------"));
        Files.writeString(
                pki.resolve(MasterKeys.PRIVATE_FILE),
                Pem.privateKeyPkcs1(TestKeys.pair(71).getPrivate()));
        assertThatThrownBy(() -> OfflineMasterSigning.complete(pki, signature, signer, 5, clock))
                .hasMessageContaining("stale request: the key in force");
        Files.writeString(pki.resolve(MasterKeys.PRIVATE_FILE), Pem.privateKeyPkcs1(first.getPrivate()));
        Files.setPosixFilePermissions(
                pki.resolve(MasterKeys.PRIVATE_FILE), PosixFilePermissions.fromString("r--------"));
        assertThat(pki.resolve(MasterKeyRotation.CHAIN_FILE)).doesNotExist();

        MasterKeyRotation.Rotated rotated = OfflineMasterSigning.complete(pki, signature, signer, 5, clock);
        assertThat(rotated.next()).isEqualTo(request.next());
        assertThat(MasterKeyRotation.readCurrent(pki).getPublic()).isEqualTo(request.next());
        assertThat(MasterSuccessions.walk(
                        (RSAPublicKey) first.getPublic(), MasterKeyRotation.readChain(pki), Optional.of(signer)))
                .isInstanceOf(MasterSuccessions.Walk.Verified.class);
        assertThat(MasterKeyRotation.readSaltSignature(pki).orElseThrow().verifies(request.next(), signer))
                .isTrue();
        assertThat(mode(pki.resolve(MasterKeys.PRIVATE_FILE))).isEqualTo("r--------");

        // A rotation the signing key did not sign leaves no pub_sig of an older key behind.
        MasterKeyRotation.rotate(pki, 2048, GRACE, 5, Optional.empty(), clock);
        assertThat(MasterKeyRotation.readSaltSignature(pki)).isEmpty();
    }
}
