package io.brine.minion;

import io.brine.minion.auth.Backoff;
import io.brine.minion.auth.MasterPin;
import io.brine.minion.auth.MinionKeyring;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.codec.Signed;
import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.Suite;
import io.brine.transport.ClientTransport;
import java.io.IOException;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The minion's side of the auth handshake (PROTOCOL.md 8.2): sends auth requests with fresh nonces, waits
 * {@code auth_timeout} for an answer, authenticates the answer against the master pin, and asks again after the
 * back-off ({@code acceptance_wait_time}) or the master's {@code retryAfterSeconds}. It owns the status transitions
 * of everything before a session (connecting, pending, denied, rejected, master key mismatch); an accepted reply is
 * handed back as {@link Accepted} for {@link Minion} to open the session with.
 *
 * <p>Confined to the minion's event thread ({@link Scheduler}); its waits are timers on it.
 */
final class Handshake {

    private static final Logger LOG = LoggerFactory.getLogger(Handshake.class);
    /** After a lost session, re-auths are spread over this much, so that a restarted master is not stormed. */
    private static final int REAUTH_SPREAD_MS = 2000;
    /** When a connection comes back after failed tries, the first request is spread over this much. */
    private static final int RECONNECT_SPREAD_MS = 1000;
    /**
     * A rejection the minion cannot authenticate (first use, no master_finger) is asked again this many times later
     * than the back-off: it may be forged, so it does not stop the minion, but it is most likely real.
     */
    static final int UNVERIFIED_REJECTION_FACTOR = 4;

    /** What an auth reply leaves for {@link Minion} to do. */
    sealed interface Outcome {}

    /** Accepted (by a full auth, or resumed with a ticket): open the session with these keys. */
    record Accepted(
            byte[] sessionId,
            long generation,
            int publishPort,
            long serialFloor,
            SessionKey publishKey,
            SessionKey requestKey,
            boolean resumed)
            implements Outcome {
        @Override
        public String toString() {
            return "Accepted[generation=" + generation + ", resumed=" + resumed + "]";
        }
    }

    /**
     * The minion stopped by itself, on an authenticated reply only: {@link MinionState#REJECTED} by its pinned
     * master (or master_finger's), or {@link MinionState#MASTER_KEY_MISMATCH} told by the pinned key itself.
     */
    record Stopped(MinionState state) implements Outcome {}

    /** Nothing for the caller: the reply was dropped, or the minion asks again later. */
    record Waiting() implements Outcome {}

    private static final Waiting WAITING = new Waiting();

    private final Minion.Settings settings;
    private final MinionKeyring keyring;
    /** The key pair the outstanding request offers: the keyring's current key, or a rotation's new key first. */
    private KeyPair offered;

    private final MasterPin pin;
    private final ClientTransport transport;
    private final Scheduler loop;
    private final Clock clock;
    private final StatusFile status;
    private final SecureRandom random = new SecureRandom();
    private final Backoff backoff;
    private final WarnThrottle warnings;

    private byte[] pendingNonce;
    private Scheduler.Timer authTimeout = Scheduler.Timer.NONE;
    private Scheduler.Timer retry = Scheduler.Timer.NONE;
    private boolean everConnected;
    /**
     * The last request went unanswered and the transport replaces a connection that was up: the new one coming up
     * does not cut the back-off short (a master too busy to answer is not asked again sooner). A connection that
     * comes up where there was none (the master was down) still gets a request at once.
     */
    private boolean timedOut;

    private long authRequests;
    private boolean stopped;
    /** Why the outstanding request's replies so far were dropped as carrying another master key; null if none. */
    private String mismatch;

    private Instant authDeadline = Instant.EPOCH;
    /**
     * The resumption ticket held (PROTOCOL.md 8.9); null when none. Given up when a master answers a resumption with
     * it (resumed: the next ticket replaces it; refused, or an answer that does not open: a full auth at once), or
     * when it went unanswered on every master it could be tried on: once per master of the failover list, once
     * otherwise.
     */
    private Resumption.Grant ticket;
    /** The masters ({@link #master()}) where a resumption with {@link #ticket} went unanswered. */
    private final Set<String> ticketUnanswered = new HashSet<>();
    /** The secret of the outstanding resumption request; null when the outstanding request is a full auth. */
    private byte[] resumingWith;
    /** The master the outstanding resumption request went to. */
    private String resumingOn;
    /**
     * The transport is replacing its connection ({@link #reconnect} returned true) and has not said the new one is
     * up ({@link #onConnected}). A request sent meanwhile is queued for the new connection (both transports hold
     * frames until a connection is up), so the connection event does not send another: it used to, and the minion's
     * resumption on the master it failed over to was overtaken by its own full auth.
     */
    private boolean linkDown;
    /** The outstanding request was sent while {@link #linkDown}: it goes out on the new connection. */
    private boolean queuedForNewLink;

