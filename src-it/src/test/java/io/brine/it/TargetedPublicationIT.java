package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.daemon.config.MasterConfig;
import io.brine.master.jobs.StoredReturn;
import io.brine.minion.MinionState;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.message.Publish;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A publication for 3 of 5 minions goes out on those 3 minions' topics only: an eavesdropping subscriber on the
 * publish port sees it on a targeted minion's topic and never on a non-targeted one's or the broadcast topic, and
 * only the 3 return.
 */
class TargetedPublicationIT {

    private static final List<String> ALL = List.of("m1", "m2", "m3", "m4", "m5");

    private Fleet fleet;
    private ZContext zmq;

    /** One message seen by the raw subscriber: its topic and its frame. */
    private record Seen(String topic, byte[] frame) {}

    @AfterEach
    void stop() {
        if (zmq != null) {
            zmq.close();
        }
        if (fleet != null) {
            fleet.close();
        }
    }

    @Test
    void aPublicationForThreeOfFiveMinionsReachesOnlyThoseThree(@TempDir Path dir) throws Exception {
        fleet = new Fleet(dir).seedMasterKeys(120, 121).keysFrom(122);
        fleet.startMaster(b ->
                b.acceptance(MasterConfig.Acceptance.builder().autoAccept(true).build()));
        for (String id : ALL) {
            fleet.startMinion(id);
        }
        await().until(() -> fleet.minions.stream().allMatch(m -> m.minion().state() == MinionState.ACCEPTED));

        // A raw subscriber on a targeted minion's topic, a non-targeted one's and the broadcast topic.
        zmq = new ZContext(1);
        ZMQ.Socket sub = zmq.createSocket(SocketType.SUB);
        sub.subscribe("m/m1/".getBytes(StandardCharsets.US_ASCII));
        sub.subscribe("m/m4/".getBytes(StandardCharsets.US_ASCII));
        sub.subscribe("b/".getBytes(StandardCharsets.US_ASCII));
        sub.connect(
                "tcp://127.0.0.1:" + fleet.master.master().addresses().publish().getPort());
        List<Seen> seen = new CopyOnWriteArrayList<>();

        try (BrineClient client = fleet.rootClient()) {
            // First prove the subscriber hears both minion topics (a SUB joins late): one job to each.
            for (String id : List.of("m4", "m1")) {
                String warmUp = client.publish(BrineClient.Job.of("list", id, "test.ping"))
                        .jid();
                await().until(() -> {
                    drain(sub, seen);
                    return seen.stream()
                            .anyMatch(s -> s.topic().equals("m/" + id + "/") && warmUp.equals(jidOf(s.frame())));
                });
            }
            seen.clear();

            BrineClient.Published published = client.publish(BrineClient.Job.of("list", "m1,m2,m3", "test.ping"));
            assertThat(published.minions()).containsExactly("m1", "m2", "m3");
            assertThat(published.unreachable()).isEmpty();
            assertThat(client.awaitReturns(published.jid(), published.minions(), WAIT, r -> {})
                            .keySet())
                    .containsExactlyInAnyOrder("m1", "m2", "m3");

            // Nothing more comes: not on m4's topic, not broadcast, and no return from m4 or m5.
            await().during(Duration.ofSeconds(1)).until(() -> {
                drain(sub, seen);
                return seen.size() == 1
                        && fleet.master
                                        .master()
                                        .jobs()
                                        .cache()
                                        .returns(published.jid())
                                        .size()
                                == 3;
            });
            assertThat(seen.get(0).topic()).isEqualTo("m/m1/");
            assertThat(jidOf(seen.get(0).frame())).isEqualTo(published.jid());
            assertThat(fleet.master.master().jobs().cache().returns(published.jid()))
                    .extracting(StoredReturn::id)
                    .containsExactlyInAnyOrder("m1", "m2", "m3");
        }
    }

    private static void drain(ZMQ.Socket sub, List<Seen> seen) {
        byte[] topic;
        while ((topic = sub.recv(ZMQ.DONTWAIT)) != null) {
            byte[] frame = sub.hasReceiveMore() ? sub.recv(ZMQ.DONTWAIT) : new byte[0];
            seen.add(new Seen(new String(topic, StandardCharsets.US_ASCII), frame));
        }
    }

    private static String jidOf(byte[] frame) {
        return Codec.decode(frame, FrameLimits.MAX_FRAME) instanceof Decoded.Ok ok
                        && ok.message() instanceof Publish publish
                ? publish.jid()
                : null;
    }
}
