package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.channel.TcpClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.Suite;
import io.brine.protocol.salt.SaltAuthRequest;
import io.brine.protocol.salt.SaltDialect;
import io.brine.protocol.salt.SaltMsgpack;
import io.brine.protocol.salt.SaltRsa;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.tcp.TcpServerOptions;
import io.brine.transport.tcp.TcpServerTransport;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30 item 3: a flood of auth requests from many sources, each of which used to cost the master a signed
 * refusal, beside an accepted minion authenticating again and the local administrator's CLI, over real TCP sockets
 * from 100 loopback addresses. The master's clock stands still, so the auth work budget never refills: the flood is
 * answered exactly {@value #BUDGET} times, whatever the machine's speed. And strangers whose answers hang do not hold
 * up the known: they have a lane of their own.
 */
class AuthFloodTest {

    static final int SOURCES = 100;
    static final int EACH = 10;
    static final int BUDGET = 20;
    static final int FLOODER_KEY = 2;

    @TempDir
    Path dir;

    WiredMaster master;
    final List<Socket> flood = new ArrayList<>();
    TcpClientChannel web1;

    /** Released at the end: sends to the flood's addresses wait for it in {@link HangingStrangers}. */
    final CountDownLatch release = new CountDownLatch(1);

    final AtomicInteger hanging = new AtomicInteger();

    /** The master, serving TCP through {@code wrap}, with web1 accepted. */
    void start(UnaryOperator<ServerTransport> wrap) throws Exception {
        master = WiredMaster.start(
                dir,
                config -> config.saltMinions(true)
                        .authWorkBudget(BUDGET)
                        .acceptance(MasterConfig.Acceptance.builder()
                                .autoAccept(true)
                                .build()),
                undelivered -> wrap.apply(
                        new TcpServerTransport("127.0.0.1", 0, TcpServerOptions.defaults(), null, null, undelivered)),
                new MovableClock(Instant.now()));
        web1 = master.connect();
        HostilePeersTest.accepted(web1, "web1");
    }

    @AfterEach
    void stop() throws IOException {
        release.countDown();
        for (Socket socket : flood) {
            socket.close();
        }
        if (web1 != null) {
            web1.close();
        }
        master.close();
    }

    @Test
    void badSignaturesAreNeverAnsweredAndBadKeysAtMostTheBudgetWhileAcceptedMinionsAndTheCliAreServed()
            throws Exception {
        start(UnaryOperator.identity());
        // The same bytes each time: a bad key or a bad signature is refused before the nonce is remembered.
        byte[] notSignedByItsKey = Codec.encodeSigned(
                new AuthRequest(
                        Suite.RSA_OAEP_PSS_AES256GCM,
                        "flood",
                        TestKeys.pair(FLOODER_KEY).getPublic().getEncoded(),
                        WiredMaster.nonce(),
                        System.currentTimeMillis(),
                        Map.of(),
                        null,
                        null),
                TestKeys.pair(FLOODER_KEY + 1).getPrivate());
        byte[] good = TestKeys.pair(FLOODER_KEY).getPublic().getEncoded();
        byte[] badKey = Codec.encodeSigned(
                new AuthRequest(
                        Suite.RSA_OAEP_PSS_AES256GCM,
                        "flood",
                        Arrays.copyOf(good, good.length + 16),
                        WiredMaster.nonce(),
                        System.currentTimeMillis(),
                        Map.of(),
                        null,
                        null),
                TestKeys.pair(FLOODER_KEY).getPrivate());

        List<Socket> notSigned = flood(notSignedByItsKey);
        List<Socket> badKeys = flood(badKey);

        servesTheKnown();
        // Every flood request decided (audited as refused), whether answered or not.
        await().untilAsserted(() -> assertThat(refusals()).isEqualTo(2 * SOURCES * EACH));
        // A refusal is counted when it is audited, before the budget decides whether it is answered.
        awaitBudgetDecided(SOURCES * EACH);
        assertThat(answers(notSigned))
                .as("answers to requests not signed by the key they offer")
                .isZero();
        assertThat(unanswered("bad_signature")).isEqualTo(SOURCES * EACH);
        assertThat(unanswered("budget")).as("one past the budget and on").isEqualTo(SOURCES * EACH - BUDGET);
        assertThat(budgetAnswers()).isEqualTo(BUDGET);
        await().untilAsserted(() ->
                assertThat(answers(badKeys)).as("signed refusals of a bad key").isEqualTo(BUDGET));
        assertThat(answers(notSigned)).isZero();
    }

    @Test
    void aSaltAuthFloodIsAnsweredAtMostTheBudgetWhileAcceptedMinionsAndTheCliAreServed() throws Exception {
        start(UnaryOperator.identity());
        // An invalid id (upper case) gets Salt's signed {ret: false}, with nothing stored.
        SaltAuthRequest load = SaltAuthRequest.of(
                "FLOOD",
                TestKeys.pair(FLOODER_KEY).getPublic(),
                "f".repeat(32),
                SaltRsa.Encryption.OAEP_SHA1,
                SaltRsa.Signing.PKCS1V15_SHA1,
                Optional.empty(),
                Optional.empty());

        List<Socket> salt = flood(SaltMsgpack.write(load.envelope(), SaltDialect.PAYLOAD));

        servesTheKnown();
        await().untilAsserted(() -> assertThat(refusals()).isEqualTo(SOURCES * EACH));
        awaitBudgetDecided(SOURCES * EACH);
        await().untilAsserted(() ->
                assertThat(answers(salt)).as("Salt's signed {ret: false}").isEqualTo(BUDGET));
        assertThat(unanswered("budget")).as("one past the budget and on").isEqualTo(SOURCES * EACH - BUDGET);
        assertThat(budgetAnswers()).isEqualTo(BUDGET);
    }

    @Test
    void sessionUnknownAnswersArePaidFromTheBudgetAndOnePastItIsNotAnswered() throws Exception {
        start(UnaryOperator.identity());
        List<Socket> strangers = new ArrayList<>();
        for (int i = 0; i <= BUDGET; i++) {
            // A connection each: one answer at most waits for a connection (UnknownSessionAnswers).
            Socket stranger = HostilePeersTest.connect(master, "127.0.1.1");
            flood.add(stranger);
            strangers.add(stranger);
            byte[] sessionId = WiredMaster.nonce();
            HostilePeersTest.frame(
                    stranger,
                    Codec.encode(new SessionFrame(
                            Arrays.copyOf(sessionId, 16), SessionFrame.Direction.MINION_TO_MASTER, 1, new byte[28])));
        }
        await().untilAsserted(() ->
                assertThat(unanswered("budget")).as("one past the budget").isEqualTo(1));
        assertThat(budgetAnswers()).isEqualTo(BUDGET);
        await().untilAsserted(() -> assertThat(answers(strangers)).isEqualTo(BUDGET));
    }

    @Test
    void framesOfALostSessionFollowedByAResumptionOnTheirConnectionCostNoSignature() throws Exception {
        start(UnaryOperator.identity());
        // As after a master restart: the minion's transport delivers what it queued for the old master (three
        // frames of a session this master never opened), then the minion resumes on the same connection.
        Socket minion = HostilePeersTest.connect(master, "127.0.1.2");
        flood.add(minion);
        byte[] sessionId = Arrays.copyOf(WiredMaster.nonce(), 16);
        for (int counter = 1; counter <= 3; counter++) {
            HostilePeersTest.frame(
                    minion,
                    Codec.encode(new SessionFrame(
                            sessionId, SessionFrame.Direction.MINION_TO_MASTER, counter, new byte[28])));
        }
        // A ticket this master cannot open: the resumption is refused (unsigned), so the minion authenticates next.
        Resumption.Grant grant = new Resumption.Grant(
                Arrays.copyOf(WiredMaster.nonce(), 64), Long.MAX_VALUE, new byte[Resumptions.SECRET_LENGTH]);
        HostilePeersTest.frame(
                minion,
                Resumptions.encode(
                        Resumptions.request("web2", grant, WiredMaster.nonce(), System.currentTimeMillis())));

        await().untilAsserted(() -> assertThat(spared()).isEqualTo(3));
        assertThat(budgetAnswers()).as("signed SessionUnknowns").isZero();
        await().untilAsserted(() -> assertThat(answers(List.of(minion)))
                .as("the resumption's refusal")
                .isEqualTo(1));
    }

    @Test
    void framesOfAnUnknownSessionOnAConnectionThatNeverAsksEarnOneSignedAnswer() throws Exception {
        start(UnaryOperator.identity());
        Socket stale = HostilePeersTest.connect(master, "127.0.1.3");
        flood.add(stale);
        byte[] sessionId = Arrays.copyOf(WiredMaster.nonce(), 16);
        for (int counter = 1; counter <= 3; counter++) {
            HostilePeersTest.frame(
                    stale,
                    Codec.encode(new SessionFrame(
                            sessionId, SessionFrame.Direction.MINION_TO_MASTER, counter, new byte[28])));
        }
        await().untilAsserted(() -> assertThat(answers(List.of(stale))).isEqualTo(1));
        await().untilAsserted(() -> assertThat(spared()).isEqualTo(2));
        assertThat(budgetAnswers()).isEqualTo(1);
    }

    @Test
    void strangersWhoseAnswersHangHoldUpNeitherAnAcceptedMinionNorBrine() throws Exception {
        start(HangingStrangers::new);
        byte[] good = TestKeys.pair(FLOODER_KEY).getPublic().getEncoded();
        flood(Codec.encodeSigned(
                new AuthRequest(
                        Suite.RSA_OAEP_PSS_AES256GCM,
                        "flood",
                        Arrays.copyOf(good, good.length + 16),
                        WiredMaster.nonce(),
                        System.currentTimeMillis(),
                        Map.of(),
                        null,
                        null),
                TestKeys.pair(FLOODER_KEY).getPrivate()));
        // Every worker of the strangers' lane is stuck sending a refusal, and the rest of the flood is queued.
        await().until(() -> hanging.get() == master.config().workerThreads());

        servesTheKnown();
    }

    @Test
    void strangersResumingUnderAnAcceptedIdWithATicketNoMasterSealedHoldUpNoAcceptedMinion() throws Exception {
        start(HangingStrangers::new);
        // Naming web1 costs nothing (ids are host names); the ticket's key id is no ticket key's.
        Resumption.Grant forged = new Resumption.Grant(
                Arrays.copyOf(WiredMaster.nonce(), 64), Long.MAX_VALUE, new byte[Resumptions.SECRET_LENGTH]);
        flood(Resumptions.encode(Resumptions.request("web1", forged, WiredMaster.nonce(), System.currentTimeMillis())));
        // Every worker of the strangers' lane is stuck sending a refusal, and the rest of the flood is queued.
        await().until(() -> hanging.get() == master.config().workerThreads());

        servesTheKnown();
    }

    @Test
    void ticketRequestsNamingNoSessionAreDroppedOnArrivalNotQueuedInTheKnownLane() throws Exception {
        start(HangingStrangers::new);
        // web1 signs in from the flood's addresses until every worker of the known lane is stuck sending its answer.
        int workers = master.config().workerThreads();
        for (int i = 0; i < workers; i++) {
            Socket known = HostilePeersTest.connect(master, "127.0.1." + (200 + i));
            flood.add(known);
            HostilePeersTest.frame(
                    known,
                    WiredMaster.authRequest(
                            "web1", HostilePeersTest.MINION_KEY, WiredMaster.nonce(), System.currentTimeMillis() + i));
            int stuck = i + 1; // one at a time: a request overtaken by a newer one opens no session, sends nothing
            await().until(() -> hanging.get() == stuck);
        }
        double droppedBefore = master.master().droppedFrames();

        Resumption.TicketRequest noSession =
                new Resumption.TicketRequest(Arrays.copyOf(WiredMaster.nonce(), 16), new byte[64]);
        flood(Resumptions.encode(noSession));

        await().untilAsserted(() -> assertThat(master.master().droppedFrames() - droppedBefore + knownQueue())
                .as("the flood, dropped or queued")
                .isEqualTo(SOURCES * EACH));
        assertThat(knownQueue()).as("ticket requests queued in the known lane").isZero();
    }

    private double knownQueue() {
        return master.metrics().registry().get("brine.queue.auth").gauge().value();
    }

    /** Sends to the flood's addresses (127.0.1.x) wait until the test ends: the workers sending them with them. */
    final class HangingStrangers extends ForwardingTransport {
        HangingStrangers(ServerTransport inner) {
            super(inner);
        }

        @Override
        public boolean send(Peer peer, byte[] frame) {
            if (peer.remoteAddress().startsWith("127.0.1.")) {
                hanging.incrementAndGet();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return inner.send(peer, frame);
        }
    }

    /**
     * Each of {@value #SOURCES} loopback addresses sends {@code frame} {@value #EACH} times on a connection of its
     * own (under auth_burst with the other floods of a test): the connections.
     */
    private List<Socket> flood(byte[] frame) throws IOException {
        List<Socket> sockets = new ArrayList<>();
        for (int source = 0; source < SOURCES; source++) {
            Socket socket = HostilePeersTest.connect(master, "127.0.1." + (source + 1));
            flood.add(socket);
            sockets.add(socket);
            for (int i = 0; i < EACH; i++) {
                HostilePeersTest.frame(socket, frame);
            }
        }
        return sockets;
    }

    /** web1 authenticates again and the local administrator signs in and lists jobs, with the flood queued. */
    private void servesTheKnown() throws Exception {
        web1.send(WiredMaster.authRequest("web1", HostilePeersTest.MINION_KEY, WiredMaster.nonce()));
        assertThat(HostilePeersTest.reply(web1.receive(HostilePeersTest.ANSWER)).status())
                .isEqualTo(AuthStatus.ACCEPTED);
        try (BrineClient root = master.root()) {
            assertThat(root.jobs(10)).isEmpty();
        }
    }

    /** Until the budget has decided {@code requests} answers, paid or not (it decides after a refusal is counted). */
    private void awaitBudgetDecided(int requests) {
        await().untilAsserted(() -> assertThat(unanswered("budget") + budgetAnswers())
                .as("answers the budget decided")
                .isEqualTo(requests));
    }

    private double unanswered(String reason) {
        FunctionCounter counter = master.metrics()
                .registry()
                .find("brine.auth.unanswered")
                .tag("reason", reason)
                .functionCounter();
        return counter == null ? -1 : counter.count();
    }

    /** Auth requests decided as refused (an existing metric): answered or not. */
    private double refusals() {
        Counter counter = master.metrics()
                .registry()
                .find("brine.auth.answers")
                .tag("outcome", "refused")
                .counter();
        return counter == null ? 0 : counter.count();
    }

    private double spared() {
        FunctionCounter counter = master.metrics()
                .registry()
                .find("brine.sessions.unknown.spared")
                .functionCounter();
        return counter == null ? -1 : counter.count();
    }

    private double budgetAnswers() {
        FunctionCounter counter =
                master.metrics().registry().find("brine.auth.budget.answers").functionCounter();
        return counter == null ? -1 : counter.count();
    }

    /** The frames {@code sockets} received so far, each read whole. */
    private int answers(List<Socket> sockets) throws IOException {
        int answers = 0;
        for (Socket socket : sockets) {
            answers += framesReceived(socket);
        }
        return answers;
    }

    private final Map<Socket, DataInputStream> inputs = new HashMap<>();
    private final Map<Socket, Integer> received = new HashMap<>();

    /** Whole frames {@code socket} received so far, read without blocking (a frame not all there yet waits). */
    private int framesReceived(Socket socket) throws IOException {
        DataInputStream in = inputs.computeIfAbsent(socket, s -> {
            try {
                return new DataInputStream(new BufferedInputStream(s.getInputStream(), 1 << 16));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        int count = received.getOrDefault(socket, 0);
        while (in.available() >= 4) {
            in.mark(1 << 16);
            int length = in.readInt();
            if (in.available() < length) {
                in.reset();
                break;
            }
            in.readFully(new byte[length]);
            count++;
        }
        received.put(socket, count);
        return count;
    }
}