    Handshake(
            Minion.Settings settings,
            MinionKeyring keyring,
            MasterPin pin,
            ClientTransport transport,
            Scheduler loop,
            Clock clock,
            StatusFile status) {
        this.settings = settings;
        this.keyring = keyring;
        this.offered = keyring.forAuth();
        this.pin = pin;
        this.transport = transport;
        this.loop = loop;
        this.clock = clock;
        this.status = status;
        this.backoff = new Backoff(settings.acceptanceWait(), settings.acceptanceWaitMax(), random::nextDouble);
        this.warnings = new WarnThrottle(clock);
        pin.pinned().ifPresent(key -> status.masterKey(Fingerprints.of(key)));
    }

    /**
     * The minion starts: the first request goes out when the connection is up ({@link #onConnected}), or after
     * auth_timeout at the latest (a transport that cannot tell): a request queued for a master that is down would
     * only be answered when stale.
     */
    void begin() {
        status.enter(MinionState.CONNECTING, "connecting to the master", settings.authTimeout());
        scheduleAuth(settings.authTimeout());
    }

    /**
     * A connection to the master came up: the first one, or one after a loss (a restart, a network cut).
     *
     * @param sessionOpen whether a session is open, in which case the session channel asks with a heartbeat
     */
    void onConnected(boolean sessionOpen) {
        boolean first = !everConnected;
        boolean queued = linkDown && queuedForNewLink;
        everConnected = true;
        linkDown = false;
        if (sessionOpen) {
            return;
        }
        if (timedOut) {
            return;
        }
        if (pendingNonce != null) {
            if (!first && !queued) {
                // The request may have been lost with the old connection.
                authenticate();
            }
        } else if (status.state() == MinionState.CONNECTING) {
            // Waiting only because the master could not be reached: ask now; after failed tries, spread the request
            // so that minions waiting for a master that comes back do not all ask at once.
            scheduleAuth(authRequests == 0 ? Duration.ZERO : Duration.ofMillis(random.nextInt(RECONNECT_SPREAD_MS)));
        }
    }

    /** A ticket from the master, for the next time the session is lost. */
    void holdTicket(Resumption.Grant grant) {
        ticket = grant;
        ticketUnanswered.clear();
        status.ticket(grant == null ? null : Instant.ofEpochMilli(grant.expiresMs()));
    }

    /**
     * Gives up the ticket held: a full auth is made (its session asks for the next one), or the minion switched to a
     * rotation's new key, which the ticket does not name (PROTOCOL.md 6.3: the session asks for one that does).
     */
    void dropTicket() {
        if (ticket != null) {
            holdTicket(null);
        }
    }

    /**
     * Whether a ticket is held that may be tried on the master the transport talks to now: a lost connection is then
     * resumed rather than asked about with a heartbeat.
     */
    boolean canResume() {
        return ticket != null && clock.millis() < ticket.expiresMs() && !ticketUnanswered.contains(master());
    }

    /** The master the transport talks to: the failover list's current one; "" for a transport to one master. */
    private String master() {
        return transport instanceof FailoverTransport failover ? failover.currentMaster() : "";
    }

    /**
     * The master left a request (an auth, a resumption or a heartbeat) unanswered: the transport replaces the
     * connection, perhaps by another master's ({@link FailoverTransport}); the next request is queued for it.
     *
     * @return whether a connection that was up is being replaced
     */
    boolean reconnect() {
        boolean replaced = transport.reconnect();
        linkDown |= replaced;
        return replaced;
    }

    /**
     * The connection came back while a session was open: resume at once with the ticket. A restarted master does not
     * know the session, and telling the minion so would cost it a signature.
     */
    void resumeNow(String reason) {
        status.enter(MinionState.CONNECTING, reason, null);
        scheduleAuth(Duration.ZERO);
    }

