package io.brine.master.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.channel.TcpClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.master.WiredMaster;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.testing.TestKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code brine events} over a real connection: what a subscribed publisher hears, and what its glob leaves out. */
class EventStreamTest {

    private static final int WEB1_KEY = 1;
    private static final int DB1_KEY = 3;
    private static final int CI_KEY = 142;

    @TempDir
    Path dir;

    WiredMaster master;

    @BeforeEach
    void start() throws Exception {
        Path autosign = dir.resolve("autosign.conf");
        Files.writeString(autosign, "web1\n");
        Files.setPosixFilePermissions(autosign, PosixFilePermissions.fromString("rw-------"));
        master = WiredMaster.start(
                dir,
                config -> config.acceptance(MasterConfig.Acceptance.builder()
                                .autosignFile(autosign)
                                .build())
                        .publisherAcl(Map.of("ci", new MasterConfig.PublisherAcl(List.of("web*"), List.of("test.*")))));
        Path ci = Files.createDirectories(master.config().pkiDir().resolve("publishers"))
                .resolve("ci");
        Files.writeString(ci, TestKeys.publicPem(CI_KEY));
    }

    @AfterEach
    void stop() {
        master.close();
    }

    @Test
    void aSubscriberHearsAuthDecisionsKeyChangesAndPublications() throws Exception {
        List<SessionMessage.Event> heard = new CopyOnWriteArrayList<>();
        Thread listener = listen("brine/*", heard);
        try (TcpClientChannel web1 = master.connect()) {
            assertThat(auth(web1, "web1", WEB1_KEY)).isEqualTo(AuthStatus.ACCEPTED);
            assertThat(auth(master.connect(), "db1", DB1_KEY)).isEqualTo(AuthStatus.PENDING);
            String jid;
            try (BrineClient root = master.root()) {
                jid = root.publish(BrineClient.Job.of("glob", "*", "test.ping")).jid();
            }
            await().until(() -> heard.stream().anyMatch(e -> e.tag().equals("brine/job/" + jid + "/new")));
            assertThat(heard)
                    .extracting(SessionMessage.Event::tag)
                    .contains(
                            "brine/auth/accepted", "brine/key/minions", "brine/auth/pending", "brine/key/minions_pre");
            SessionMessage.Event accepted = heard.stream()
                    .filter(e -> e.tag().equals("brine/auth/accepted"))
                    .findFirst()
                    .orElseThrow();
            assertThat(accepted.data()).containsEntry("id", "web1");
            assertThat((String) accepted.data().get("rule")).startsWith("autosign_file");
            assertThat(heard.stream()
                            .filter(e -> e.tag().endsWith("/new"))
                            .findFirst()
                            .orElseThrow()
                            .data())
                    .containsEntry("minions", List.of("web1"));
        } finally {
            listener.interrupt();
        }
    }

    @Test
    void theTagGlobLeavesOtherEventsOut() throws Exception {
        List<SessionMessage.Event> heard = new CopyOnWriteArrayList<>();
        Thread listener = listen("brine/job/*", heard);
        try {
            assertThat(auth(master.connect(), "web1", WEB1_KEY)).isEqualTo(AuthStatus.ACCEPTED);
            try (BrineClient root = master.root()) {
                root.publish(BrineClient.Job.of("glob", "*", "test.ping"));
            }
            await().until(() -> !heard.isEmpty());
            assertThat(heard).extracting(SessionMessage.Event::tag).allMatch(tag -> tag.startsWith("brine/job/"));
        } finally {
            listener.interrupt();
        }
    }

    @Test
    void aPublisherWithAnAclHearsOnlyOfTheMinionsAndFunctionsItMayTarget() throws Exception {
        List<SessionMessage.Event> admin = new CopyOnWriteArrayList<>();
        List<SessionMessage.Event> ci = new CopyOnWriteArrayList<>();
        Thread adminListener = listen("brine/*", admin, master.root(), 1);
        Thread ciListener = listen(
                "brine/*",
                ci,
                BrineClient.connect(
                        TransportKind.TCP,
                        "127.0.0.1",
                        master.port(),
                        "ci",
                        TestKeys.pair(CI_KEY),
                        (RSAPublicKey) WiredMaster.masterKey(),
                        Duration.ofSeconds(10)),
                2);
        try (TcpClientChannel web1 = master.connect();
                BrineClient root = master.root()) {
            assertThat(auth(web1, "web1", WEB1_KEY)).isEqualTo(AuthStatus.ACCEPTED);
            assertThat(auth(master.connect(), "db1", DB1_KEY)).isEqualTo(AuthStatus.PENDING);
            String ping = root.publish(BrineClient.Job.of("list", "web1", "test.ping"))
                    .jid();
            String command = root.publish(BrineClient.Job.of("list", "web1", "cmd.run", "id"))
                    .jid();
            master.master().requestRotation("test");
            // Each event goes to every subscriber in one go: once the admin has it, the publisher had its chance.
            await().until(() -> tags(admin)
                    .containsAll(List.of(
                            "brine/auth/accepted",
                            "brine/auth/pending",
                            "brine/key/minions_pre",
                            "brine/job/" + ping + "/new",
                            "brine/job/" + command + "/new",
                            "brine/key/rotated")));
            await().until(() -> tags(ci).contains("brine/job/" + ping + "/new"));

            assertThat(tags(ci))
                    .contains("brine/auth/accepted", "brine/key/minions")
                    .doesNotContain(
                            "brine/auth/pending",
                            "brine/key/minions_pre",
                            "brine/job/" + command + "/new",
                            "brine/key/rotated");
            assertThat(ci)
                    .allSatisfy(event -> assertThat(event.data().get("id") == null
                                    || event.data().get("id").equals("web1"))
                            .as(event.tag())
                            .isTrue());
            assertThat(ci.stream()
                            .filter(e -> e.tag().endsWith("/new"))
                            .findFirst()
                            .orElseThrow()
                            .data())
                    .containsEntry("fun", "test.ping")
                    .containsEntry("minions", List.of("web1"));
        } finally {
            adminListener.interrupt();
            ciListener.interrupt();
        }
    }

    private static List<String> tags(List<SessionMessage.Event> events) {
        return events.stream().map(SessionMessage.Event::tag).toList();
    }

    /** A root publisher subscribed to {@code glob} on a thread of its own, collecting into {@code heard}. */
    private Thread listen(String glob, List<SessionMessage.Event> heard) throws Exception {
        return listen(glob, heard, master.root(), 1);
    }

    /** {@code client} subscribed to {@code glob}, the {@code subscribers}-th, collecting into {@code heard}. */
    private Thread listen(String glob, List<SessionMessage.Event> heard, BrineClient client, int subscribers) {
        Thread thread = new Thread(
                () -> {
                    try (client) {
                        client.events(glob, event -> {
                            heard.add(event);
                            return !Thread.currentThread().isInterrupted();
                        });
                    } catch (Exception e) {
                        // closed at the end of the test
                    }
                },
                "events-listener");
        thread.setDaemon(true);
        thread.start();
        await().until(() -> master.eventSubscribers() == subscribers);
        return thread;
    }

    private static AuthStatus auth(TcpClientChannel channel, String id, int key) throws Exception {
        channel.send(WiredMaster.authRequest(id, key, WiredMaster.nonce()));
        byte[] frame = channel.receive(Duration.ofSeconds(10));
        return ((AuthReply) ((Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_FRAME)).message()).status();
    }
}
