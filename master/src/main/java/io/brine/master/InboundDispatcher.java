package io.brine.master;

import io.brine.master.auth.AuthService;
import io.brine.master.auth.AuthWorkBudget;
import io.brine.master.auth.KeyRotationService;
import io.brine.master.auth.SourceRateLimiter;
import io.brine.master.events.EventStream;
import io.brine.master.jobs.ActiveJobs;
import io.brine.master.metrics.MasterMetrics;
import io.brine.master.publish.GrainsStore;
import io.brine.master.publish.PublisherService;
import io.brine.master.resume.ResumeService;
import io.brine.master.salt.SaltInbound;
import io.brine.master.session.MinionSession;
import io.brine.master.session.PublisherSession;
import io.brine.master.session.Session;
import io.brine.master.session.SessionService;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.codec.Signed;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.ClientAuth;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.message.Message;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.store.policy.IpAddresses;
import io.brine.transport.DropLog;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

// Over 400 lines: the one place every inbound frame is decoded, bounded and handed off, with its exhaustive switch,
// its lanes and in-flight accounting; the handlers it calls are their own classes (Salt's frames: SaltInbound).
/**
 * The master's inbound dispatcher. Each frame from the request channel is decoded once, on the transport thread,
 * into a {@link Message} (the codec holds every frame to its type's size limit, 64 KiB for the auth types, before it
 * parses anything); an exhaustive switch over it bounds the unauthenticated path (auth rate per source) and hands
 * the record to a worker pool: session frames to one; auth requests to pools of their own, so that auth runs
 * whatever else is busy, in two lanes, so that strangers cannot delay the known: an auth request offering the key
 * the store holds as accepted for its id, and a publisher's from loopback, in one; every other unauthenticated frame
 * (new, pending and unknown keys, Salt's {@code _auth}, remote publishers) in the other. There the handler
 * ({@link AuthService}, {@link SessionService}, {@link PublisherService}) takes the record and returns its answer,
 * which the dispatcher sends, after binding the minion to its peer where the answer opens or moves a session. Crypto
 * and disk never run on the transport thread. A frame the codec cannot decode ends its sender's connection. Frames in
 * Salt's TCP framing, and payloads Salt's side claims, go to the {@link SaltInbound}, which queues them on the same
 * lanes.
 */
