package io.brine.protocol.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.codec.MasterSuccessions.Walk;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.TestKeys;
import java.security.KeyPair;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The master key's succession records (PROTOCOL.md 6.4): what a minion accepts from its pin, and every chain it
 * refuses as it refuses a stranger (a bad signature, a gap, a loop, a pin outside the chain, the signing key missing).
 */
class MasterSuccessionsTest {

    private static final KeyPair A = TestKeys.pair(40);
    private static final KeyPair B = TestKeys.pair(41);
    private static final KeyPair C = TestKeys.pair(42);
    private static final KeyPair D = TestKeys.pair(43);
    private static final KeyPair SIGNING = TestKeys.pair(44);
    private static final Optional<PublicKey> NO_SIGNING_KEY = Optional.empty();

    /** {@code next} succeeds {@code previous}, signed by {@code previous} and by {@code signing} when given. */
    private static MasterSuccession step(KeyPair previous, KeyPair next, KeyPair signedBy, KeyPair signing) {
        byte[] bytes = MasterSuccessions.signedBytes(
                previous.getPublic().getEncoded(), next.getPublic().getEncoded(), 1_000, 2_000);
        return new MasterSuccession(
                previous.getPublic().getEncoded(),
                next.getPublic().getEncoded(),
                1_000,
                2_000,
                signedBy == null ? null : Rsa.sign(signedBy.getPrivate(), bytes),
                signing == null ? null : Rsa.sign(signing.getPrivate(), bytes));
    }

    private static MasterSuccession step(KeyPair previous, KeyPair next) {
        return step(previous, next, previous, null);
    }

    private static RSAPublicKey pub(KeyPair pair) {
        return (RSAPublicKey) pair.getPublic();
    }

    private static String refusal(Walk walk) {
        assertThat(walk).isInstanceOf(Walk.Refused.class);
        return ((Walk.Refused) walk).reason();
    }

    @Test
    void aMinionPinnedAnywhereOnTheChainIsLedToTheNewestKey() {
        List<MasterSuccession> chain = List.of(step(A, B), step(B, C), step(C, D));
        assertThat(MasterSuccessions.walk(pub(A), chain, NO_SIGNING_KEY))
                .isEqualTo(new Walk.Verified(pub(D), chain.get(2)));
        assertThat(((Walk.Verified) MasterSuccessions.walk(pub(C), chain, NO_SIGNING_KEY)).newest())
                .isEqualTo(pub(D));
    }

    @Test
    void aRecordNotSignedByThePreviousKeyIsRefused() {
        MasterSuccession forged = step(B, C, D, null); // the attacker's own key signed it
        assertThat(refusal(MasterSuccessions.walk(pub(A), List.of(step(A, B), forged), NO_SIGNING_KEY)))
                .contains("record 2")
                .contains("bad signature");
        MasterSuccession good = step(A, B);
        byte[] damaged = good.previousSignature();
        damaged[7] ^= 1;
        assertThat(refusal(MasterSuccessions.walk(
                        pub(A),
                        List.of(new MasterSuccession(
                                good.previousKey(),
                                good.nextKey(),
                                good.issuedMs(),
                                good.graceUntilMs(),
                                damaged,
                                null)),
                        NO_SIGNING_KEY)))
                .contains("bad signature");
        // The grace is signed too: stretching it breaks the signature.
        assertThat(refusal(MasterSuccessions.walk(
                        pub(A),
                        List.of(new MasterSuccession(
                                good.previousKey(),
                                good.nextKey(),
                                good.issuedMs(),
                                good.graceUntilMs() + 1,
                                good.previousSignature(),
                                null)),
                        NO_SIGNING_KEY)))
                .contains("bad signature");
    }

    @Test
    void aChainWithAGapIsRefused() {
        assertThat(refusal(MasterSuccessions.walk(pub(A), List.of(step(A, B), step(C, D)), NO_SIGNING_KEY)))
                .contains("gap at record 2");
    }

    @Test
    void aChainThatLoopsIsRefused() {
        assertThat(refusal(MasterSuccessions.walk(pub(A), List.of(step(A, B), step(B, A)), NO_SIGNING_KEY)))
                .contains("loops at record 2");
        assertThat(refusal(MasterSuccessions.walk(pub(A), List.of(step(A, B), step(B, C), step(C, B)), NO_SIGNING_KEY)))
                .contains("loops at record 3");
    }

    @Test
    void aPinOutsideTheChainIsRefused() {
        assertThat(refusal(MasterSuccessions.walk(pub(D), List.of(step(A, B), step(B, C)), NO_SIGNING_KEY)))
                .contains("outside");
        // The newest key alone is no record's previous key: nothing to walk, and nothing to follow either.
        assertThat(refusal(MasterSuccessions.walk(pub(C), List.of(step(A, B), step(B, C)), NO_SIGNING_KEY)))
                .contains("outside");
    }

