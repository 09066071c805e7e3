package io.brine.minion;

import io.brine.minion.auth.MasterPin;
import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.ReplayWindow;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.codec.Signed;
import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionUnknown;
import io.brine.transport.ClientTransport;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The minion's session with the master once accepted (PROTOCOL.md 8.4-8.6): seals what the minion sends under its
 * request key with increasing counters, opens what the master sends (direction, replay window), sends heartbeats
 * and gives the session up when one goes unanswered for {@code auth_timeout}, and carries job returns, resending
 * each with back-off until the master acknowledges it (also under the next session).
 *
 * <p>Confined to the minion's event thread, except {@link #submitReturn}, which hands over to it. It exists before
 * the job runner that produces returns and the {@link Minion} that routes frames to it.
 */
final class SessionChannel {

    private static final Logger LOG = LoggerFactory.getLogger(SessionChannel.class);
    private static final long RETURN_RETRY_BASE_MS = 5_000;
    /** Resends never come closer together than this, however small {@code return_retry_max}. */
    private static final Duration MIN_RESEND_WAIT = Duration.ofSeconds(1);

    private final Minion.Settings settings;
    private final MasterPin pin;
    private final ClientTransport transport;
    private final Scheduler loop;
    private final Clock clock;
    private final LongSupplier generation;
    private final Consumer<String> lost;
    private final Runnable reconnect;
    private final SecureRandom random = new SecureRandom();
    private final ReturnQueue returns;
    private final WarnThrottle warnings;

    private Session session;
    private Scheduler.Timer nextHeartbeat = Scheduler.Timer.NONE;
    /** Fires when a heartbeat sent has not been answered in time; NONE when none is outstanding. */
    private Scheduler.Timer answerDeadline = Scheduler.Timer.NONE;

    private Scheduler.Timer resend = Scheduler.Timer.NONE;

    private static final class Session {
        final byte[] id;
        final SessionKey requestKey;
        final ReplayWindow window = new ReplayWindow();
        long sendCounter;
        long keyRequestedFor = -1;

        Session(byte[] id, SessionKey requestKey) {
            this.id = id;
            this.requestKey = requestKey;
        }
    }

    /**
     * @param generation the newest publish key generation held, for heartbeats
     * @param lost       told (with a reason for the status) when the session is gone: the minion authenticates again
     * @param reconnect  replaces a connection the master left unanswered ({@link Handshake#reconnect}, which knows
     *                   its next request is queued for the new connection)
     */
    SessionChannel(
            Minion.Settings settings,
            MasterPin pin,
            ClientTransport transport,
            Scheduler loop,
            Clock clock,
            LongSupplier generation,
            Consumer<String> lost,
            Runnable reconnect) {
        this.settings = settings;
        this.pin = pin;
        this.transport = transport;
        this.loop = loop;
        this.clock = clock;
        this.generation = generation;
        this.lost = lost;
        this.reconnect = reconnect;
        this.returns = new ReturnQueue(settings.returnQueueCapacity());
        this.warnings = new WarnThrottle(clock);
    }

    boolean active() {
        return session != null;
    }

    /** The returns awaiting the master's acknowledgement, for their counts. */
    ReturnQueue returns() {
        return returns;
    }

    /** The open session's id; empty when none is open. */
    Optional<byte[]> sessionId() {
        return session == null ? Optional.empty() : Optional.of(session.id.clone());
    }

    /** An accepted auth: the new session starts its counters at 1, reports grains and resends unacknowledged returns. */
    void open(byte[] sessionId, SessionKey requestKey) {
        close();
        session = new Session(sessionId, requestKey);
        nextHeartbeat = loop.schedule(jittered(settings.heartbeatInterval()), this::heartbeatDue);
        send(new SessionMessage.Grains(settings.grains()));
        returns.resendAll(clock.millis());
        flushReturns();
    }

    /** Ends the session (lost, or the minion stops); returns not yet acknowledged are kept for the next one. */
    void close() {
        session = null;
        nextHeartbeat.cancel();
        answerDeadline.cancel();
        answerDeadline = Scheduler.Timer.NONE;
        resend.cancel();
    }

