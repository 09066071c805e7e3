package io.brine.minion.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.testing.TestKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The minion's side of a master key rotation (PROTOCOL.md 6.4): a chain from the pin to the key a reply carries is
 * followed; any other chain leaves the reply judged exactly as one from a stranger, with the same reason.
 */
class MasterPinTest {

    private static final KeyPair A = TestKeys.pair(50);
    private static final KeyPair B = TestKeys.pair(51);
    private static final KeyPair C = TestKeys.pair(52);
    private static final KeyPair SIGNING = TestKeys.pair(53);
    private static final byte[] REPLY = {1, 2, 3};

    @TempDir
    Path pki;

    private static MasterSuccession step(KeyPair previous, KeyPair next, KeyPair signer, long graceUntilMs) {
        byte[] bytes = MasterSuccessions.signedBytes(
                previous.getPublic().getEncoded(), next.getPublic().getEncoded(), 0, graceUntilMs);
        return new MasterSuccession(
                previous.getPublic().getEncoded(),
                next.getPublic().getEncoded(),
                0,
                graceUntilMs,
                Rsa.sign(signer.getPrivate(), bytes),
                null);
    }

    private static Predicate<PublicKey> signedBy(KeyPair pair) {
        byte[] signature = Rsa.sign(pair.getPrivate(), REPLY);
        return key -> Rsa.verify(key, REPLY, signature);
    }

    private MasterPin pinnedTo(KeyPair pair) throws Exception {
        Files.writeString(pki.resolve(MasterPin.FILE), Pem.publicKeySpki(pair.getPublic()));
        return new MasterPin(pki, null);
    }

    @Test
    void aReplyWhoseChainLeadsFromThePinIsASuccessionAndABrokenOneIsAStrangersReply() throws Exception {
        MasterPin pin = pinnedTo(A);
        byte[] offered = C.getPublic().getEncoded();
        MasterPin.Verdict stranger = pin.verify(offered, signedBy(C));
        assertThat(stranger).isInstanceOf(MasterPin.Verdict.OtherKey.class);

        assertThat(pin.verify(offered, signedBy(C), List.of(step(A, B, A, 0), step(B, C, B, 0))))
                .isEqualTo(new MasterPin.Verdict.Succeeded((RSAPublicKey) C.getPublic()));
        // The chain verifies but the reply is not signed by the key it leads to.
        assertThat(pin.verify(offered, signedBy(B), List.of(step(A, B, A, 0), step(B, C, B, 0))))
                .isInstanceOf(MasterPin.Verdict.Forged.class);
        // A bad signature, a gap, a loop, a pin outside the chain: the reply is judged as if it had no chain.
        for (List<MasterSuccession> broken : List.of(
                List.of(step(A, B, A, 0), step(B, C, C, 0)),
                List.of(step(B, C, B, 0)),
                List.of(step(A, B, A, 0), step(B, A, B, 0), step(A, C, A, 0)),
                List.of(step(C, B, C, 0), step(B, C, B, 0)))) {
            assertThat(pin.verify(offered, signedBy(C), broken)).isEqualTo(stranger);
        }
        assertThat(pin.pinned()).contains((RSAPublicKey) A.getPublic());
    }