    @Test
    void withASigningKeyEveryStepMustBeSignedByItAndACompromisedKeyIsReplacedByItAlone() {
        Optional<PublicKey> signing = Optional.of(SIGNING.getPublic());
        assertThat(refusal(MasterSuccessions.walk(pub(A), List.of(step(A, B)), signing)))
                .contains("not signed by the master signing key");
        assertThat(MasterSuccessions.walk(pub(A), List.of(step(A, B, A, SIGNING)), signing))
                .isInstanceOf(Walk.Verified.class);
        // A's key was stolen: B is signed offline only, and A's signature is not needed (nor trusted).
        assertThat(MasterSuccessions.walk(pub(A), List.of(step(A, B, null, SIGNING)), signing))
                .isInstanceOf(Walk.Verified.class);
        // Without the signing key configured, a record the previous key did not sign is refused.
        assertThat(refusal(MasterSuccessions.walk(pub(A), List.of(step(A, B, null, SIGNING)), NO_SIGNING_KEY)))
                .contains("bad signature");
        // Signed by another key than the configured signing key.
        assertThat(refusal(MasterSuccessions.walk(pub(A), List.of(step(A, B, A, D)), signing)))
                .contains("not signed by the master signing key");
    }

    @Test
    void aChainRoundTripsAndOnePastItsBoundIsMalformed() throws Exception {
        List<MasterSuccession> chain = new ArrayList<>(Collections.nCopies(MasterSuccessions.MAX_CHAIN, step(A, B)));
        assertThat(MasterSuccessions.decodeChain(MasterSuccessions.encodeChain(chain)))
                .isEqualTo(chain);
        chain.add(step(A, B));
        assertThatThrownBy(() -> MasterSuccessions.encodeChain(chain)).isInstanceOf(IllegalArgumentException.class);
        MsgWriter out = new MsgWriter().array(MasterSuccessions.MAX_CHAIN + 1);
        assertThatThrownBy(() -> MasterSuccessions.decodeChain(out.toByteArray()))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("more than 16");
        MsgWriter unsigned = new MsgWriter()
                .array(1)
                .array(6)
                .bin("p", A.getPublic().getEncoded())
                .bin("n", B.getPublic().getEncoded())
                .integer(1)
                .integer(2)
                .nil()
                .nil();
        assertThatThrownBy(() -> MasterSuccessions.decodeChain(unsigned.toByteArray()))
                .isInstanceOf(MalformedException.class)
                .hasMessageContaining("signed by neither");
    }

    @Test
    void anAuthReplyCarriesTheChainAsANinthFieldOnlyWhenThereIsOne() {
        AuthReply plain = new AuthReply(
                Suite.RSA_OAEP_PSS_AES256GCM,
                AuthStatus.PENDING,
                new byte[32],
                5,
                A.getPublic().getEncoded(),
                "pending",
                0,
                null);
        byte[] plainFrame = Codec.encodeSigned(plain, A.getPrivate());
        AuthReply decoded =
                (AuthReply) ((Decoded.Ok) Codec.decode(plainFrame, FrameLimits.MAX_UNAUTHENTICATED)).message();
        assertThat(decoded.masterChain()).isEmpty();
        assertThat(((Decoded.Ok) Codec.decode(plainFrame, FrameLimits.MAX_UNAUTHENTICATED)).signedPayload()[0] & 0xff)
                .isEqualTo(0x98); // an array of 8, as before any rotation
        List<MasterSuccession> chain = List.of(step(A, B), step(B, C));
        AuthReply rotated = new AuthReply(
                Suite.RSA_OAEP_PSS_AES256GCM,
                AuthStatus.PENDING,
                new byte[32],
                5,
                C.getPublic().getEncoded(),
                "pending",
                0,
                null,
                chain);
        byte[] frame = Codec.encodeSigned(rotated, C.getPrivate());
        assertThat(((Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_UNAUTHENTICATED)).signedPayload()[0] & 0xff)
                .isEqualTo(0x99);
        assertThat(((AuthReply) ((Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_UNAUTHENTICATED)).message())
                        .masterChain())
                .isEqualTo(chain);
        assertThat(Sessions.direction(new SessionMessage.MasterKeySuccession(chain)))
                .isEqualTo(SessionFrame.Direction.MASTER_TO_MINION);
        assertThat(Codec.encodeInner(new SessionMessage.MasterKeySuccession(chain)))
                .isNotEmpty();
    }
}
