package io.brine.master.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.brine.daemon.CrashPoints;
import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.master.session.MinionSession;
import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.KeyRotations;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.message.SessionMessage.KeyRotate;
import io.brine.protocol.message.SessionMessage.KeyRotateAsk;
import io.brine.protocol.message.SessionMessage.KeyRotateReply;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.RotationDecision;
import java.io.UncheckedIOException;
import java.security.PrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A minion's key rotation over its session (PROTOCOL.md 6.3): the request must be signed by the key the session was
 * opened with and by the new key, over bytes bound to this session; the new key gets every check an offered key gets
 * and {@link KeyStore#rotate} decides and writes (one atomic change, audited with both fingerprints). The answer is
 * signed by the master's key: one private-key operation per rotation, paid at most once per {@link #INTERVAL} per
 * minion (a request sooner is dropped unanswered). Runs on an auth worker: it signs and writes.
 */
public final class KeyRotationService {

    /** One answered rotation request per minion per this interval (PROTOCOL.md §10.1). */
    public static final Duration INTERVAL = Duration.ofMinutes(1);

    private static final Logger LOG = LoggerFactory.getLogger(KeyRotationService.class);

    /** Told of every answered request, for metrics and {@code brine events}. */
    @FunctionalInterface
    public interface Outcomes {
        /** @param result rotated, pending (waits for an admin) or refused */
        void answered(String id, String result, String newFingerprint, String reason);
    }

    private final KeyStore keyStore;
    private final Supplier<PrivateKey> masterKey;
    private final KeyRotationPolicy policy;
    private final Cache<String, Boolean> recent;
    private final Outcomes outcomes;

    /** {@code masterKey} signs the answers: a rotated master's previous key within its grace (PROTOCOL.md 6.4). */
    public KeyRotationService(
            KeyStore keyStore,
            Supplier<PrivateKey> masterKey,
            KeyRotationPolicy policy,
            Ticker ticker,
            Outcomes outcomes) {
        this.outcomes = outcomes;
        this.keyStore = keyStore;
        this.masterKey = masterKey;
        this.policy = policy;
        this.recent = Caffeine.newBuilder()
                .expireAfterWrite(INTERVAL)
                .ticker(ticker)
                .maximumSize(1_000_000)
                .build();
    }

    /**
     * What to send after the answer to {@code session}'s heartbeat when an admin asked its minion to rotate its
     * accepted key ({@code brine-key --rotate-keys}, PROTOCOL.md 6.3): a {@link KeyRotateAsk} naming that key, while
     * it is the accepted key; nothing while a request of the minion's was answered within {@link #INTERVAL} (it
     * would be dropped). From memory: asked at every heartbeat.
     */
    public Optional<KeyRotateAsk> ask(MinionSession session) {
        String id = session.minionId();
        return keyStore.rotationAsked(id)
                .filter(fingerprint -> recent.getIfPresent(id) == null)
                .map(KeyRotateAsk::new);
    }

    /**
     * The signed answer to {@code request} from {@code session}'s minion; empty when the minion already had an answer
     * within {@link #INTERVAL} (the caller drops the request and says so), or when the key store cannot say whether
     * it recorded the rotation (logged here; the next request is answered from what the store holds).
     */
    public Optional<KeyRotateReply> rotate(MinionSession session, KeyRotate request) {
        String id = session.minionId();
        if (recent.asMap().putIfAbsent(id, Boolean.TRUE) != null) {
            return Optional.empty();
        }
        byte[] sessionId = session.sessionId().bytes();
        RSAPublicKey newKey;
        try {
            newKey = RsaKeys.offeredKeyFromDer(request.newKey());
        } catch (KeyFormatException e) {
            return Optional.of(answer(session, false, "-", "the new key is not usable: " + e.getMessage()));
        }
        // The session's key: the one it opened with, or the one a rotation in it committed. A request for that very
        // key is one sent again after a rotation in this session whose answer the minion did not have yet, signed by
        // the key the rotation replaced: judged as such, the store answers it rotated (never a refusal that would make
        // the minion drop the key the master now holds).
        RSAPublicKey oldKey = session.publicKey();
        if (Arrays.equals(request.newKey(), oldKey.getEncoded())
                && session.rotatedFrom().isPresent()) {
            oldKey = session.rotatedFrom().get();
        }
        String newFingerprint = Fingerprints.of(newKey);
        byte[] signed = KeyRotations.request(sessionId, id, oldKey.getEncoded(), request.newKey());
        boolean byOld = Rsa.verify(oldKey, signed, request.oldSignature());
        boolean byNew = Rsa.verify(newKey, signed, request.newSignature());
        if (!byOld || !byNew) {
            String reason = "the request is not signed by "
                    + (byOld ? "the new key" : byNew ? "the old (accepted) key" : "either key");
            return Optional.of(answer(session, false, newFingerprint, reason));
        }
        CrashPoints.reach("master-rotation-checked");
        RotationDecision decision = null;
        session.rotating(newKey);
        try {
            decision = keyStore.rotate(id, oldKey, newKey, policy, "minion " + id);
        } catch (IllegalArgumentException e) {
            String reason =
                    e.getMessage().startsWith(id + ": ") ? e.getMessage().substring(id.length() + 2) : e.getMessage();
            return Optional.of(answer(session, false, newFingerprint, "the new key is not usable: " + reason));
        } catch (UncheckedIOException e) {
            // Whether the store holds the new key is not known (a write that failed half way, a cluster connection
            // lost during its commit): a refusal would make the minion drop a key the store may hold now, and lock
            // it out. Not answered, as if the answer were lost (PROTOCOL.md 6.3): the minion keeps both keys and its
            // next sign-in tries the new key first, then the old one; a request it sends again is answered from what
            // the store holds then (an id already on the new key: rotated).
            LOG.warn(
                    "Minion {}: key rotation not answered: the key store could not say whether it was recorded"
                            + " ({}); the minion's next sign-in tries the new key first",
                    MinionIds.printable(id),
                    e.getMessage());
            recent.invalidate(id);
            return Optional.empty();
        } finally {
            // Rotated: the session's accepted key is the new one from now on, before its answer is sent, so that the
            // ticket the minion then asks for names the new key (PROTOCOL.md 8.9), a publish key rotation does not
            // take the session for a removed key's, and a later rotation in it is signed by the new key.
            session.rotationDecided(decision instanceof RotationDecision.Rotated);
        }
        CrashPoints.reach("master-rotation-stored");
        // Java 17: no pattern switch; RotationDecision is sealed to these three.
        if (decision instanceof RotationDecision.Rotated rotated) {
            return Optional.of(answer(session, true, rotated.newFingerprint(), rotated.reason()));
        }
        if (decision instanceof RotationDecision.Pending pending) {
            return Optional.of(answer(session, Outcome.PENDING, pending.newFingerprint(), pending.reason()));
        }
        return Optional.of(
                answer(session, false, ((RotationDecision.Refused) decision).newFingerprint(), decision.reason()));
    }

    private enum Outcome {
        ROTATED,
        PENDING,
        REFUSED;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private KeyRotateReply answer(MinionSession session, boolean rotated, String newFingerprint, String reason) {
        return answer(session, rotated ? Outcome.ROTATED : Outcome.REFUSED, newFingerprint, reason);
    }

    private KeyRotateReply answer(MinionSession session, Outcome outcome, String newFingerprint, String reason) {
        switch (outcome) {
            case ROTATED -> LOG.info("Minion {}: key rotated to {} ({})", session.minionId(), newFingerprint, reason);
            case PENDING ->
                LOG.info(
                        "Minion {}: key rotation to {} waits for an admin: brine-key -a {} -f {}",
                        session.minionId(),
                        newFingerprint,
                        session.minionId(),
                        newFingerprint);
            case REFUSED ->
                LOG.info("Minion {}: key rotation to {} refused: {}", session.minionId(), newFingerprint, reason);
        }
        outcomes.answered(session.minionId(), outcome.label(), newFingerprint, reason);
        KeyRotateReply unsigned = new KeyRotateReply(
                outcome == Outcome.ROTATED, newFingerprint, reason, new byte[0], outcome == Outcome.PENDING);
        byte[] signature =
                Rsa.sign(masterKey.get(), KeyRotations.reply(session.sessionId().bytes(), unsigned));
        return new KeyRotateReply(unsigned.rotated(), newFingerprint, reason, signature, unsigned.pending());
    }
}