    @Test
    void followingAChainPinsTheNewKeyAndTrustsThePreviousOneForPublicationsUntilItsGraceEnds() throws Exception {
        MasterPin pin = pinnedTo(A);
        assertThat(pin.follow(List.of(step(A, B, C, 1_000)))).isInstanceOf(MasterSuccessions.Walk.Refused.class);
        assertThat(Files.readString(pki.resolve(MasterPin.FILE))).isEqualTo(Pem.publicKeySpki(A.getPublic()));

        long graceUntil = 10 * 60_000;
        assertThat(pin.follow(List.of(step(A, B, A, graceUntil)))).isInstanceOf(MasterSuccessions.Walk.Verified.class);
        assertThat(Files.readString(pki.resolve(MasterPin.FILE))).isEqualTo(Pem.publicKeySpki(B.getPublic()));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(pki.resolve(MasterPin.FILE))))
                .isEqualTo("rw-r--r--");
        assertThat(new MasterPin(pki, null).pinned()).contains((RSAPublicKey) B.getPublic());
        assertThat(pin.signedByMaster(signedBy(B), graceUntil + 3_600_000)).isTrue();
        assertThat(pin.signedByMaster(signedBy(A), graceUntil - 1)).isTrue();
        // Past the grace, and the clock skew allowed on top of it, the previous key signs nothing.
        assertThat(pin.signedByMaster(signedBy(A), graceUntil + 5 * 60_000)).isFalse();
        assertThat(pin.signedByMaster(signedBy(C), 0)).isFalse();
    }

    /** {@code next} succeeds {@code previous}, signed by {@code previous} (when given) and by {@code signing}. */
    private static MasterSuccession signedStep(KeyPair previous, KeyPair next, KeyPair signedBy, KeyPair signing) {
        byte[] bytes = MasterSuccessions.signedBytes(
                previous.getPublic().getEncoded(), next.getPublic().getEncoded(), 0, 0);
        return new MasterSuccession(
                previous.getPublic().getEncoded(),
                next.getPublic().getEncoded(),
                0,
                0,
                signedBy == null ? null : Rsa.sign(signedBy.getPrivate(), bytes),
                Rsa.sign(signing.getPrivate(), bytes));
    }

    private Path signingPub(String mode) throws Exception {
        Path file = pki.resolve("master_sign.pub");
        Files.writeString(file, Pem.publicKeySpki(SIGNING.getPublic()));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    @Test
    void withVerifyMasterPubkeySignOnlyASuccessionTheSigningKeySignedIsFollowed() throws Exception {
        Files.writeString(pki.resolve(MasterPin.FILE), Pem.publicKeySpki(A.getPublic()));
        MasterPin pin = new MasterPin(pki, null, Optional.of(MasterPin.readSigningKey(signingPub("rw-r--r--"))));
        byte[] offered = B.getPublic().getEncoded();
        MasterPin.Verdict stranger = pin.verify(offered, signedBy(B));

        // Signed by the previous key alone (what a stolen master key can make), or by another key than the signing
        // key: refused when shown in a session, and a reply showing it is a stranger's.
        for (MasterSuccession unsigned : List.of(step(A, B, A, 0), signedStep(A, B, A, C))) {
            assertThat(pin.follow(List.of(unsigned))).isInstanceOf(MasterSuccessions.Walk.Refused.class);
            assertThat(pin.verify(offered, signedBy(B), List.of(unsigned))).isEqualTo(stranger);
        }
        // Signed by the signing key and a bad previous-key signature: refused too.
        assertThat(pin.follow(List.of(signedStep(A, B, C, SIGNING))))
                .isInstanceOf(MasterSuccessions.Walk.Refused.class);
        assertThat(pin.pinned()).contains((RSAPublicKey) A.getPublic());

        // A compromised key replaced offline: the signing key's signature alone is enough.
        assertThat(pin.verify(offered, signedBy(B), List.of(signedStep(A, B, null, SIGNING))))
                .isEqualTo(new MasterPin.Verdict.Succeeded((RSAPublicKey) B.getPublic()));
        assertThat(pin.follow(List.of(signedStep(A, B, A, SIGNING))))
                .isInstanceOf(MasterSuccessions.Walk.Verified.class);
        assertThat(new MasterPin(pki, null).pinned()).contains((RSAPublicKey) B.getPublic());
    }

    @Test
    void theSigningKeysFileIsRefusedMissingWritableByOthersALinkOrNoPublicKey() throws Exception {
        Path file = pki.resolve("master_sign.pub");
        assertThatThrownBy(() -> MasterPin.readSigningKey(file)).hasMessageContaining("does not exist");
        signingPub("rw-rw-r--");
        assertThatThrownBy(() -> MasterPin.readSigningKey(file)).hasMessageContaining("writable by group or others");
        signingPub("rw-r--rw-");
        assertThatThrownBy(() -> MasterPin.readSigningKey(file)).hasMessageContaining("writable by group or others");
        Files.delete(file);
        Path elsewhere = Files.writeString(pki.resolve("elsewhere.pub"), Pem.publicKeySpki(SIGNING.getPublic()));
        Files.createSymbolicLink(file, elsewhere);
        assertThatThrownBy(() -> MasterPin.readSigningKey(file)).hasMessageContaining("symbolic link");
        Files.delete(file);
        Files.writeString(file, Pem.privateKeyPkcs1(SIGNING.getPrivate()));
        assertThatThrownBy(() -> MasterPin.readSigningKey(file)).hasMessageContaining("private key");
        assertThat(MasterPin.readSigningKey(signingPub("r--r--r--"))).isEqualTo(SIGNING.getPublic());
    }
}
