package io.brine.minion;

import io.brine.minion.auth.MasterPin;
import io.brine.minion.auth.MinionKeyring;
import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.codec.Signed;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.Message;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionUnknown;
import io.brine.transport.ClientTransport;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The minion's inbound dispatcher: each frame from the master is decoded once into a {@link Message} and handed, as
 * a record, to the part it concerns: the {@link Handshake} (auth replies), the {@link PublicationGate}
 * (publications), the {@link SessionChannel} (session frames, session-unknown answers). What a part returns (a
 * session to open, a job to run, a key to ask for) the dispatcher carries out; the {@link StatusFile} shows where
 * the minion stands.
 *
 * <p>Every part is confined to the one event thread of the {@link Scheduler}: the transport's threads only hand
 * frames over, the job runner's only hands returns over.
 */
public final class Minion implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Minion.class);

    /**
     * What the minion's parts need from {@code minion.yaml} (MinionDaemon maps it); the keys and the master pin
     * are loaded before, by the daemon.
     */
    public record Settings(
            String id,
            Duration acceptanceWait,
            Duration acceptanceWaitMax,
            boolean rejectedRetry,
            Duration authTimeout,
            Duration heartbeatInterval,
            Path statusFile,
            Map<String, Object> grains,
            byte[] grant,
            String token,
            int returnQueueCapacity,
            Duration returnRetryMax,
            Duration publishMaxAge) {

        @Override
        public String toString() {
            return "Settings[id=" + id + "]";
        }
    }

    /** Receives the jobs of publications that passed every check. Called on the event thread: hand work off. */
    public interface JobHandler {
        void onJob(PublishLoad load);
    }

    /**
     * The minion's parts, wired in dependency order. The session channel comes before the job runner (it is where
     * returns go) and the runner before the {@link Minion} (it is where jobs go), so nothing is bound late.
     */
    record Parts(
            StatusFile status,
            Handshake handshake,
            PublicationGate gate,
            SessionChannel channel,
            KeyRotation rotation,
            WarnThrottle warnings) {

        static Parts wire(
                Settings settings,
                MinionKeyring keys,
                MasterPin pin,
                ClientTransport transport,
                Scheduler loop,
                Clock clock,
                int keysize,
                Optional<Duration> keyMaxAge) {
            return wire(settings, keys, pin, transport, loop, clock, keysize, keyMaxAge, KeyRotation.OWN_THREAD);
        }

        /** @param keyMaker where a key rotation's new key pair is made, off the event thread */
        static Parts wire(
                Settings settings,
                MinionKeyring keys,
                MasterPin pin,
                ClientTransport transport,
                Scheduler loop,
                Clock clock,
                int keysize,
                Optional<Duration> keyMaxAge,
                Executor keyMaker) {
            StatusFile status = new StatusFile(
                    settings.id(),
                    settings.statusFile(),
                    clock,
                    Fingerprints.of(keys.current().getPublic()));
            Handshake handshake = new Handshake(settings, keys, pin, transport, loop, clock, status);
            PublicationGate gate = new PublicationGate(settings.id(), pin, status, clock, settings.publishMaxAge());
            SessionChannel channel = new SessionChannel(
                    settings,
                    pin,
                    transport,
                    loop,
                    clock,
                    gate::currentGeneration,
                    handshake::sessionLost,
                    handshake::reconnect);
            return new Parts(
                    status,
                    handshake,
                    gate,
                    channel,
                    new KeyRotation(settings.id(), keys, pin, status, keysize, clock, keyMaxAge, keyMaker),
                    new WarnThrottle(clock));
        }
    }

    private final Settings settings;
    private final ClientTransport transport;
    private final Scheduler loop;
    private final StatusFile status;
    private final Handshake handshake;
    private final PublicationGate gate;
    private final SessionChannel channel;
    private final KeyRotation rotation;
    /** A key rotation asked for before a session was open: asked as soon as one is. */
    private CompletableFuture<KeyRotation.Result> rotationWanted;
    /** A new key pair for the rotation is being made off the event thread. */
    private boolean makingKey;

    private final JobHandler jobs;
    /** What reaches the minion and is dropped before the handshake, gate or session channel see it. */
    private final WarnThrottle warnings;

    private final CompletableFuture<MinionState> terminated = new CompletableFuture<>();

    /** The minion owns {@code transport} and {@code loop} from here on, and closes both. */
    Minion(Settings settings, ClientTransport transport, Scheduler loop, Parts parts, JobHandler jobs) {
        this.settings = settings;
        this.transport = transport;
        this.loop = loop;
        this.status = parts.status();
        this.handshake = parts.handshake();
        this.gate = parts.gate();
        this.channel = parts.channel();
        this.rotation = parts.rotation();
        this.jobs = jobs;
        this.warnings = parts.warnings();
    }

    /** Connects and starts authenticating. */
    public void start() throws IOException {
        // Queued before the transport starts, so that its connection event comes after.
        loop.execute(handshake::begin);
        transport.start(new ClientTransport.Listener() {
            @Override
            public void onReply(byte[] frame) {
                loop.execute(() -> onFrame(frame));
            }

            @Override
            public void onPublication(byte[] frame) {
                loop.execute(() -> onFrame(frame));
            }

            @Override
            public void onConnected() {
                loop.execute(Minion.this::onConnected);
            }
        });
    }

    public MinionStatus status() {
        return status.current();
    }

    public MinionState state() {
        return status.state();
    }

    public String id() {
        return settings.id();
    }

    /**
     * Completes when the minion stops by itself, on authenticated replies only: rejected (without rejected_retry) by
     * a master it can authenticate, or told of another key by the pinned master itself.
     */
    public CompletableFuture<MinionState> terminated() {
        return terminated;
    }

    /** Queues a job return for the master; resent with back-off until acknowledged. Thread-safe. */
    public void submitReturn(SessionMessage.Return ret) {
        channel.submitReturn(ret);
    }

    /**
     * Asks the master to rotate this minion's key (PROTOCOL.md 6.3), in the open session or as soon as one opens;
     * completes with the master's signed answer. Thread-safe.
     */
    public CompletableFuture<KeyRotation.Result> rotateKey() {
        CompletableFuture<KeyRotation.Result> result = new CompletableFuture<>();
        loop.execute(() -> {
            if (rotationWanted != null) {
                // Asked twice before the first was sent: one request answers both.
                CompletableFuture<KeyRotation.Result> earlier = rotationWanted;
                result.whenComplete((answer, failure) -> earlier.complete(answer));
            }
            rotationWanted = result;
            askRotation();
        });
        return result;
    }

    private void askRotation() {
        // Only over a live session (PROTOCOL.md 6.3): a key made before the first auth would be offered by that
        // auth, and a master with auto_accept would file it for a new id before the rotation was ever asked.
        if (rotationWanted == null || makingKey || channel.sessionId().isEmpty()) {
            return;
        }
        if (rotation.needsKey()) {
            makingKey = true;
            rotation.makeKey()
                    .whenComplete((fresh, failure) -> loop.execute(() -> {
                        makingKey = false;
                        if (rotation.keyMade(fresh, failure, rotationWanted)) {
                            askRotation();
                        } else {
                            rotationWanted = null;
                        }
                    }));
            return;
        }
        channel.sessionId().ifPresent(sessionId -> {
            CompletableFuture<KeyRotation.Result> result = rotationWanted;
            rotationWanted = null;
            channel.send(rotation.request(sessionId, result));
        });
    }

    /** Sends fresh grains to the master. Thread-safe. */
    public void reportGrains(Map<String, Object> grains) {
        loop.execute(() -> channel.send(new SessionMessage.Grains(grains)));
    }

    // ---- on the event thread ----

    private void onConnected() {
        boolean sessionOpen = channel.active();
        if (sessionOpen && handshake.canResume()) {
            // A new connection with a ticket: resume rather than ask with a heartbeat, which a restarted master would
            // answer with a signed SessionUnknown and the minion with a full auth (PROTOCOL.md 8.9).
            channel.close();
            handshake.resumeNow("resuming the session on a new connection");
            return;
        }
        if (sessionOpen) {
            channel.heartbeatNow();
        }
        handshake.onConnected(sessionOpen);
    }

    private void onFrame(byte[] frame) {
        if (terminated.isDone()) {
            return;
        }
        if (Resumptions.isResumption(frame)) {
            onResumption(frame);
            return;
        }
        Decoded decoded = Codec.decode(frame, FrameLimits.MAX_FRAME, SessionFrame.Direction.MASTER_TO_MINION);
        if (decoded instanceof Decoded.Malformed malformed) {
            // A frame that travels to the master (a master never sends one) is malformed here too.
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.MALFORMED_FRAME,
                    "Minion {}: malformed frame from the master" + " dropped: {}",
                    settings.id(),
                    MinionIds.printable(malformed.reason()));
            return;
        }
        Decoded.Ok ok = (Decoded.Ok) decoded;
        Message.ToPeer message = (Message.ToPeer) ok.message();
        // A switch expression over the kind, so that javac insists every frame a master sends is named (Java 17
        // cannot switch over the sealed type itself).
        Runnable route = switch (message.toPeer()) {
            case AUTH_REPLY -> () -> onAuthReply(new Signed<>((AuthReply) message, ok));
            case PUBLISH -> () -> onPublish(new Signed<>((Publish) message, ok));
            case SESSION -> () -> onSessionFrame((SessionFrame) message);
            case SESSION_UNKNOWN -> () -> channel.onSessionUnknown(new Signed<>((SessionUnknown) message, ok));
        };
        route.run();
    }

    private void onAuthReply(Signed<AuthReply> reply) {
        Handshake.Outcome outcome = handshake.onReply(reply);
        if (outcome instanceof Handshake.Accepted accepted) {
            openSession(accepted);
        } else if (outcome instanceof Handshake.Stopped stopped) {
            channel.close();
            terminated.complete(stopped.state());
        }
    }

    /** Session resumption's frames (PROTOCOL.md 8.9), read by their own codec. */
    private void onResumption(byte[] frame) {
        Resumption.ToMinion resumption;
        try {
            resumption = Resumptions.decodeToMinion(frame);
        } catch (MalformedException e) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.MALFORMED_FRAME,
                    "Minion {}: malformed frame from the master" + " dropped: {}",
                    settings.id(),
                    MinionIds.printable(e.getMessage()));
            return;
        }
        if (resumption instanceof Resumption.Reply reply) {
            Handshake.Outcome outcome = handshake.onResumeReply(reply);
            if (outcome instanceof Handshake.Accepted accepted) {
                openSession(accepted);
            }
        } else {
            // The sealed type's other record.
            channel.openTicket((Resumption.Ticket) resumption).ifPresent(handshake::holdTicket);
        }
    }

    private void openSession(Handshake.Accepted accepted) {
        gate.begin(accepted.generation(), accepted.publishKey(), accepted.serialFloor());
        transport.subscribe(settings.id(), accepted.publishPort());
        LOG.info(
                "Minion {}: {} by the master, publish key generation {}",
                settings.id(),
                accepted.resumed() ? "session resumed" : "accepted",
                accepted.generation());
        status.enter(MinionState.ACCEPTED, accepted.resumed() ? "resumed" : "accepted", null);
        channel.open(accepted.sessionId(), accepted.requestKey());
        if (!accepted.resumed()) {
            // A resumed session came with the next ticket; a full auth's asks for one (PROTOCOL.md 8.9).
            channel.requestTicket();
        }
        rotation.sessionOpened(accepted.sessionId()).ifPresent(left -> {
            if (rotationWanted == null) {
                rotationWanted = left;
            } else {
                rotationWanted.whenComplete((result, failure) -> left.complete(result));
            }
        });
        askRotation();
        rotateIfKeyOld();
    }

    /**
     * {@code key_max_age}, and a new key waiting for an admin: checked when a session opens and at each heartbeat
     * answer (PROTOCOL.md 6.3).
     */
    private void rotateIfKeyOld() {
        if (rotationWanted == null && (rotation.pollDue() || rotation.dueByAge())) {
            rotationWanted = new CompletableFuture<>();
            askRotation();
        }
    }

    /** An admin asked this minion to rotate its key ({@code brine-key --rotate-keys}, PROTOCOL.md 6.3). */
    private void onRotationAsked(SessionMessage.KeyRotateAsk ask) {
        if (rotationWanted == null && !makingKey && rotation.dueByAsk(ask.fingerprint())) {
            rotationWanted = new CompletableFuture<>();
            askRotation();
        }
    }

    private void onPublish(Signed<Publish> publish) {
        if (!channel.active()) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.PUBLICATION_WITHOUT_SESSION,
                    "Minion {}: publication {} (serial {})" + " not run: it came while this minion has no session",
                    settings.id(),
                    MinionIds.printable(publish.message().jid()),
                    publish.message().serial());
            return;
        }
        PublicationGate.Outcome outcome = gate.onPublish(publish);
        if (outcome instanceof PublicationGate.Run run) {
            jobs.onJob(run.load());
        } else if (outcome instanceof PublicationGate.AwaitKey await) {
            channel.requestKey(await.generation());
        }
    }

    private void onSessionFrame(SessionFrame sealed) {
        channel.onFrame(sealed).ifPresent(message -> {
            // What a master sends a minion (PROTOCOL.md 8.4); the codec refused any other message as malformed.
            Runnable route = switch (message.toMinion()) {
                case KEY_UPDATE ->
                    () -> gate.install((SessionMessage.KeyUpdate) message).forEach(jobs::onJob);
                case ACK -> () -> channel.acknowledged((SessionMessage.Ack) message);
                case KEY_ROTATE_REPLY ->
                    () -> channel.sessionId().ifPresent(sessionId -> {
                        if (rotation.onReply(sessionId, (SessionMessage.KeyRotateReply) message)) {
                            // The ticket held names the replaced key, which no master resumes now: one for the new
                            // key, which the master's session holds from its answer on (PROTOCOL.md 6.3, 8.9).
                            handshake.dropTicket();
                            channel.requestTicket();
                        }
                    });
                case KEY_ROTATE_ASK -> () -> onRotationAsked((SessionMessage.KeyRotateAsk) message);
                case MASTER_KEY_SUCCESSION ->
                    () -> handshake.onMasterKeySuccession((SessionMessage.MasterKeySuccession) message);
                case HEARTBEAT_REPLY ->
                    () -> {
                        long generation = ((SessionMessage.HeartbeatReply) message).generation();
                        if (generation > gate.currentGeneration()) {
                            channel.requestKey(generation);
                        }
                        rotateIfKeyOld();
                    };
            };
            route.run();
        });
    }

    @Override
    public void close() {
        loop.execute(status::stopped); // dropped when already closed: close is idempotent
        loop.close();
        transport.close();
        terminated.complete(MinionState.STOPPED);
    }
}
