package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.MasterConfig;
import io.brine.master.Master;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionUnknown;
import io.brine.protocol.testing.TestKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Garbage, oversized and unauthenticated frames on the request channel, while real minions carry on. Runs alone: the
 * flood's bound is a rate per second, counted against the clock.
 */
@RunsAlone
class HostileFramesIT {

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    private static byte[] frame(int type, int length) {
        byte[] frame = new byte[length];
        new SecureRandom().nextBytes(frame);
        frame[0] = (byte) Codec.VERSION;
        frame[1] = (byte) type;
        return frame;
    }

    @Test
    void malformedAndOversizedFramesAreRefusedWhileOtherMinionsCarryOn() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b ->
                b.acceptance(MasterConfig.Acceptance.builder().autoAccept(true).build()));
        Master master = fleet.master.master();
        MinionDaemon m1 = fleet.startMinion("m1");
        Fleet.awaitState(m1, MinionState.ACCEPTED);
        fleet.awaitSubscribed("m1");
        long dropped = master.droppedFrames();

        try (ZContext context = new ZContext(1)) {
            ZMQ.Socket hostile = context.createSocket(SocketType.DEALER);
            hostile.setLinger(0);
            hostile.connect("tcp://127.0.0.1:" + fleet.retPort());
            hostile.send(new byte[] {1}); // too short to have a type
            hostile.send(frame(0x7f, 100)); // no such type
            hostile.send(frame(0x10, 100)); // an inner type as an outer frame
            hostile.send(frame(0x02, 100)); // a master's frame type
            hostile.send(frame(0x01, 1024)); // an auth request of noise
            hostile.send(frame(0x01, FrameLimits.MAX_UNAUTHENTICATED + 1)); // auth over 64 KiB
            hostile.send(frame(0x04, 4096)); // a session frame of noise
            // The four refused before parsing are counted; noise that gets parsed is dropped with no answer.
            await().until(() -> master.droppedFrames() >= dropped + 4);
            hostile.setReceiveTimeOut(500);
            assertThat(hostile.recv()).as("no answer to garbage").isNull();

            // A well-formed frame naming a session the master does not know gets only a signed SessionUnknown.
            byte[] sessionId = new byte[16];
            hostile.send(Codec.encode(
                    new SessionFrame(sessionId, SessionFrame.Direction.MINION_TO_MASTER, 7, new byte[40])));
            hostile.setReceiveTimeOut((int) WAIT.toMillis());
            var decoded = Codec.decode(hostile.recv(), FrameLimits.MAX_FRAME);
            assertThat(decoded).isInstanceOfSatisfying(Decoded.Ok.class, ok -> {
                assertThat(ok.message()).isInstanceOfSatisfying(SessionUnknown.class, unknown -> {
                    assertThat(unknown.sessionId()).isEqualTo(sessionId);
                    assertThat(unknown.counter()).isEqualTo(7);
                });
                assertThat(ok.verify(fleet.master.keyStore().masterKeyPair().getPublic()))
                        .isTrue();
            });

            // Over 8 MiB: ZeroMQ drops the sender's connection before the frame reaches the master's heap.
            ZMQ.Socket monitor = monitorDisconnects(context, hostile);
            hostile.send(new byte[FrameLimits.MAX_FRAME + 1]);
            ZMQ.Event event = ZMQ.Event.recv(monitor);
            assertThat(event).isNotNull();
            assertThat(event.getEvent()).isEqualTo(ZMQ.EVENT_DISCONNECTED);
        }

        // The accepted minion carries on, and a new one is still accepted.
        JobPublisher.Published job = fleet.publish("test.ping", List.of("m1"));
        fleet.awaitReturns(job.jid(), List.of("m1"));
        MinionDaemon m2 = fleet.startMinion("m2");
        Fleet.awaitState(m2, MinionState.ACCEPTED);
        assertThat(m1.minion().state()).isEqualTo(MinionState.ACCEPTED);
    }

    @Test
    void anAuthFloodFromOneSourceIsCutAtTheRateLimitThenToldTryLaterThenUnanswered() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.authRatePerSource(5).authBurst(10));
        Master master = fleet.master.master();
        long dropped = master.droppedFrames();

        try (RawMinion flood = new RawMinion(fleet.retPort(), "flood", TestKeys.pair(120))) {
            SecureRandom random = new SecureRandom();
            List<byte[]> requests = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                byte[] nonce = new byte[32];
                random.nextBytes(nonce);
                requests.add(flood.authRequest(nonce));
            }
            long started = System.nanoTime();
            requests.forEach(flood::send);
            // Every request is either answered or dropped (each answer costs a signature, a drop nothing).
            AtomicInteger answered = new AtomicInteger();
            AtomicInteger tryLater = new AtomicInteger();
            await().until(() -> {
                Optional<Decoded.Ok> next;
                while ((next = flood.nextReply(Duration.ofMillis(1))).isPresent()) {
                    answered.incrementAndGet();
                    if (((AuthReply) next.get().message()).reason().contains("too many requests from this address")) {
                        tryLater.incrementAndGet();
                    }
                }
                return master.droppedFrames() - dropped + answered.get() >= 60;
            });
            double seconds = (System.nanoTime() - started) / 1e9;
            int answers = answered.get() - tryLater.get();
            assertThat(master.droppedFrames() - dropped + answered.get()).isEqualTo(60);
            // The burst passes the rate limit; beyond it, only what the bucket refilled (5 a second) while the flood
            // went in, however long that took on this machine. Of what passes, a request not dated later than one
            // already answered from this key (same millisecond, or overtaken on another worker) is dropped unanswered
            // and audited as such (auth_requests), so those count with the answers here.
            long notNewer = auditLinesContaining(NOT_NEWER);
            assertThat(answers + notNewer).isBetween(10L, 10L + (long) Math.ceil(5 * seconds));
            // Past the rate, as many again are told "try later" (signed), then nothing: a bounded cost per source.
            assertThat(tryLater.get()).isBetween(10, 10 + (int) Math.ceil(5 * seconds));

            // An audit line per answered decision, but a pending answer that repeats the last one for its id is
            // audited once (RepeatedPending); nothing for what was dropped or told to try later.
            assertThat(authAuditLines()).isBetween(1L, (long) answers);

            // Once the bucket has refilled, a request is answered again: the source is limited, not banned.
            // (Asking again when unanswered is what a minion does.)
            AuthReply reply =
                    await().ignoreExceptions().until(() -> flood.authenticate(Duration.ofSeconds(1)), r -> r != null);
            assertThat(reply.status()).isEqualTo(AuthStatus.PENDING);
        }
    }

    @Test
    void newKeysBeyondMaxPendingAreRefusedAsFullAndNotStored() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.maxPending(2));
        List<AuthStatus> answers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            try (RawMinion minion = new RawMinion(fleet.retPort(), "new" + i, TestKeys.pair(130 + i))) {
                answers.add(minion.authenticate(WAIT).status());
            }
        }

        assertThat(answers).containsExactly(AuthStatus.PENDING, AuthStatus.PENDING, AuthStatus.FULL);
        assertThat(fleet.masterConfig.pkiDir().resolve("minions_pre/new1")).exists();
        assertThat(fleet.masterConfig.pkiDir().resolve("minions_pre/new2")).doesNotExist();
        fleet.master.keyStore().accept("new0", null, "it");
        try (RawMinion minion = new RawMinion(fleet.retPort(), "new2", TestKeys.pair(132))) {
            assertThat(minion.authenticate(WAIT).status()).isEqualTo(AuthStatus.PENDING);
        }
    }

    private long authAuditLines() throws IOException {
        try (Stream<String> lines = Files.lines(fleet.masterConfig.cachedir().resolve("audit.log"))) {
            // A request not dated later than one already answered from the key is dropped, and audited as such.
            return lines.filter(line -> line.contains("\"event\":\"auth-"))
                    .filter(line -> !line.contains(NOT_NEWER))
                    .count();
        }
    }

    private static final String NOT_NEWER = "not newer than one already taken";

    private long auditLinesContaining(String text) throws IOException {
        try (Stream<String> lines = Files.lines(fleet.masterConfig.cachedir().resolve("audit.log"))) {
            return lines.filter(line -> line.contains(text)).count();
        }
    }

    /** A monitor on {@code socket}'s disconnections. */
    private static ZMQ.Socket monitorDisconnects(ZContext context, ZMQ.Socket socket) {
        String endpoint = "inproc://hostile-monitor";
        socket.monitor(endpoint, ZMQ.EVENT_DISCONNECTED);
        ZMQ.Socket monitor = context.createSocket(SocketType.PAIR);
        monitor.setReceiveTimeOut((int) WAIT.toMillis());
        monitor.connect(endpoint);
        return monitor;
    }
}
