package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.files.AtomicFiles;
import io.brine.minion.auth.MasterPin;
import io.brine.minion.auth.MinionKeyring;
import io.brine.minion.auth.MinionKeys;
import io.brine.protocol.codec.KeyRotations;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.message.SessionMessage.KeyRotate;
import io.brine.protocol.message.SessionMessage.KeyRotateReply;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KeyRotationTest {

    private static final Instant MADE = Instant.parse("2026-01-01T00:00:00Z");
    private static final Duration MAX_AGE = Duration.ofDays(90);
    private static final KeyPair MASTER = TestKeys.pair(0);
    private static final KeyPair NEW = TestKeys.pair(102);
    private static final byte[] SESSION = new byte[16];

    @TempDir
    Path pkiDir;

    private final MovableClock clock = new MovableClock(MADE);

    private MinionKeyring keyring;

    private KeyRotation rotation(Optional<Duration> maxAge) throws Exception {
        Path pem = pkiDir.resolve(MinionKeys.PRIVATE_FILE);
        AtomicFiles.write(pem, Pem.bytes(TestKeys.privatePem(MinionFixture.MINION_KEY)), AtomicFiles.OWNER_READ);
        Files.setLastModifiedTime(pem, FileTime.from(MADE));
        keyring = MinionKeyring.load(pkiDir, 2048);
        MasterPin pin = new MasterPin(pkiDir, null);
        pin.pin((RSAPublicKey) MASTER.getPublic());
        return new KeyRotation(
                "web1", keyring, pin, new StatusFile("web1", null, clock, "fp"), 2048, clock, maxAge, Runnable::run);
    }

    @Test
    void aKeyIsDueOnlyWhenOlderThanKeyMaxAge() throws Exception {
        KeyRotation rotation = rotation(Optional.of(MAX_AGE));
        clock.set(MADE.plus(MAX_AGE));
        assertThat(rotation.dueByAge()).as("exactly key_max_age old").isFalse();
        clock.advance(Duration.ofSeconds(1));
        assertThat(rotation.dueByAge()).as("one second older").isTrue();
    }

    @Test
    void withoutKeyMaxAgeAKeyIsNeverRotatedByAge() throws Exception {
        KeyRotation rotation = rotation(Optional.empty());
        clock.set(MADE.plus(Duration.ofDays(3650)));
        assertThat(rotation.dueByAge()).isFalse();
    }

    private String currentFingerprint() {
        return Fingerprints.of(keyring.current().getPublic());
    }

    /** The master asked for the current key; the minion made {@link #NEW} and sent its first request. */
    private KeyRotate askedOnce(KeyRotation rotation, CompletableFuture<KeyRotation.Result> waiting) {
        assertThat(rotation.dueByAsk(currentFingerprint())).isTrue();
        assertThat(rotation.needsKey()).isTrue();
        assertThat(rotation.keyMade(NEW, null, waiting)).isTrue();
        return rotation.request(SESSION, waiting);
    }

    private static KeyRotateReply rotated(String reason) {
        KeyRotateReply unsigned =
                new KeyRotateReply(true, Fingerprints.of(NEW.getPublic()), reason, new byte[0], false);
        return new KeyRotateReply(
                true,
                unsigned.newFingerprint(),
                reason,
                Rsa.sign(MASTER.getPrivate(), KeyRotations.reply(SESSION, unsigned)),
                false);
    }

    @Test
    void aRequestTheMasterLeftUnansweredIsSentAgainForTheSameNewKeyWhenAskedPastTheBoundOnly() throws Exception {
        KeyRotation rotation = rotation(Optional.empty());
        KeyRotate first = askedOnce(rotation, new CompletableFuture<>());

        clock.advance(KeyRotation.RESEND_AFTER.minusSeconds(1));
        assertThat(rotation.dueByAsk(currentFingerprint()))
                .as("asked again within the bound")
                .isFalse();
        clock.advance(Duration.ofSeconds(1));
        assertThat(rotation.dueByAsk(currentFingerprint()))
                .as("asked again at the bound")
                .isTrue();
        assertThat(rotation.needsKey()).as("never a new key pair").isFalse();
        KeyRotate second = rotation.request(SESSION, new CompletableFuture<>());

        assertThat(second.newKey())
                .isEqualTo(first.newKey())
                .isEqualTo(NEW.getPublic().getEncoded());
        assertThat(rotation.dueByAsk(currentFingerprint()))
                .as("the bound counts from the last request")
                .isFalse();
    }

    @Test
    void aLateAnswerToTheFirstRequestAfterTheResendRotatesOnceAndAnswersBothWaiting() throws Exception {
        KeyRotation rotation = rotation(Optional.empty());
        CompletableFuture<KeyRotation.Result> firstWaiting = new CompletableFuture<>();
        askedOnce(rotation, firstWaiting);
        clock.advance(KeyRotation.RESEND_AFTER);
        String old = currentFingerprint();
        assertThat(rotation.dueByAsk(old)).isTrue();
        CompletableFuture<KeyRotation.Result> secondWaiting = new CompletableFuture<>();
        rotation.request(SESSION, secondWaiting);

        rotation.onReply(SESSION, rotated("key rotated by the minion"));
        // The second request's answer: the master holds the new key already (KeyTransitions.planRotation).
        rotation.onReply(SESSION, rotated("the new key is already the accepted key"));

        String fingerprint = Fingerprints.of(NEW.getPublic());
        assertThat(currentFingerprint()).isEqualTo(fingerprint);
        assertThat(keyring.candidate()).isEmpty();
        assertThat(firstWaiting)
                .isCompletedWithValue(new KeyRotation.Result(true, fingerprint, "key rotated by the minion"));
        assertThat(secondWaiting).isCompletedWithValue(firstWaiting.join());
        assertThat(MinionKeyring.load(pkiDir, 2048).current().getPublic()).isEqualTo(NEW.getPublic());
        assertThat(rotation.dueByAsk(old))
                .as("the old key is not the current one")
                .isFalse();
    }
}
