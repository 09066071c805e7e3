package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.client.cli.BrineCli;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.daemon.files.AtomicFiles;
import io.brine.minion.MinionState;
import io.brine.protocol.RootPublisher;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.testing.TestKeys;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code brine events} for a publisher whose {@code publisher_acl} allows {@code web*} and {@code test.*} (issue 30,
 * item 5), beside the local administrator, with web1 and db1 as real minions: it hears of web1 and of the jobs it
 * could have published itself, returns included, and nothing of db1 nor of a job that also targeted db1; and
 * {@code brine events} across a master restart.
 */
class EventScopeIT {

    private static final int CI_KEY = 200;

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    @Test
    void aNarrowPublisherHearsOnlyOfTheMinionsAndJobsItMayTarget() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept())
                .publisherAcl(Map.of("ci", new MasterConfig.PublisherAcl(List.of("web*"), List.of("test.*")))));
        AtomicFiles.ensureDirectory(fleet.masterConfig.pkiDir().resolve("publishers"));
        AtomicFiles.write(
                fleet.masterConfig.pkiDir().resolve("publishers/ci"),
                Pem.bytes(TestKeys.publicPem(CI_KEY)),
                AtomicFiles.PUBLIC_READ);
        // The narrow publisher subscribes first: each event is sent to the subscribers in that order, so whatever
        // the administrator has heard was queued for the narrow publisher before.
        List<SessionMessage.Event> ci = listen(ciClient(), 1);
        List<SessionMessage.Event> admin = listen(fleet.rootClient(), 2);

        fleet.startMinion("web1");
        fleet.startMinion("db1");
        fleet.awaitAll(MinionState.ACCEPTED);
        fleet.awaitSubscribed("web1", "db1");
        String mixed;
        try (BrineClient root = fleet.rootClient()) {
            mixed = root.publish(BrineClient.Job.of("list", "web1,db1", "test.ping"))
                    .jid();
        }
        await().until(() -> tags(admin)
                .containsAll(List.of("brine/job/" + mixed + "/ret/web1", "brine/job/" + mixed + "/ret/db1")));
        String own;
        try (BrineClient client = ciClient()) {
            BrineClient.Published published = client.publish(BrineClient.Job.of("glob", "web*", "test.ping"));
            assertThat(published.minions()).containsExactly("web1");
            own = published.jid();
        }
        // The same session carries every event in order: once it has this one, it has had all before it.
        await().until(() -> tags(ci).contains("brine/job/" + own + "/ret/web1"));

        assertThat(tags(admin))
                .contains(
                        "brine/auth/accepted",
                        "brine/key/minions",
                        "brine/job/" + mixed + "/new",
                        "brine/job/" + own + "/new");
        assertThat(tags(ci))
                .contains("brine/auth/accepted", "brine/key/minions", "brine/job/" + own + "/new")
                .noneMatch(tag -> tag.contains(mixed))
                .noneMatch(tag -> tag.endsWith("/db1"));
        assertThat(ci).allSatisfy(event -> {
            assertThat(event.data().get("id")).as(event.tag()).isIn(null, "web1");
            Object minions = event.data().get("minions");
            if (minions != null) {
                assertThat(((Collection<?>) minions)
                                .stream().map(String::valueOf).toList())
                        .as(event.tag())
                        .containsOnly("web1");
            }
        });
        assertThat(admin).anySatisfy(event -> assertThat(event.data()).containsEntry("id", "db1"));
    }

    /**
     * {@code brine events} (the CLI, in-process) across a real restart of its master: it says on stderr once that it
     * lost the master and once that it has it again, and prints the new master's events; with {@code --no-reconnect}
     * it exits 2 as before.
     */
    @Test
    void brineEventsConnectsAgainAfterAMasterRestartAndSaysSo() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        Cli staying = events();
        Cli leaving = events("--no-reconnect");
        await().until(() -> fleet.master.events().subscribers() == 2);

        fleet.restartMaster();

        assertThat(leaving.exit.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(2);
        assertThat(leaving.err.toString()).startsWith("brine: ").doesNotContain("lost the master");
        await().until(() -> fleet.master.events().subscribers() == 1);
        fleet.startMinion("web1");
        await().until(() -> staying.out.toString().contains("\"tag\":\"brine/auth/accepted\""));
        assertThat(staying.err.toString().lines())
                .hasSize(2)
                .satisfiesExactly(
                        lost -> assertThat(lost).startsWith("brine: lost the master ("),
                        back -> assertThat(back).startsWith("brine: connected to the master again"));
        assertThat(staying.exit).isNotDone();
        staying.thread.interrupt();
    }

    /** One run of the brine CLI on its own thread: its output, its errors, its exit code once it ends. */
    private record Cli(StringWriter out, StringWriter err, CompletableFuture<Integer> exit, Thread thread) {}

    private Cli events(String... options) {
        List<String> args = new ArrayList<>(List.of(
                "events",
                "--out",
                "json",
                "--master",
                "127.0.0.1",
                "--port",
                String.valueOf(fleet.retPort()),
                "--name",
                RootPublisher.NAME,
                "--key",
                fleet.masterConfig.cachedir().resolve(RootPublisher.KEY_FILE).toString(),
                "--master-pub",
                fleet.masterConfig.pkiDir().resolve("master.pub").toString(),
                "--connect-timeout",
                "2"));
        args.addAll(List.of(options));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        Thread thread = new Thread(
                () -> exit.complete(BrineCli.run(
                        args.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true))),
                "brine-events");
        thread.setDaemon(true);
        thread.start();
        return new Cli(out, err, exit, thread);
    }

    private BrineClient ciClient() throws Exception {
        return BrineClient.connect(
                TransportKind.ZEROMQ,
                "127.0.0.1",
                fleet.retPort(),
                "ci",
                TestKeys.pair(CI_KEY),
                (RSAPublicKey) fleet.master.keyStore().masterKeyPair().getPublic(),
                WAIT);
    }

    /**
     * {@code client} subscribed to every event, the {@code subscribers}-th, on a daemon thread that ends when the
     * master closes the session.
     */
    private List<SessionMessage.Event> listen(BrineClient client, int subscribers) {
        List<SessionMessage.Event> heard = new CopyOnWriteArrayList<>();
        Runnable listening = () -> {
            try (client) {
                client.events("brine/*", heard::add);
            } catch (ClientException e) {
                // the fleet closed the master
            }
        };
        Thread thread = new Thread(listening, "events-" + subscribers);
        thread.setDaemon(true);
        thread.start();
        await().until(() -> fleet.master.events().subscribers() == subscribers);
        return heard;
    }

    private static List<String> tags(List<SessionMessage.Event> events) {
        return events.stream().map(SessionMessage.Event::tag).toList();
    }
}
