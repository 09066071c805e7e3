package io.brine.minion;

import io.brine.daemon.CrashPoints;
import io.brine.minion.auth.MasterPin;
import io.brine.minion.auth.MinionKeyring;
import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.KeyRotations;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.message.SessionMessage.KeyRotate;
import io.brine.protocol.message.SessionMessage.KeyRotateReply;
import java.io.IOException;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The minion's side of a key rotation (PROTOCOL.md 6.3): writes the new key beside the old ({@link MinionKeyring}),
 * asks over the open session with a request signed by both, and switches keys only on the pinned master's signed
 * answer. A refusal drops the new key; no answer leaves it for the next auth to try first, and a request left
 * unanswered by a lost session is asked again in the next one (and one a busy master dropped, at its ask {@link
 * #RESEND_AFTER} later). Confined to the event thread, except the making of
 * the new key pair (seconds of CPU for 4096 bits), which runs on {@code keyMaker} and hands the pair back.
 */
public final class KeyRotation {

    /** What became of a rotation, for {@code brine-minion --rotate-key}. */
    /** @param pending the new key waits for an admin on the master ({@code key_rotation: pending}) */
    public record Result(boolean rotated, String fingerprint, String reason, boolean pending) {

        public Result(boolean rotated, String fingerprint, String reason) {
            this(rotated, fingerprint, reason, false);
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(KeyRotation.class);
    static final Duration AGE_RETRY = Duration.ofHours(1);
    /**
     * How often a minion whose new key waits for an admin asks again, at heartbeat answers: the master answers one
     * request a minute per minion (PROTOCOL.md 10.1), and drops one sooner unanswered, which this asks again.
     */
    static final Duration PENDING_POLL = Duration.ofMinutes(2);
    /** A request the master asked for and left unanswered is sent again this long after (PROTOCOL.md 6.3). */
    static final Duration RESEND_AFTER = KeyRotations.RESEND_AFTER;

    private final String id;
    private final MinionKeyring keyring;
    private final MasterPin pin;
    private final StatusFile status;
    private final int keysize;
    private final Clock clock;
    /** {@code key_max_age}: the minion asks for a rotation when its key is older; empty: never by itself. */
    private final Optional<Duration> maxAge;

    private final Executor keyMaker;
    /**
     * When the minion last asked, by itself or on {@code --rotate-key}: it asks by age an hour later at the soonest,
     * whatever the answer, or none (a session lost meanwhile leaves no answer to wait for).
     */
    private Instant askedAt;
    /** The outstanding request's session id, and who waits for its answer; null when none is outstanding. */
    private byte[] askedIn;
    /** The public key the outstanding request asks for (X.509 encoding). */
    private byte[] askedFor;

    private CompletableFuture<Result> waiting;
    /** When the master last refused a rotation: a master's ask is followed again an hour later at the soonest. */
    private Instant refusedAt;

    KeyRotation(
            String id,
            MinionKeyring keyring,
            MasterPin pin,
            StatusFile status,
            int keysize,
            Clock clock,
            Optional<Duration> maxAge,
            Executor keyMaker) {
        this.id = id;
        this.keyring = keyring;
        this.pin = pin;
        this.status = status;
        this.keysize = keysize;
        this.clock = clock;
        this.maxAge = maxAge;
        this.keyMaker = keyMaker;
    }

    /** Makes each new key pair on a thread of its own: rotations are rare, and the event thread must not wait. */
    static final Executor OWN_THREAD = task -> {
        Thread thread = new Thread(task, "brine-minion-keygen");
        thread.setDaemon(true);
        thread.start();
    };

    /**
     * Whether the current key is older than {@code key_max_age} and the minion should ask for a rotation now: an
     * hour after the last request at the soonest (a master that refuses, or does not answer, is not asked at every
     * heartbeat).
     */
    boolean dueByAge() {
        if (maxAge.isEmpty()) {
            return false;
        }
        Instant now = clock.instant();
        if (askedAt != null && now.isBefore(askedAt.plus(AGE_RETRY))) {
            return false;
        }
        Optional<Instant> created = keyring.createdAt();
        if (created.isEmpty() || !now.isAfter(created.get().plus(maxAge.get()))) {
            return false;
        }
        LOG.info(
                "Minion {}: key made {} is older than key_max_age ({} s): asking the master to rotate it",
                id,
                created.get(),
                maxAge.get().toSeconds());
        return true;
    }

    /**
     * Whether the new key waits for an admin on the master and the minion should ask again now (the answer says
     * rotated, pending or refused): when a session opens and at heartbeat answers, {@link #PENDING_POLL} after the
     * last ask at the soonest, answered or not.
     */
    boolean pollDue() {
        return keyring.candidatePending()
                && (askedAt == null || !clock.instant().isBefore(askedAt.plus(PENDING_POLL)));
    }

    /**
     * Whether to ask for a rotation now because the master asked for one of the key {@code fingerprint} (an admin's
     * {@code brine-key --rotate-keys}; the master asks at each heartbeat until the key changes): only when that is the
     * current key, no request is outstanding (or the one outstanding is {@link #RESEND_AFTER} old: the master dropped
     * it, and it is sent again for the same new key), and the last one the master asked for was not refused within
     * {@link #AGE_RETRY} (a master that refuses is not asked at every heartbeat). A new key waiting for an admin is
     * asked about by {@link #pollDue} instead.
     */
    boolean dueByAsk(String fingerprint) {
        if (keyring.candidatePending()
                || !fingerprint.equals(Fingerprints.of(keyring.current().getPublic()))) {
            return false;
        }
        if (askedIn != null) {
            return resendDue();
        }
        if (refusedAt != null && clock.instant().isBefore(refusedAt.plus(AGE_RETRY))) {
            return false;
        }
        LOG.info(
                "Minion {}: the master asks this minion to rotate its key {} (brine-key --rotate-keys)",
                id,
                fingerprint);
        return true;
    }

    /**
     * Whether the outstanding request is {@link #RESEND_AFTER} old and is to be sent again: its new key is still the
     * one beside the current key (never a new key pair), and either answer is taken ({@link #onReply}).
     */
    private boolean resendDue() {
        Optional<KeyPair> candidate = keyring.candidate();
        if (candidate.isEmpty()
                || !Arrays.equals(askedFor, candidate.get().getPublic().getEncoded())
                || clock.instant().isBefore(askedAt.plus(RESEND_AFTER))) {
            return false;
        }
        LOG.info(
                "Minion {}: the master asks again to rotate this minion's key and its request of {} s ago has no"
                        + " answer (dropped by a busy master?): asking again for the same new key {}",
                id,
                Duration.between(askedAt, clock.instant()).toSeconds(),
                Fingerprints.of(candidate.get().getPublic()));
        return true;
    }

    /** Whether a request needs a new key pair made first ({@link #makeKey}): none is left from an earlier one. */
    boolean needsKey() {
        return keyring.candidate().isEmpty();
    }

    /** Makes a new key pair on {@code keyMaker}; the caller hands it back to the event thread ({@link #keyMade}). */
    CompletableFuture<KeyPair> makeKey() {
        return CompletableFuture.supplyAsync(() -> RsaKeys.generate(keysize), keyMaker);
    }

    /**
     * A key pair {@link #makeKey} made (or its failure), back on the event thread: written beside the current key.
     * False, with {@code result} completed, when it cannot be made or written.
     */
    boolean keyMade(KeyPair fresh, Throwable failure, CompletableFuture<Result> result) {
        try {
            if (failure != null) {
                throw new IOException(failure.getMessage(), failure);
            }
            keyring.adoptCandidate(fresh);
            return true;
        } catch (IOException e) {
            LOG.error("Minion {}: cannot write the new key for a rotation: {}", id, e.getMessage());
            result.complete(new Result(false, null, "cannot write the new key: " + e.getMessage()));
            return false;
        }
    }

    /**
     * The request to send in session {@code sessionId}, signed by the current key and the new one ({@link #keyMade},
     * or the one an unanswered rotation left). Sent again while one is outstanding ({@link #resendDue}), whoever
     * waits for the first answer gets this one's.
     */
    KeyRotate request(byte[] sessionId, CompletableFuture<Result> result) {
        KeyPair next = keyring.candidate().orElseThrow();
        CrashPoints.reach("minion-rotation-key-written");
        keyring.candidateAsked();
        KeyRotate request = KeyRotations.signedRequest(sessionId, id, keyring.current(), next);
        CompletableFuture<Result> earlier = askedIn == null ? null : waiting;
        if (earlier != null && earlier != result) {
            result.whenComplete((answer, failure) -> earlier.complete(answer));
        }
        askedIn = sessionId.clone();
        askedFor = request.newKey();
        askedAt = clock.instant();
        waiting = result;
        LOG.info(
                "Minion {}: asking the master to rotate this minion's key to {}",
                id,
                Fingerprints.of(next.getPublic()));
        return request;
    }

    /**
     * A session opened: a request asked in an earlier one gets no answer (the session it was bound to is gone). When
     * the auth that opened this one was accepted with the new key, the master rotated and only its answer was lost:
     * the rotation is done. Otherwise the caller asks again (what this returns, to complete with the answer).
     */
    Optional<CompletableFuture<Result>> sessionOpened(byte[] sessionId) {
        if (askedIn == null || Arrays.equals(askedIn, sessionId)) {
            return Optional.empty();
        }
        askedIn = null;
        CompletableFuture<Result> left = waiting == null ? new CompletableFuture<>() : waiting;
        waiting = null;
        if (Arrays.equals(askedFor, keyring.current().getPublic().getEncoded())) {
            left.complete(new Result(
                    true, Fingerprints.of(keyring.current().getPublic()), "accepted by the master at sign-in"));
            return Optional.empty();
        }
        LOG.info("Minion {}: the session ended before the master answered the key rotation; asking again", id);
        return Optional.of(left);
    }

    /** Whether {@code reply} says what an earlier answer did: rotated to the current key, or pending for the new one. */
    private boolean answeredAlready(KeyRotateReply reply) {
        if (reply.rotated()) {
            return Fingerprints.of(keyring.current().getPublic()).equals(reply.newFingerprint());
        }
        return reply.pending()
                && keyring.candidatePending()
                && Fingerprints.of(keyring.candidate().orElseThrow().getPublic())
                        .equals(reply.newFingerprint());
    }

    /**
     * The master's answer, in session {@code sessionId}: believed only when the pinned master key signed it.
     *
     * @return whether the minion switched to the new key (the caller then gives up the resumption ticket, which names
     *     the old key, and asks for one for the new key)
     */
    boolean onReply(byte[] sessionId, KeyRotateReply reply) {
        Optional<RSAPublicKey> master = pin.pinned();
        KeyPair candidate = keyring.candidate().orElse(null);
        if (askedIn == null
                && answeredAlready(reply)
                && master.isPresent()
                && pin.signedByMaster(key -> KeyRotations.signedBy(key, sessionId, reply), clock.millis())) {
            // The second answer to a request sent again (resendDue): the first one's said so already.
            LOG.debug("Minion {}: key rotation to {} answered again, as before", id, reply.newFingerprint());
            return false;
        }
        if (askedIn == null
                || candidate == null
                || master.isEmpty()
                || !Arrays.equals(askedIn, sessionId)
                || !pin.signedByMaster(key -> KeyRotations.signedBy(key, sessionId, reply), clock.millis())) {
            LOG.warn(
                    "Minion {}: key rotation answer dropped: not an answer to this minion's request signed by the"
                            + " pinned master key",
                    id);
            return false;
        }
        askedIn = null;
        CrashPoints.reach("minion-rotation-answered");
        String fingerprint = Fingerprints.of(candidate.getPublic());
        Result result;
        boolean switched = false;
        try {
            if (reply.pending() && fingerprint.equals(reply.newFingerprint())) {
                // The old key stays accepted and in use; the new one is kept for the admin's word.
                LOG.info(
                        "Minion {}: key rotation to {} waits for an admin on the master (brine-key -a {} -f {});"
                                + " asking again at the next heartbeats",
                        id,
                        fingerprint,
                        id,
                        fingerprint);
                keyring.markCandidatePending();
                result = new Result(false, fingerprint, reply.reason(), true);
            } else if (reply.rotated() && fingerprint.equals(reply.newFingerprint())) {
                keyring.promote(candidate);
                switched = true;
                status.fingerprint(fingerprint);
                result = new Result(true, fingerprint, reply.reason());
            } else {
                LOG.warn("Minion {}: key rotation refused by the master: {}", id, MinionIds.printable(reply.reason()));
                keyring.discardCandidate();
                result = new Result(false, fingerprint, reply.reason());
                refusedAt = clock.instant();
            }
        } catch (IOException e) {
            // The master holds the new key; the next auth offers it first and promotes it then.
            LOG.error(
                    "Minion {}: the master rotated this minion's key but it cannot be switched here: {}",
                    id,
                    e.getMessage());
            result = new Result(false, fingerprint, "rotated by the master, not switched here: " + e.getMessage());
        }
        CompletableFuture<Result> done = waiting;
        waiting = null;
        if (done != null) {
            done.complete(result);
        }
        return switched;
    }
}