public final class InboundDispatcher implements ServerTransport.InboundHandler, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(InboundDispatcher.class);
    /** Each auth lane's queue. */
    static final int AUTH_QUEUE = 8192;

    static final int SESSION_QUEUE = 65536;
    static final Duration DROP_LOG_INTERVAL = DropLog.INTERVAL;

    private final ServerTransport transport;
    private final SourceRateLimiter unauthenticated;
    private final AuthService auth;
    /** Session resumption: tickets after a full auth, new sessions for tickets (PROTOCOL.md 8.9). */
    private final ResumeService resume;
    /** The master key's succession records (PROTOCOL.md 6.4): a resumed session shows no auth reply, so it is sent. */
    private final Supplier<List<MasterSuccession>> masterChain;

    private final SessionService sessions;
    private final KeyRotationService rotations;
    private final PublisherService publishers;
    private final ActiveJobs jobs;
    private final GrainsStore grains;
    private final Clock clock;
    /** The known lane: accepted keys' auth requests, loopback publishers'. */
    private final ThreadPoolExecutor authPool;
    /** Every other unauthenticated frame. */
    private final ThreadPoolExecutor strangerPool;

    private final ThreadPoolExecutor sessionPool;
    private final AuthWorkBudget budget;
    private final AtomicLong droppedFrames = new AtomicLong();
    private final MasterMetrics metrics;
    private final EventStream events;
    /** Stock Salt minions' frames (SALT.md), or none when {@code salt_minions} is off. */
    private final SaltInbound salt;
    /** The lanes Salt's requests take: those of brine's. */
    private final SaltInbound.Lanes saltLanes = new SaltInbound.Lanes() {
        @Override
        public boolean unauthenticated(Peer from, int size, Runnable task) {
            return InboundDispatcher.this.unauthenticated(from, size, strangerPool, task);
        }

        @Override
        public boolean session(Peer from, int size, Runnable task) {
            return submit(sessionPool, from, size, task);
        }

        @Override
        public void drop(Peer from, String reason) {
            InboundDispatcher.this.drop(from, reason);
        }
    };
    /** Dropped frames, at WARN: one line per reason and source a minute. */
    private final DropLog drops;

    private final long maxReturnBytes;
    /** Answers to frames of unknown sessions wait here for their connections to ask for a session instead. */
    private final UnknownSessionAnswers unknownSessions;

    private final ScheduledExecutorService unknownTimer;

    /**
     * @param unauthenticated the rate per source address of what costs a private-key operation before the sender is
     *     authenticated: auth requests, and answers to frames of unknown sessions
     * @param budget the auth work budget: pays for the answers to unknown sessions here (the services pay from it
     *     for their own answers)
     * @param salt serves stock Salt minions' frames on the same ports ({@link SaltInbound#off} to serve brine's
     *     protocol only)
     * @param workerThreads the threads of each of the three pools
     * @param maxReturnBytes {@code max_return_bytes}: a return whose session frame is larger is refused
     */
    public InboundDispatcher(
            ServerTransport transport,
            SourceRateLimiter unauthenticated,
            AuthWorkBudget budget,
            AuthService auth,
            ResumeService resume,
            SessionService sessions,
            KeyRotationService rotations,
            PublisherService publishers,
            ActiveJobs jobs,
            GrainsStore grains,
            SaltInbound salt,
            int workerThreads,
            long maxReturnBytes,
            Clock clock,
            MasterMetrics metrics,
            EventStream events,
            Supplier<List<MasterSuccession>> masterChain) {
        this.masterChain = masterChain;
        this.resume = resume;
        this.rotations = rotations;
        this.budget = budget;
        this.salt = salt;
        this.maxReturnBytes = maxReturnBytes;
        this.drops = new DropLog(LOG, DROP_LOG_INTERVAL, clock);
        this.transport = transport;
        this.unauthenticated = unauthenticated;
        this.auth = auth;
        this.sessions = sessions;
        this.publishers = publishers;
        this.jobs = jobs;
        this.grains = grains;
        this.clock = clock;
        this.metrics = metrics;
        this.events = events;
        this.authPool = pool("brine-auth", workerThreads, AUTH_QUEUE);
        this.strangerPool = pool("brine-auth-new", workerThreads, AUTH_QUEUE);
        this.sessionPool = pool("brine-session", workerThreads, SESSION_QUEUE);
        this.unknownTimer = Executors.newSingleThreadScheduledExecutor(Master.daemonThreads("brine-unknown-sessions"));
        this.unknownSessions = new UnknownSessionAnswers(
                UnknownSessionAnswers.GRACE, UnknownSessionAnswers.CAPACITY, (delay, task) -> {
                    try {
                        unknownTimer.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (RejectedExecutionException e) {
                        // closing: nothing more is answered
                    }
                });
    }

    /** Frames of unknown sessions left unanswered because their connections asked for a session (a restart's). */
    public long unknownSessionsSpared() {
        return unknownSessions.spared();
    }

    /** Frames dropped before a handler saw them: malformed, over a limit, over a rate, or a full queue. */
    public long droppedFrames() {
        return droppedFrames.get();
    }

    /** Auth requests of accepted keys and loopback publishers waiting for a worker. */
    public int authQueueDepth() {
        return authPool.getQueue().size();
    }

    /** Every other unauthenticated frame waiting for a worker (new and unknown keys, Salt's, remote publishers'). */
    public int strangerQueueDepth() {
        return strangerPool.getQueue().size();
    }

    /** Session frames waiting for a worker. */
    public int sessionQueueDepth() {
        return sessionPool.getQueue().size();
    }

    // ---- on the transport thread: decode, bound, hand off; never verify, decrypt or touch the disk here ----

    @Override
    public void onFrame(Peer from, byte[] frame) {
        // The transport counts the frame in flight until it hears handled(): from the pool's task when one took
        // the frame, at once otherwise. Salt requests alike, on both of Salt's transports.
        // A frame no worker took is handled here whatever happened, a bug's exception included: bytes left counted
        // would pause the connection, and in the end every connection, for good.
        boolean taken = false;
        try {
            if (from.framing() != Peer.Framing.MESSAGE || salt.claims(frame)) {
                // Salt's TCP transport on the ZeroMQ ports, or Salt's payload on the ZeroMQ request channel.
                taken = salt.onFrame(from, frame, saltLanes);
            } else {
                taken = dispatch(from, frame);
            }
        } finally {
            if (!taken) {
                transport.handled(from, frame.length);
            }
        }
    }

    /** True when a worker took the frame (and will tell the transport it is handled). */
    private boolean dispatch(Peer from, byte[] frame) {
        if (Resumptions.isResumption(frame)) {
            return onResumption(from, frame);
        }
        Decoded decoded = Codec.decode(frame, FrameLimits.MAX_FRAME, SessionFrame.Direction.MINION_TO_MASTER);
        if (decoded instanceof Decoded.Malformed malformed) {
            // A peer that sends what no brine peer sends (a frame of the master's own among them) loses its
            // connection, and with it its place in the caps.
            drop(from, malformed.reason());
            transport.disconnect(from);
            return false;
        }
        Decoded.Ok ok = (Decoded.Ok) decoded;
        // The codec decoded a frame that travels to the master, so the switch names exactly those (Java 17 cannot
        // switch over the sealed type itself: each record names its constant).
        Message.ToMaster message = (Message.ToMaster) ok.message();
        int size = frame.length;
        return switch (message.toMaster()) {
            case AUTH_REQUEST -> onAuthRequest(from, size, new Signed<>((AuthRequest) message, ok));
            case CLIENT_AUTH ->
                unauthenticated(
                        from,
                        size,
                        IpAddresses.isLoopback(from.remoteAddress()) ? authPool : strangerPool,
                        () -> onClientAuth(from, new Signed<>((ClientAuth) message, ok)));
            case SESSION -> onSessionFrame(from, size, (SessionFrame) message);
        };
    }

    /**
     * A session frame: to the session workers, unless its session is unknown, which a map lookup tells here (a session
     * id is never reused, so one unknown now stays unknown): its answer then waits for the connection to ask for a
     * session ({@link UnknownSessionAnswers}), in the order of the connection's frames.
     */
    private boolean onSessionFrame(Peer from, int size, SessionFrame sealed) {
        if (!sessions.knows(sealed.sessionId())) {
            unknownSessions.unknown(from, () -> {
                try {
                    strangerPool.execute(() -> answerUnknown(from, sealed));
                } catch (RejectedExecutionException e) {
                    drop(from, "the master's work queue is full");
                }
            });
            return false;
        }
        return submit(sessionPool, new InFlight(from, size), inflight -> onSession(from, sealed, inflight));
    }

    /**
     * An auth request within its source's rate goes to its lane; one over it is answered "try later" (signed, paid
     * from the auth work budget, on the strangers' lane) while the source has such answers left, so that minions
     * behind one address after a restart ask again within seconds, not after {@code auth_timeout}.
     */
    private boolean onAuthRequest(Peer from, int size, Signed<AuthRequest> request) {
        unknownSessions.asked(from);
        if (unauthenticated.tryAcquire(from.remoteAddress())) {
            return submit(
                    auth.offersAcceptedKey(request.message()) ? authPool : strangerPool,
                    from,
                    size,
                    () -> onAuth(from, request));
        }
        int retryAfter = unauthenticated.tryLater(from.remoteAddress());
        if (retryAfter < 0) {
            drop(from, "auth over the rate limit");
            return false;
        }
        return submit(
                strangerPool,
                from,
                size,
                () -> auth.tryLater(from, request, retryAfter)
                        .ifPresentOrElse(
                                outcome -> transport.send(from, outcome.reply()), droppedFrames::incrementAndGet));
    }

    /**
     * A resumption frame: read by its own codec; a request is unauthenticated, so rate-limited per source like an auth
     * request, and queued in the known lane when its id has an accepted key and its ticket a ticket key this master
     * holds; a ticket request naming no session is dropped here. It costs no private-key operation.
     */
    private boolean onResumption(Peer from, byte[] frame) {
        Resumption.ToMaster resumption;
        try {
            resumption = Resumptions.decodeToMaster(frame);
        } catch (MalformedException e) {
            drop(from, e.getMessage());
            transport.disconnect(from);
            return false;
        }
        if (resumption instanceof Resumption.TicketRequest ticketRequest) {
            if (!sessions.knows(ticketRequest.sessionId())) {
                // A map lookup here, as for a session frame: a stranger's flood never queues in the known lane.
                drop(from, "a ticket request that is no session's minion's");
                return false;
            }
            // Answered only when sealed under the session's request key: an AES open, rate-limited all the same.
            return unauthenticated(
                    from,
                    frame.length,
                    authPool,
                    () -> resume.ticketFor(ticketRequest)
                            .ifPresentOrElse(
                                    ticket -> transport.send(from, ticket),
                                    () -> drop(from, "a ticket request that is no session's minion's")));
        }
        Resumption.Request request = (Resumption.Request) resumption; // the sealed type's other record
        unknownSessions.asked(from);
        return unauthenticated(
                from,
                frame.length,
                resume.forAcceptedId(request) ? authPool : strangerPool,
                () -> onResume(from, request));
    }

    /**
     * Only auth requests are handled before their sender is authenticated (DESIGN §4.1); each answer costs a
     * private-key operation, so they are rate-limited per source before they queue in their {@code lane}.
     */
    private boolean unauthenticated(Peer from, int size, ThreadPoolExecutor lane, Runnable task) {
        if (!unauthenticated.tryAcquire(from.remoteAddress())) {
            drop(from, "auth over the rate limit");
            return false;
        }
        return submit(lane, from, size, task);
    }

    /**
     * A frame a worker took: the transport hears it is handled when its task ends, or, for a return, when the job
     * cache is done with it (its bytes are held until then).
     */
    private final class InFlight {
        private final Peer from;
        private final int size;
        private final AtomicBoolean released = new AtomicBoolean();
        private volatile boolean deferred;

        InFlight(Peer from, int size) {
            this.from = from;
            this.size = size;
        }

        /** The task hands the release on (to {@link #release}'s caller, later). */
        Runnable defer() {
            deferred = true;
            return this::release;
        }

        void release() {
            if (released.compareAndSet(false, true)) {
                transport.handled(from, size);
            }
        }
    }

    private boolean submit(ThreadPoolExecutor pool, Peer from, int size, Runnable task) {
        return submit(pool, new InFlight(from, size), inflight -> task.run());
    }

    /** Queues {@code task}; true when queued, and then the transport hears the frame is handled as it ends. */
    private boolean submit(ThreadPoolExecutor pool, InFlight inflight, Consumer<InFlight> task) {
        try {
            pool.execute(() -> {
                try {
                    task.accept(inflight);
                } catch (RuntimeException e) {
                    LOG.error("Bug: unexpected failure handling a frame", e);
                    inflight.release();
                } finally {
                    if (!inflight.deferred) {
                        inflight.release();
                    }
                }
            });
            return true;
        } catch (RejectedExecutionException e) {
            drop(inflight.from, "the master's work queue is full");
            return false;
        }
    }

    private void drop(Peer from, String reason) {
        droppedFrames.incrementAndGet();
        drops.dropped(from.remoteAddress(), reason);
    }

    // ---- on the worker pools ----

    private void onAuth(Peer from, Signed<AuthRequest> request) {
        long started = System.nanoTime();
        Optional<AuthService.Outcome> answered = auth.handle(from, request);
        answered.ifPresent(outcome -> {
            // Bind first: a TCP connection must take authenticated frame sizes before the minion hears.
            outcome.session().ifPresent(session -> transport.bind(session.minionId(), from));
            transport.send(from, outcome.reply());
            outcome.session().ifPresent(session -> showChain(session, from));
        });
        if (answered.isEmpty()) {
            droppedFrames
                    .incrementAndGet(); // unanswered: a replay, an older request, a bad signature, the budget spent
        }
        metrics.authLatency(System.nanoTime() - started);
    }

    private void onResume(Peer from, Resumption.Request request) {
        resume.handle(from, request).ifPresent(outcome -> {
            // Bind first, as for an accepted auth: the minion's next frame already takes the session's limits.
            outcome.session().ifPresent(session -> transport.bind(session.minionId(), from));
            transport.send(from, outcome.reply());
            // No auth reply shows a resumed minion the chain: one that was away when the master key was rotated (a
            // restart's rotation among them) follows it here, or it drops every publication once the grace ends.
            outcome.session().ifPresent(session -> showChain(session, from));
        });
    }

    /** The master key's succession records, once it was rotated, in the session just opened (PROTOCOL.md 6.4). */
    private void showChain(MinionSession session, Peer from) {
        List<MasterSuccession> chain = masterChain.get();
        if (!chain.isEmpty()) {
            session.sealAndSend(new SessionMessage.MasterKeySuccession(chain), frame -> transport.send(from, frame));
        }
    }

    private void onClientAuth(Peer from, Signed<ClientAuth> request) {
        publishers.authenticate(from, request).ifPresent(answer -> {
            if (answer.opened()) {
                // Before the reply, as a minion's bind: the publisher's next frame may be a large PublishRequest.
                transport.authenticated(from);
            }
            transport.send(from, answer.reply());
        });
    }

    private void onSession(Peer from, SessionFrame sealed, InFlight inflight) {
        SessionService.Opened opened = sessions.open(from, sealed);
        if (opened instanceof SessionService.Opened.Dropped dropped) {
            drop(from, dropped.reason());
            return;
        }
        if (opened instanceof SessionService.Opened.Unknown unknown) {
            answerUnknown(from, unknown.frame()); // the session ended since its frame arrived
            return;
        }
        if (opened instanceof SessionService.Opened.FromMinion authentic) {
            MinionSession minion = authentic.session();
            if (!from.equals(minion.peer())) {
                transport.bind(minion.minionId(), from); // it reconnected: route its publications here first
            }
            minion.seen(from, clock.millis());
            onMinionMessage(minion, authentic.message(), inflight);
        } else {
            SessionService.Opened.FromPublisher authentic = (SessionService.Opened.FromPublisher) opened;
            authentic.session().seen(from);
            onPublisherMessage(authentic.session(), authentic.message());
        }
    }

    /**
     * A signed SessionUnknown: it costs a private-key operation, so unknown sessions share the auth rate limit per
     * source and the auth work budget; a minion that hears nothing gives its session up after auth_timeout and asks
     * again.
     */
    private void answerUnknown(Peer from, SessionFrame sealed) {
        if (!unauthenticated.tryAcquire(from.remoteAddress())) {
            drop(from, "unknown session over the rate limit");
        } else if (budget.trySpend(from.remoteAddress(), "a SessionUnknown")) {
            LOG.debug("Unknown session from {}: asking it to authenticate again", from.remoteAddress());
            transport.send(from, sessions.unknown(new SessionService.Opened.Unknown(sealed)));
        }
    }

    /**
     * What a minion's session carries (PROTOCOL.md 8.4): the minion is the one its session names. The codec refused
     * any other message in it as malformed.
     */
    private void onMinionMessage(MinionSession session, SessionMessage.FromMinion message, InFlight inflight) {
        // A switch expression, so that javac insists every kind is named.
        Runnable route = switch (message.fromMinion()) {
            case HEARTBEAT ->
                () -> {
                    answer(session, sessions.heartbeat((SessionMessage.Heartbeat) message));
                    rotations.ask(session).ifPresent(ask -> send(session, ask));
                };
            case KEY_REQUEST -> () -> answer(session, List.of(sessions.keyRequest()));
            case GRAINS -> () -> grains.put(session.minionId(), ((SessionMessage.Grains) message).grains());
            case RETURN -> () -> onReturn(session, (SessionMessage.Return) message, inflight);
            // It signs and writes the store: on an auth worker, never on a session worker.
            case KEY_ROTATE ->
                () -> submit(
                        authPool, session.peer(), 0, () -> onKeyRotate(session, (SessionMessage.KeyRotate) message));
        };
        route.run();
    }

    /**
     * A minion's return: refused (acknowledged, so not resent, and stored as a refusal with its reason) when its
     * frame is over {@code max_return_bytes}; held in flight until the job cache is done with it. A return that is not
     * stored is acknowledged with the reason (PROTOCOL.md 6.1).
     */
    private void onReturn(MinionSession session, SessionMessage.Return ret, InFlight inflight) {
        if (inflight.size > maxReturnBytes) {
            SessionMessage.Return refused =
                    ActiveJobs.oversized(ret.jid(), ret.fun(), inflight.size, maxReturnBytes, ret.durationMs());
            drops.dropped(
                    inflight.from.remoteAddress(),
                    "minion " + session.minionId() + ": a return over" + " max_return_bytes (" + maxReturnBytes + ")");
            jobs.onReturn(
                    session.minionId(),
                    refused,
                    (Consumer<String>) stored -> ack(session, ret.jid(), (String) refused.returnValue()),
                    inflight.defer());
            return;
        }
        jobs.onReturn(
                session.minionId(),
                ret,
                (Consumer<String>) refusal -> {
                    if (refusal != null) {
                        drops.dropped(inflight.from.remoteAddress(), session + ": a return refused: " + refusal);
                    }
                    ack(session, ret.jid(), refusal);
                },
                inflight.defer());
    }

    /**
     * A minion's key rotation (PROTOCOL.md 6.3): answered signed, or dropped when it asks again too soon or the key
     * store cannot say whether it recorded it.
     */
    private void onKeyRotate(MinionSession session, SessionMessage.KeyRotate request) {
        rotations
                .rotate(session, request)
                .ifPresentOrElse(
                        reply -> send(session, reply),
                        () -> drop(
                                session.peer(),
                                session + ": a key rotation request not answered (within "
                                        + KeyRotationService.INTERVAL.toSeconds()
                                        + " s of the last answer, or its outcome not known:"
                                        + " see the log)"));
    }

    /**
     * Tells the minion to stop resending {@code jid}. A refusal goes first in an Ack with its reason, which a minion
     * that predates the field cannot decode and drops; the plain Ack after it is the one such a minion acts on.
     */
    private void ack(MinionSession session, String jid, String refusal) {
        if (refusal != null) {
            send(session, new SessionMessage.Ack(List.of(jid), refusal));
        }
        send(session, new SessionMessage.Ack(List.of(jid)));
    }

    /** What a publisher's session carries (PROTOCOL.md 8.7); the codec refused any other message in it. */
    private void onPublisherMessage(PublisherSession session, SessionMessage.FromPublisher message) {
        Runnable route = switch (message.fromPublisher()) {
            case PUBLISH_REQUEST ->
                () -> send(
                        session,
                        publishers.publish(
                                session, (SessionMessage.PublishRequest) message, event -> send(session, event)));
            case JOB_QUERY -> () -> send(session, publishers.query(session, (SessionMessage.JobQuery) message));
            case HEARTBEAT -> () -> send(session, new SessionMessage.HeartbeatReply(0));
            case EVENTS_SUBSCRIBE ->
                () -> events.subscribe(
                        session, ((SessionMessage.EventsSubscribe) message).tag(), event -> send(session, event));
        };
        route.run();
    }

    private void answer(Session session, List<SessionMessage> replies) {
        replies.forEach(reply -> send(session, reply));
    }

    /** Seals {@code message} for {@code session} and sends it on the request channel, to the peer it last used. */
    private boolean send(Session session, SessionMessage message) {
        return session.sealAndSend(message, frame -> transport.send(session.peer(), frame));
    }

    /** Stops the worker pools; frames still queued are not handled. */
    @Override
    public void close() {
        unknownTimer.shutdownNow();
        authPool.shutdownNow();
        strangerPool.shutdownNow();
        sessionPool.shutdownNow();
        try {
            authPool.awaitTermination(5, TimeUnit.SECONDS);
            strangerPool.awaitTermination(5, TimeUnit.SECONDS);
            sessionPool.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static ThreadPoolExecutor pool(String name, int threads, int queue) {
        return new ThreadPoolExecutor(
                threads,
                threads,
                60,
                TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(queue),
                Master.daemonThreads(name),
                new ThreadPoolExecutor.AbortPolicy());
    }
}