    /**
     * The answer to a resumption request. A refusal is not authenticated, and one that does not open may be forged:
     * either way the minion authenticates in full at once, which is all an on-path attacker could force anyway by
     * dropping frames. A resumed session is authentic: only the master could open the ticket and seal the box under
     * the key derived from its secret.
     */
    Outcome onResumeReply(Resumption.Reply reply) {
        if (pendingNonce == null || resumingWith == null || !Arrays.equals(pendingNonce, reply.nonce())) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.UNANSWERED_AUTH_REPLY,
                    "Minion {}: resumption reply to no " + "outstanding request dropped (late, or replayed)",
                    settings.id());
            return WAITING;
        }
        Accepted accepted;
        try {
            Resumption.Resumed resumed = Resumptions.openReply(resumingWith, reply.nonce(), reply);
            try {
                accepted = new Accepted(
                        resumed.sessionId(),
                        resumed.generation(),
                        resumed.publishPort(),
                        resumed.serialFloor(),
                        SessionKey.of(resumed.publishKey()),
                        SessionKey.of(resumed.requestKey()),
                        true);
            } finally {
                Arrays.fill(resumed.publishKey(), (byte) 0);
                Arrays.fill(resumed.requestKey(), (byte) 0);
            }
            holdTicket(resumed.next());
        } catch (CryptoException | MalformedException e) {
            LOG.info(
                    "Minion {}: the master did not resume the session ({}); authenticating in full",
                    settings.id(),
                    reply.refused() ? "refused" : "an answer that does not open");
            answered();
            dropTicket();
            authenticate();
            return WAITING;
        }
        answered();
        backoff.reset();
        return accepted;
    }

    /** The session ended (the master lost it, or stopped answering): authenticate again, soon. */
    void sessionLost(String reason) {
        status.enter(MinionState.CONNECTING, reason, null);
        scheduleAuth(Duration.ofMillis(random.nextInt(REAUTH_SPREAD_MS)));
    }

    /**
     * An auth reply. In order: it must answer the outstanding request (nonce); it must verify against the trusted
     * master key before anything else is concluded from it; its clock must be close to ours; then its status counts.
     * A reply that does not verify is dropped (a WARN per minute at most) and the request stays outstanding, so that
     * the master's own reply, racing an on-path forger's, still counts: nothing unauthenticated stops a minion.
     */
    Outcome onReply(Signed<AuthReply> signed) {
        AuthReply reply = signed.message();
        if (pendingNonce == null || !Arrays.equals(pendingNonce, reply.nonce())) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.UNANSWERED_AUTH_REPLY,
                    "Minion {}: auth reply to no outstanding" + " request dropped (late, or replayed)",
                    settings.id());
            return WAITING;
        }
        MasterPin.Verdict verdict = pin.verify(reply.masterPublicKey(), signed::by, reply.masterChain());
        if (verdict instanceof MasterPin.Verdict.Forged) {
            long dropped = warnings.count(WarnThrottle.Reason.FORGED_AUTH_REPLY);
            if (dropped > 0) {
                LOG.warn(
                        "Minion {}: {} auth repl{} with a bad signature dropped (forged or damaged on the way)",
                        settings.id(),
                        dropped,
                        dropped == 1 ? "y" : "ies");
            }
            return WAITING;
        }
        if (verdict instanceof MasterPin.Verdict.OtherKey other) {
            if (other.signedByPin()) {
                // The pinned master itself presents another key: authentic, and only an admin can settle it.
                LOG.error("CRITICAL: Minion {}: refusing the master: {}", settings.id(), other.reason());
                return stop(MinionState.MASTER_KEY_MISMATCH, other.reason());
            }
            // Anybody on the path can send this (the nonce travels in clear): shown, never obeyed.
            long dropped = warnings.count(WarnThrottle.Reason.OTHER_MASTER_KEY);
            if (dropped > 0) {
                LOG.warn(
                        "CRITICAL: Minion {}: {} auth repl{} not signed by the trusted master key dropped: {}. "
                                + "Still asking",
                        settings.id(),
                        dropped,
                        dropped == 1 ? "y" : "ies",
                        other.reason());
            }
            mismatch = other.reason();
            // Written once per reason, not per reply: a flood of them must not become a flood of file writes.
            if (status.state() != MinionState.MASTER_KEY_MISMATCH
                    || !other.reason().equals(status.current().reason())) {
                status.enter(MinionState.MASTER_KEY_MISMATCH, other.reason(), untilAuthTimeout());
            }
            return WAITING;
        }
        if (verdict instanceof MasterPin.Verdict.Succeeded succeeded) {
            // The master's key was rotated while this minion was away: the chain led from its pin to this key.
            try {
                RSAPublicKey before = pin.pinned().orElseThrow();
                pin.pinAnew(succeeded.key());
                LOG.info(
                        "Minion {}: the master key was rotated: {} succeeds the pinned {} (chain of {} verified); "
                                + "pinned in {}",
                        settings.id(),
                        Fingerprints.of(succeeded.key()),
                        Fingerprints.of(before),
                        reply.masterChain().size(),
                        pin.file());
            } catch (IOException e) {
                LOG.error("Minion {}: cannot save the master key to {}: {}", settings.id(), pin.file(), e.getMessage());
                return WAITING;
            }
            verdict = new MasterPin.Verdict.Authentic(succeeded.key(), false, true);
        }
        MasterPin.Verdict.Authentic authentic = (MasterPin.Verdict.Authentic) verdict;
        if (!Timestamps.withinSkew(reply.timestampMs(), clock)) {
            // The nonce already makes the reply fresh; this catches a badly set clock (PROTOCOL.md 8.2 step 5).
            Duration wait = backoff.next();
            LOG.error(
                    "Minion {}: the master's clock says {}, ours {}: more than {} s apart; fix the clocks. "
                            + "Asking again in {} s",
                    settings.id(),
                    Instant.ofEpochMilli(reply.timestampMs()),
                    clock.instant(),
                    Timestamps.MAX_CLOCK_SKEW.toSeconds(),
                    wait.toSeconds());
            answered();
            waitAndAsk(retryState(), "clock skew with the master", wait);
            return WAITING;
        }
        status.masterKey(Fingerprints.of(authentic.key()));
        // Trust on first use starts with an accepted key: a master that never accepted this minion is not pinned.
        if (authentic.firstUse() && reply.status() == AuthStatus.ACCEPTED) {
            try {
                pin.pin(authentic.key());
            } catch (IOException e) {
                LOG.error("Minion {}: cannot save the master key to {}: {}", settings.id(), pin.file(), e.getMessage());
                return WAITING;
            }
            LOG.info(
                    "Minion {}: trusting master key {} from now on (saved as {})",
                    settings.id(),
                    Fingerprints.of(authentic.key()),
                    pin.file());
        }
        // Within a rotation's grace the master's previous key still signs publications (PROTOCOL.md 6.4).
        pin.remember(reply.masterChain());
        answered();
        return onStatus(reply, authentic.anchored());
    }

    /**
     * The master's key was rotated (PROTOCOL.md 6.4): the chain it sent in this session is walked from the pinned
     * key; every step verified, the newest key is pinned. A chain that does not lead from the pin changes nothing: the
     * next auth shows the chain again, and a master that cannot show one is refused as a stranger.
     */
    void onMasterKeySuccession(SessionMessage.MasterKeySuccession succession) {
        String before = pin.pinned().map(Fingerprints::of).orElse("none");
        try {
            MasterSuccessions.Walk walk = pin.follow(succession.chain());
            if (walk instanceof MasterSuccessions.Walk.Verified verified) {
                String after = Fingerprints.of(verified.newest());
                if (!after.equals(before)) {
                    LOG.info(
                            "Minion {}: the master key was rotated: {} succeeds the pinned {}; pinned in {}",
                            settings.id(),
                            after,
                            before,
                            pin.file());
                    status.masterKey(after);
                }
            } else {
                LOG.warn(
                        "Minion {}: master key chain refused, the pinned key {} is kept: {}",
                        settings.id(),
                        before,
                        ((MasterSuccessions.Walk.Refused) walk).reason());
            }
        } catch (IOException e) {
            LOG.error("Minion {}: cannot save the master key to {}: {}", settings.id(), pin.file(), e.getMessage());
        }
    }

    /** @param anchored whether the reply is authenticated by a key trusted before it (pin or master_finger) */
    private Outcome onStatus(AuthReply reply, boolean anchored) {
        Duration retryAfter = Duration.ofSeconds(reply.retryAfterSeconds());
        boolean offeredNew =
                keyring.candidate().filter(candidate -> candidate == offered).isPresent();
        if (offeredNew && (reply.status() != AuthStatus.ACCEPTED || !anchored)) {
            // A rotation's new key the master does not hold (the rotation never reached it): the old key, at once.
            LOG.info(
                    "Minion {}: the master did not accept the new key of an unconfirmed rotation ({}); offering the"
                            + " current key",
                    settings.id(),
                    reply.reason());
            keyring.candidateRefused();
            scheduleAuth(Duration.ZERO);
            return WAITING;
        }
        return switch (reply.status()) {
            case ACCEPTED -> accepted(reply.session());
            case PENDING, FULL, REFUSED -> {
                Duration wait = max(backoff.next(), retryAfter);
                LOG.info(
                        "Minion {}: key {} by the master ({}); asking again in {} s",
                        settings.id(),
                        reply.status() == AuthStatus.PENDING ? "pending" : "not accepted",
                        reply.reason(),
                        wait.toSeconds());
                waitAndAsk(MinionState.PENDING, reply.reason(), wait);
                yield WAITING;
            }
            case DENIED -> {
                Duration wait = backoff.next();
                LOG.error(
                        "Minion {}: the master holds a different key for this id ({}); an admin must delete one "
                                + "of them. Asking again in {} s",
                        settings.id(),
                        reply.reason(),
                        wait.toSeconds());
                waitAndAsk(MinionState.DENIED, reply.reason(), wait);
                yield WAITING;
            }
            case REJECTED -> {
                if (!anchored && !settings.rejectedRetry()) {
                    // Anybody can sign a reply with a key of their own: not a reason to stop for good.
                    Duration wait = backoff.next().multipliedBy(UNVERIFIED_REJECTION_FACTOR);
                    long seen = warnings.count(WarnThrottle.Reason.UNVERIFIED_REJECTION);
                    if (seen > 0) {
                        LOG.warn(
                                "Minion {}: key rejected by the master ({}), by a reply this minion cannot "
                                        + "authenticate (no master key pinned yet, no master_finger); not stopping, asking "
                                        + "again in {} s. Set master_finger to trust rejections",
                                settings.id(),
                                reply.reason(),
                                wait.toSeconds());
                    }
                    waitAndAsk(MinionState.REJECTED, reply.reason(), wait);
                    yield WAITING;
                }
                if (!settings.rejectedRetry()) {
                    LOG.error(
                            "Minion {}: key rejected by the master ({}); stopping. An admin can delete the key "
                                    + "with brine-key -d, or set rejected_retry: true",
                            settings.id(),
                            reply.reason());
                    yield stop(MinionState.REJECTED, reply.reason());
                }
                Duration wait = backoff.next();
                LOG.warn(
                        "Minion {}: key rejected by the master ({}); rejected_retry is on, asking again in {} s",
                        settings.id(),
                        reply.reason(),
                        wait.toSeconds());
                waitAndAsk(MinionState.REJECTED, reply.reason(), wait);
                yield WAITING;
            }
        };
    }

    private Outcome accepted(AuthReply.Session granted) {
        SessionKey publishKey;
        SessionKey requestKey;
        try {
            publishKey = SessionKey.of(Rsa.unwrap(offered.getPrivate(), granted.wrappedPublishKey()));
            requestKey = SessionKey.of(Rsa.unwrap(offered.getPrivate(), granted.wrappedRequestKey()));
        } catch (CryptoException e) {
            LOG.warn("Minion {}: cannot unwrap the session keys ({}); asking again", settings.id(), e.getMessage());
            scheduleAuth(backoff.next());
            return WAITING;
        }
        try {
            // The pinned master accepted this key: a rotation's new key is confirmed; the old one means it never was.
            if (keyring.candidate().filter(candidate -> candidate == offered).isPresent()) {
                keyring.promote(offered);
                status.fingerprint(Fingerprints.of(offered.getPublic()));
            } else if (!keyring.candidatePending()) {
                keyring.discardCandidate();
            }
            // A new key waiting for an admin stays: the master's answer to the next request settles it.
        } catch (IOException e) {
            LOG.error(
                    "Minion {}: cannot record the key the master accepted in {}: {}; asking again",
                    settings.id(),
                    MinionKeyring.NEW_PRIVATE_FILE,
                    e.getMessage());
            scheduleAuth(backoff.next());
            return WAITING;
        }
        backoff.reset();
        return new Accepted(
                granted.sessionId(),
                granted.generation(),
                granted.publishPort(),
                granted.serialFloor(),
                publishKey,
                requestKey,
                false);
    }

    private void authenticate() {
        if (stopped) {
            return;
        }
        retry.cancel();
        authTimeout.cancel();
        timedOut = false;
        byte[] nonce = new byte[32];
        random.nextBytes(nonce);
        pendingNonce = nonce;
        resumingWith = null;
        mismatch = null;
        queuedForNewLink = linkDown;
        if (canResume()) {
            // No RSA operation on either side. The ticket is kept until a master answers: one that goes unanswered
            // is tried on the next master of a failover list, not spent on the master being left (PROTOCOL.md 8.9).
            resumingWith = ticket.secret();
            resumingOn = master();
            if (!transport.send(
                    Resumptions.encode(Resumptions.request(settings.id(), ticket, nonce, clock.millis())))) {
                LOG.debug("Minion {}: resumption request not queued (not connected); waiting", settings.id());
            }
            authTimeout = loop.schedule(settings.authTimeout(), this::onAuthTimeout);
            authDeadline = clock.instant().plus(settings.authTimeout());
            return;
        }
        dropTicket();
        offered = keyring.forAuth();
        AuthRequest request = new AuthRequest(
                Suite.RSA_OAEP_PSS_AES256GCM,
                settings.id(),
                offered.getPublic().getEncoded(),
                nonce,
                clock.millis(),
                settings.grains(),
                settings.grant(),
                settings.token());
        authRequests++;
        mismatch = null;
        if (!transport.send(Codec.encodeSigned(request, offered.getPrivate()))) {
            LOG.debug("Minion {}: auth request not queued (not connected); waiting", settings.id());
        }
        authTimeout = loop.schedule(settings.authTimeout(), this::onAuthTimeout);
        authDeadline = clock.instant().plus(settings.authTimeout());
    }

    /** How long the outstanding request still waits for its answer. */
    private Duration untilAuthTimeout() {
        Duration left = Duration.between(clock.instant(), authDeadline);
        return left.isNegative() ? Duration.ZERO : left;
    }

    private void onAuthTimeout() {
        if (pendingNonce == null) {
            return;
        }
        pendingNonce = null;
        if (resumingWith != null) {
            ticketUnanswered.add(resumingOn);
        }
        resumingWith = null;
        Duration wait = backoff.next();
        if (mismatch != null) {
            // Only replies under another master key came: keep showing that, and keep asking.
            waitAndAsk(MinionState.MASTER_KEY_MISMATCH, mismatch, wait);
            return;
        }
        LOG.info(
                "Minion {}: no answer from the master in {} s; asking again in {} s",
                settings.id(),
                settings.authTimeout().toSeconds(),
                wait.toSeconds());
        // Not into the same connection: it may be half-open, and over ZeroMQ nothing else would notice (ZMTP.md,
        // "Heartbeats, minion side").
        timedOut = reconnect();
        waitAndAsk(retryState(), "no answer from the master", wait);
    }

    /**
     * The state to wait in when a try came to nothing: the one the master last gave, unless that no longer holds
     * (accepted, or a mismatch no reply of this try showed).
     */
    private MinionState retryState() {
        MinionState state = status.state();
        return state == MinionState.ACCEPTED || state == MinionState.MASTER_KEY_MISMATCH
                ? MinionState.CONNECTING
                : state;
    }

    /** The outstanding request is answered: stop waiting for it. */
    private void answered() {
        pendingNonce = null;
        resumingWith = null;
        authTimeout.cancel();
    }

    private void waitAndAsk(MinionState state, String reason, Duration wait) {
        status.enter(state, reason, wait);
        scheduleAuth(wait);
    }

    private void scheduleAuth(Duration wait) {
        retry.cancel();
        retry = loop.schedule(wait, this::authenticate);
    }

    private Stopped stop(MinionState state, String reason) {
        stopped = true;
        answered();
        retry.cancel();
        status.enter(state, reason, null);
        return new Stopped(state);
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