    /**
     * A session frame from either channel: the message inside when it is for this session, from the master, opens
     * under the request key and is not a replay; empty otherwise. Anything that opens answers a heartbeat.
     */
    Optional<SessionMessage.ToMinion> onFrame(SessionFrame sealed) {
        if (session == null
                || sealed.direction() != SessionFrame.Direction.MASTER_TO_MINION
                || !Arrays.equals(session.id, sealed.sessionId())) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.SESSION_FRAME,
                    "Minion {}: session frame dropped: not for this" + " minion's session (one that ended, or none)",
                    settings.id());
            return Optional.empty();
        }
        SessionMessage.ToMinion message;
        try {
            message = Sessions.open(session.requestKey, sealed, SessionMessage.ToMinion.class);
        } catch (CryptoException | MalformedException e) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.SESSION_FRAME,
                    "Minion {}: session frame dropped: {}",
                    settings.id(),
                    MinionIds.printable(e.getMessage()));
            return Optional.empty();
        }
        if (!session.window.accept(sealed.counter())) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.SESSION_FRAME,
                    "Minion {}: session frame dropped: replayed" + " (counter {})",
                    settings.id(),
                    sealed.counter());
            return Optional.empty();
        }
        answerDeadline.cancel();
        answerDeadline = Scheduler.Timer.NONE;
        return Optional.of(message);
    }

    /** Asks the master for a resumption ticket in this session (PROTOCOL.md 8.9). */
    void requestTicket() {
        if (session != null) {
            transport.send(
                    Resumptions.encode(Resumptions.ticketRequest(session.requestKey, session.id, clock.millis())));
        }
    }

    /** A resumption ticket the master sent in this session, opened with its request key; empty otherwise. */
    Optional<Resumption.Grant> openTicket(Resumption.Ticket ticket) {
        if (session == null || !Arrays.equals(session.id, ticket.sessionId())) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.SESSION_FRAME,
                    "Minion {}: resumption ticket dropped: not for"
                            + " this minion's session (one that ended, or none)",
                    settings.id());
            return Optional.empty();
        }
        try {
            return Optional.of(Resumptions.openTicket(session.requestKey, ticket));
        } catch (CryptoException | MalformedException e) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.SESSION_FRAME,
                    "Minion {}: resumption ticket dropped: {}",
                    settings.id(),
                    MinionIds.printable(e.getMessage()));
            return Optional.empty();
        }
    }

    /**
     * The master says it does not know a session: believed only when signed by the pinned master, about this
     * session, about a frame this minion sent, and fresh. Then the session is given up.
     */
    void onSessionUnknown(Signed<SessionUnknown> signed) {
        SessionUnknown unknown = signed.message();
        if (session == null
                || !Arrays.equals(session.id, unknown.sessionId())
                || !pin.signedByMaster(signed::by, clock.millis())) {
            return;
        }
        if (unknown.counter() > session.sendCounter || !Timestamps.withinSkew(unknown.timestampMs(), clock)) {
            LOG.debug(
                    "Minion {}: session-unknown answer for a frame we did not send, or stale, dropped", settings.id());
            return;
        }
        LOG.info("Minion {}: the master does not know our session (restarted?); authenticating again", settings.id());
        close();
        lost.accept("master lost the session");
    }

    /** Asks the master for a publish key generation, once per generation and session. */
    void requestKey(long wanted) {
        if (session != null && session.keyRequestedFor != wanted) {
            session.keyRequestedFor = wanted;
            send(new SessionMessage.KeyRequest(wanted));
        }
    }

    /**
     * The master will not need these returns again. An Ack with a reason says they were refused (too large, a
     * duplicate...): one WARN line per interval, with how many refusals it stands for, since a master answers each
     * resend the same way.
     */
    void acknowledged(SessionMessage.Ack ack) {
        returns.ack(ack.jids());
        if (ack.reason() != null) {
            long refused = warnings.count(WarnThrottle.Reason.RETURN_REFUSED);
            if (refused > 0) {
                LOG.warn(
                        "Minion {}: the master refused the return of job {}: {} ({} refusal{} since the last line)",
                        settings.id(),
                        String.join(",", ack.jids()),
                        ack.reason(),
                        refused,
                        refused == 1 ? "" : "s");
            }
        }
    }

    /** The connection came back with the session open: ask at once whether the master still knows it. */
    void heartbeatNow() {
        if (session != null) {
            // A restarted master answers SessionUnknown, a swapped one nothing we can verify.
            sendHeartbeat();
        }
    }

    /** Seals and sends a message in the session; nothing without one. */
    void send(SessionMessage message) {
        if (session == null) {
            return;
        }
        SessionFrame sealed = Sessions.seal(
                session.requestKey,
                session.id,
                SessionFrame.Direction.MINION_TO_MASTER,
                ++session.sendCounter,
                message);
        transport.send(Codec.encode(sealed));
    }

    /** Queues a job return for the master, resent with back-off until acknowledged. Thread-safe. */
    void submitReturn(SessionMessage.Return ret) {
        loop.execute(() -> {
            SessionMessage.Return evicted = returns.add(ret, clock.millis());
            if (evicted != null) {
                LOG.warn(
                        "Minion {}: return queue full; dropped the oldest unacknowledged return, job {}",
                        settings.id(),
                        evicted.jid());
            }
            flushReturns();
        });
    }

    private void flushReturns() {
        if (session == null) {
            return;
        }
        long now = clock.millis();
        for (SessionMessage.Return ret :
                returns.due(now, RETURN_RETRY_BASE_MS, settings.returnRetryMax().toMillis())) {
            send(ret);
        }
        resend.cancel();
        returns.nextDueMs()
                .ifPresent(due ->
                        resend = loop.schedule(max(Duration.ofMillis(due - now), MIN_RESEND_WAIT), this::flushReturns));
    }

    private void heartbeatDue() {
        if (session == null) {
            return;
        }
        sendHeartbeat();
        nextHeartbeat = loop.schedule(jittered(settings.heartbeatInterval()), this::heartbeatDue);
    }

    /** Sends a heartbeat; the master must answer (anything sealed in this session) within auth_timeout. */
    private void sendHeartbeat() {
        send(new SessionMessage.Heartbeat(generation.getAsLong()));
        if (answerDeadline == Scheduler.Timer.NONE) {
            answerDeadline = loop.schedule(settings.authTimeout(), this::unanswered);
        }
    }

    private void unanswered() {
        answerDeadline = Scheduler.Timer.NONE;
        if (session == null) {
            return;
        }
        LOG.info(
                "Minion {}: no answer to a heartbeat in {} s; authenticating again",
                settings.id(),
                settings.authTimeout().toSeconds());
        close();
        lost.accept("no answer from the master");
        // The connection may be half-open (the master's host gone, a NAT entry dropped): auth on a new one.
        reconnect.run();
    }

    private Duration jittered(Duration interval) {
        long millis = interval.toMillis();
        return Duration.ofMillis(millis + (long) (millis * 0.25 * random.nextDouble()));
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
