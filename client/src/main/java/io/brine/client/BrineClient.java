package io.brine.client;

import io.brine.client.channel.ClientChannel;
import io.brine.client.channel.TcpClientChannel;
import io.brine.client.channel.ZmqClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.RootPublisher;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.codec.FrameTooLargeException;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.ReplayWindow;
import io.brine.protocol.codec.Sessions;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.ClientAuth;
import io.brine.protocol.message.FrameType;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionUnknown;
import io.brine.protocol.message.Suite;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Collection;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The publisher API, which the {@code brine} CLI uses too: authenticate to the master, publish jobs, receive their
 * returns as they arrive, query the job cache. One instance is one session on one connection; use it from one
 * thread at a time.
 *
 * <pre>{@code
 * try (BrineClient client = BrineClient.connectLocal(MasterConfig.load(Path.of("/etc/brine")), timeout)) {
 *     var published = client.publish(Job.of("glob", "web*", "test.ping"));
 *     client.awaitReturns(published.jid(), published.minions(), Duration.ofSeconds(5), r -> print(r));
 * }
 * }</pre>
 */
public final class BrineClient implements AutoCloseable {

    /** What to run where: Salt's target type and expression, the function and its arguments. */
    public record Job(
            String targetType,
            String target,
            String fun,
            List<Object> args,
            Map<String, Object> kwargs,
            int timeoutSeconds) {

        public static Job of(String targetType, String target, String fun, Object... args) {
            return new Job(targetType, target, fun, List.of(args), Map.of(), 0);
        }
    }

    /** A job the master accepted: its jid, the minions it targets, those it could not reach. */
    public record Published(String jid, List<String> minions, List<String> unreachable) {}

    private static final SecureRandom RANDOM = new SecureRandom();

    private final ClientChannel channel;
    private final RSAPublicKey masterKey;
    private final byte[] sessionId;
    private final SessionKey requestKey;
    private final ReplayWindow window = new ReplayWindow();
    private final Deque<SessionMessage> pending = new ArrayDeque<>();
    private final Duration timeout;
    private Duration heartbeat = HEARTBEAT;
    private Instant lastSent = Instant.now();
    private long counter;

    private BrineClient(
            ClientChannel channel, RSAPublicKey masterKey, byte[] sessionId, SessionKey requestKey, Duration timeout) {
        this.channel = channel;
        this.masterKey = masterKey;
        this.sessionId = sessionId;
        this.requestKey = requestKey;
        this.timeout = timeout;
    }

    /**
     * Connects as {@code name} with {@code key}, trusting only {@code masterKey}.
     *
     * @param timeout how long to wait for each answer of the master
     */
    public static BrineClient connect(
            TransportKind transport,
            String host,
            int port,
            String name,
            KeyPair key,
            RSAPublicKey masterKey,
            Duration timeout)
            throws ClientException {
        ClientChannel channel;
        try {
            channel = transport == TransportKind.TCP
                    ? new TcpClientChannel(host, port, timeout)
                    : new ZmqClientChannel(host, port);
        } catch (IOException e) {
            throw new ClientException(e.getMessage(), e);
        }
        try {
            return authenticate(channel, name, key, masterKey, timeout);
        } catch (ClientException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * Connects as the local administrator: the key in {@code cachedir/root.pem} (readable only by the master's
     * user) and the master key in {@code pki_dir/master.pub}, on the master's own ports.
     */
    public static BrineClient connectLocal(MasterConfig config, Duration timeout) throws ClientException {
        KeyPair root = readPrivate(
                config.cachedir().resolve(RootPublisher.KEY_FILE),
                "the local publisher key (run brine as the master's user, or pass --key)");
        RSAPublicKey master = readPublic(config.pkiDir().resolve("master.pub"), "the master's public key");
        String host = localHost(config.interfaceAddress());
        TransportKind transport = localTransport(config);
        int port = transport == TransportKind.TCP ? config.tcpPort() : config.retPort();
        return connect(transport, host, port, RootPublisher.NAME, root, master, timeout);
    }

    /** The transport a local publisher uses: ZeroMQ when the master serves it, else TCP. */
    public static TransportKind localTransport(MasterConfig config) {
        return config.transports().contains(TransportKind.ZEROMQ) ? TransportKind.ZEROMQ : TransportKind.TCP;
    }

    /** The address to reach a master bound to {@code bindAddress} from this host. */
    public static String localHost(String bindAddress) {
        return switch (bindAddress) {
            case "0.0.0.0", "*", "" -> "127.0.0.1";
            case "::", "[::]" -> "::1";
            default -> bindAddress;
        };
    }

    public static KeyPair readPrivate(Path file, String what) throws ClientException {
        try {
            return Pem.readPrivateKey(
                    new String(AtomicFiles.readSmall(file, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII));
        } catch (NoSuchFileException e) {
            throw new ClientException("cannot read " + what + ": " + file + " does not exist");
        } catch (AccessDeniedException e) {
            throw new ClientException("cannot read " + what + ": permission denied for " + file);
        } catch (IOException | KeyFormatException e) {
            throw new ClientException("cannot read " + what + " from " + file + ": " + e.getMessage());
        }
    }

    public static RSAPublicKey readPublic(Path file, String what) throws ClientException {
        try {
            return Pem.readPublicKey(
                    new String(AtomicFiles.readSmall(file, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII));
        } catch (NoSuchFileException e) {
            throw new ClientException("cannot read " + what + ": " + file + " does not exist (has the master run?)");
        } catch (IOException | KeyFormatException e) {
            throw new ClientException("cannot read " + what + " from " + file + ": " + e.getMessage());
        }
    }

    private static BrineClient authenticate(
            ClientChannel channel, String name, KeyPair key, RSAPublicKey masterKey, Duration timeout)
            throws ClientException {
        byte[] nonce = new byte[32];
        RANDOM.nextBytes(nonce);
        send(
                channel,
                Codec.encodeSigned(
                        new ClientAuth(
                                Suite.RSA_OAEP_PSS_AES256GCM,
                                name,
                                key.getPublic().getEncoded(),
                                nonce,
                                System.currentTimeMillis()),
                        key.getPrivate()));
        Instant deadline = Instant.now().plus(timeout);
        while (true) {
            Duration left = Duration.between(Instant.now(), deadline);
            byte[] frame = left.isNegative() ? null : receive(channel, left);
            if (frame == null) {
                throw new ClientException("no answer from the master within " + timeout.toSeconds()
                        + " s: is it running, and is this its address and port?");
            }
            if (!(Codec.decode(
                                    frame,
                                    Codec.maxFrameLength(FrameType.AUTH_REPLY),
                                    SessionFrame.Direction.MASTER_TO_MINION)
                            instanceof Decoded.Ok ok)
                    || !(ok.message() instanceof AuthReply reply)
                    || !Arrays.equals(reply.nonce(), nonce)) {
                continue;
            }
            if (!ok.verify(masterKey)) {
                throw new ClientException.Untrusted("the answer is not signed by the expected master key: refusing it");
            }
            if (reply.status() != AuthStatus.ACCEPTED) {
                throw new ClientException.Untrusted("the master refused publisher " + name + ": " + reply.reason());
            }
            try {
                SessionKey requestKey = SessionKey.of(
                        Rsa.unwrap(key.getPrivate(), reply.session().wrappedRequestKey()));
                return new BrineClient(channel, masterKey, reply.session().sessionId(), requestKey, timeout);
            } catch (CryptoException e) {
                throw new ClientException("cannot unwrap the session key: " + e.getMessage());
            }
        }
    }

    /**
     * Publishes a job; throws {@link ClientException.Refused} with the master's reason when it is refused (it runs
     * nowhere). Waits for the answer at least {@link SessionMessage.PublishReply#AWAIT_AT_LEAST}, longer than a
     * master takes to decide; without an answer the job may or may not have been published, and the exception says
     * so.
     */
    public Published publish(Job job) throws ClientException {
        send(new SessionMessage.PublishRequest(
                job.targetType(), job.target(), job.fun(), job.args(), job.kwargs(), job.timeoutSeconds()));
        Duration wait = timeout.compareTo(SessionMessage.PublishReply.AWAIT_AT_LEAST) > 0
                ? timeout
                : SessionMessage.PublishReply.AWAIT_AT_LEAST;
        SessionMessage.PublishReply reply;
        try {
            reply = await(SessionMessage.PublishReply.class, wait);
        } catch (ClientException e) {
            throw new ClientException(
                    e.getMessage() + ": the job may or may not have been published (see 'brine" + " jobs list')", e);
        }
        if (reply.error() != null) {
            throw new ClientException.Refused(reply.error());
        }
        return new Published(reply.jid(), reply.minions(), reply.unreachable());
    }

    /**
     * Receives returns of {@code jid} until every minion in {@code expected} has returned or {@code wait} is over;
     * {@code onReturn} hears each as it arrives. Returns them by minion id, in arrival order. Heartbeats keep the
     * connection open however long the wait.
     */
    public Map<String, SessionMessage.ReturnEvent> awaitReturns(
            String jid, Collection<String> expected, Duration wait, Consumer<SessionMessage.ReturnEvent> onReturn)
            throws ClientException {
        Map<String, SessionMessage.ReturnEvent> returns = new LinkedHashMap<>();
        Set<String> outstanding = new HashSet<>(expected);
        Instant deadline = Instant.now().plus(wait);
        // Returns that arrived while we waited for the publish reply come first.
        for (var it = pending.iterator(); it.hasNext(); ) {
            SessionMessage message = it.next();
            if (message instanceof SessionMessage.ReturnEvent event
                    && event.jid().equals(jid)) {
                it.remove();
                accept(event, returns, outstanding, onReturn);
            }
        }
        while (!outstanding.isEmpty()) {
            Duration left = Duration.between(Instant.now(), deadline);
            if (left.isNegative() || left.isZero()) {
                break;
            }
            SessionMessage message = next(left);
            if (message == null) {
                break;
            }
            if (message instanceof SessionMessage.ReturnEvent event
                    && event.jid().equals(jid)) {
                accept(event, returns, outstanding, onReturn);
            }
        }
        return returns;
    }

    /**
     * How long a waiting client stays quiet before it tells the master it is still there: well under the master's 60 s
     * for a connection with no minion bound (a publisher's, over TCP) and its idle timeouts. For events, an answer to
     * none of them within the client's timeout means the master is gone.
     */
    static final Duration HEARTBEAT = Duration.ofSeconds(5);

    /**
     * Sends a {@code Heartbeat} whenever this client has sent nothing for {@code every} while it waits (default 5 s);
     * for a master whose timeouts were shortened, as tests do.
     */
    public BrineClient heartbeatEvery(Duration every) {
        if (every.isNegative() || every.isZero()) {
            throw new IllegalArgumentException("the heartbeat interval must be positive: " + every);
        }
        this.heartbeat = every;
        return this;
    }

    /**
     * Subscribes to the master's events whose tag matches {@code tagGlob} and hands each to {@code onEvent} until it
     * answers false (PROTOCOL.md, "Events"). Heartbeats keep the session alive while quiet; throws when the connection
     * fails, the master no longer knows the session (it restarted), or nothing came from the master for the client's
     * timeout after a heartbeat (it is gone, or the network is).
     */
    public void events(String tagGlob, Predicate<SessionMessage.Event> onEvent) throws ClientException {
        send(new SessionMessage.EventsSubscribe(tagGlob));
        Instant heard = Instant.now(); // when the master last sent something (or, before it has, the subscription)
        while (true) {
            // next() sends the heartbeats: after a quiet interval, the first one went out about then.
            SessionMessage message = pending.isEmpty() ? next(heartbeat) : pending.removeFirst();
            if (message == null) {
                if (Duration.between(heard, Instant.now()).compareTo(heartbeat.plus(timeout)) >= 0) {
                    throw new ClientException("no answer from the master within " + timeout.toSeconds() + " s");
                }
            } else {
                heard = Instant.now();
                if (message instanceof SessionMessage.Event event && !onEvent.test(event)) {
                    return;
                }
            }
        }
    }

    private static void accept(
            SessionMessage.ReturnEvent event,
            Map<String, SessionMessage.ReturnEvent> returns,
            Set<String> outstanding,
            Consumer<SessionMessage.ReturnEvent> onReturn) {
        if (returns.putIfAbsent(event.minionId(), event) == null) {
            outstanding.remove(event.minionId());
            onReturn.accept(event);
        }
    }

    /** One job from the job cache: load, targeted minions, returns, missing minions. */
    public Map<String, Object> job(String jid) throws ClientException {
        send(new SessionMessage.JobQuery(jid, 0));
        SessionMessage.JobReply reply = await(SessionMessage.JobReply.class, timeout);
        if (reply.error() != null) {
            throw new ClientException(reply.error());
        }
        return reply.document();
    }

    /** The newest {@code limit} jobs in the job cache (0: up to the master's maximum), oldest first. */
    @SuppressWarnings("unchecked")
    public List<Map<String, Object>> jobs(int limit) throws ClientException {
        send(new SessionMessage.JobQuery(null, limit));
        SessionMessage.JobReply reply = await(SessionMessage.JobReply.class, timeout);
        if (reply.error() != null) {
            throw new ClientException(reply.error());
        }
        Object jobs = reply.document().get("jobs");
        return jobs instanceof List<?> list ? (List<Map<String, Object>>) list : List.of();
    }

    private static void send(ClientChannel channel, byte[] frame) throws ClientException {
        try {
            channel.send(frame);
        } catch (IOException e) {
            throw new ClientException(e.getMessage(), e);
        }
    }

    private static byte[] receive(ClientChannel channel, Duration timeout) throws ClientException {
        try {
            return channel.receive(timeout);
        } catch (IOException e) {
            throw new ClientException(e.getMessage(), e);
        }
    }

    private void send(SessionMessage message) throws ClientException {
        SessionFrame sealed =
                Sessions.seal(requestKey, sessionId, SessionFrame.Direction.MINION_TO_MASTER, ++counter, message);
        byte[] frame;
        try {
            frame = Codec.encode(sealed);
        } catch (FrameTooLargeException e) {
            // The master would close the connection on it with no answer: say why here, and send nothing.
            throw new ClientException(
                    "request too large: " + e.size() + " bytes encoded, the master takes at most "
                            + FrameLimits.MAX_FRAME + " (8 MiB); nothing was sent",
                    e);
        }
        send(channel, frame);
        lastSent = Instant.now();
    }

    private <T extends SessionMessage> T await(Class<T> type, Duration wait) throws ClientException {
        Instant deadline = Instant.now().plus(wait);
        while (true) {
            Duration left = Duration.between(Instant.now(), deadline);
            SessionMessage message = left.isNegative() ? null : next(left);
            if (message == null) {
                throw new ClientException("no answer from the master within " + wait.toSeconds() + " s");
            }
            if (type.isInstance(message)) {
                return type.cast(message);
            }
            if (!(message instanceof SessionMessage.HeartbeatReply)) {
                pending.addLast(message);
            }
        }
    }

    /**
     * The next session message from the master, or null on timeout. Frames that fail any check are skipped. Sends a
     * {@code Heartbeat} each time the client has been quiet for the heartbeat interval before {@code wait} is over:
     * the master closes a publisher's TCP connection that sends no frame for 60 s (PROTOCOL.md 8.7).
     */
    private SessionMessage next(Duration wait) throws ClientException {
        Instant deadline = Instant.now().plus(wait);
        while (true) {
            Instant now = Instant.now();
            Duration left = Duration.between(now, deadline);
            if (left.isNegative() || left.isZero()) {
                return null;
            }
            Duration quiet = Duration.between(now, lastSent.plus(heartbeat));
            if (quiet.isNegative() || quiet.isZero()) {
                send(new SessionMessage.Heartbeat(0));
                continue;
            }
            byte[] frame = receive(channel, quiet.compareTo(left) < 0 ? quiet : left);
            if (frame == null) {
                continue;
            }
            Decoded decoded = Codec.decode(frame, FrameLimits.MAX_FRAME, SessionFrame.Direction.MASTER_TO_MINION);
            if (!(decoded instanceof Decoded.Ok ok)) {
                continue;
            }
            if (ok.message() instanceof SessionUnknown unknown
                    && Arrays.equals(unknown.sessionId(), sessionId)
                    && ok.verify(masterKey)) {
                throw new ClientException("the master no longer knows this session (did it restart?)");
            }
            if (!(ok.message() instanceof SessionFrame sealed) || !Arrays.equals(sealed.sessionId(), sessionId)) {
                continue;
            }
            try {
                SessionMessage message = Sessions.open(requestKey, sealed, SessionMessage.ToPublisher.class);
                if (window.accept(sealed.counter())) {
                    return message;
                }
            } catch (CryptoException | MalformedException e) {
                // Not for us, or damaged: skip it.
            }
        }
    }

    @Override
    public void close() {
        requestKey.wipe();
        channel.close();
    }
}
