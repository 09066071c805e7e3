package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.TransportKind;
import io.brine.store.keys.AdminResult;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Stock salt-minions 3008.2 on a brine master (issue 15), each a real Python process on loopback. */
class SaltMinionsIT {

    @TempDir
    Path dir;
    @AutoClose
    Fleet fleet;
    private final java.util.List<SaltMinionProcess> salts = new java.util.ArrayList<>();

    @BeforeEach
    void setUp() {
        fleet = new Fleet(dir).transport(TransportKind.ZEROMQ);
    }

    @AfterEach
    void stopSalt() throws InterruptedException {
        for (SaltMinionProcess salt : salts) {
            salt.close();
        }
    }

    private SaltMinionProcess startSalt(String id, String transport) throws Exception {
        var addresses = fleet.master.master().addresses();
        SaltMinionProcess salt = SaltMinionProcess.start(id, dir.resolve("salt-" + id), transport,
                addresses.request().getPort(), addresses.publish().getPort());
        salts.add(salt);
        return salt;
    }

    /**
     * Waits until the master honours {@code id}'s SUB: a stock minion says it is ready before its subscription has
     * surely reached the master, and a publication before that is not delivered (as from a Salt master).
     */
    private void awaitSubscribed(String... ids) {
        var transport = (io.brine.transport.zmtp.ZmtpServerTransport) fleet.master.master().transport();
        await().atMost(WAIT).until(() -> transport.subscribedMinions().containsAll(java.util.List.of(ids)));
    }

    @Test
    void aStockSaltMinionOverZeroMqIsPendingThenAcceptedAndSignsIn() throws Exception {
        fleet.startMaster(b -> b.saltMinions(true));
        SaltMinionProcess salt = startSalt("salt1", "zeromq");

        Path pending = fleet.masterConfig.pkiDir().resolve("minions_pre/salt1");
        await().atMost(WAIT).until(() -> {
            salt.assertRunning();
            return Files.exists(pending);
        });
        salt.awaitLog("Waiting");

        AdminResult accepted = fleet.master.keyStore().accept("salt1", null, "test-admin");
        assertThat(accepted.toString()).doesNotContainIgnoringCase("fail");
        assertThat(fleet.masterConfig.pkiDir().resolve("minions/salt1")).exists();

        // Signed in: it trusted and cached the master's key, then finished its start-up requests.
        await().atMost(WAIT).until(() -> Files.exists(salt.dir.resolve("pki/minion_master.pub")));
        salt.awaitLog("Minion is ready to receive requests!");
        assertThat(Files.readString(fleet.masterConfig.cachedir().resolve("audit.log")))
                .contains("auth-pending").contains("salt1");
    }

    @Test
    void jobsReachASaltMinionAndABrineMinionTogetherAndTheirReturnsLandInTheJobCache() throws Exception {
        fleet.startMaster(b -> b.saltMinions(true).acceptance(Fleet.autoAccept()));
        SaltMinionProcess salt = startSalt("salt1", "zeromq");
        var brine = fleet.startMinion("web1");
        Fleet.awaitState(brine, io.brine.minion.MinionState.ACCEPTED);
        salt.awaitLog("Minion is ready to receive requests!");
        awaitSubscribed("salt1", "web1");
        FleetJobs jobs = new FleetJobs(fleet);

        var ping = jobs.publish("glob", "*", "test.ping");
        assertThat(ping.minions()).containsExactly("salt1", "web1");
        var pings = jobs.awaitReturns(ping.jid(), "salt1", "web1");
        assertThat(pings.get("salt1").returnValue()).isEqualTo(true);
        assertThat(pings.get("salt1").success()).isTrue();

        var echo = jobs.publish("list", "salt1", "test.echo", "brine says hello");
        assertThat(jobs.awaitReturns(echo.jid(), "salt1").get("salt1").returnValue()).isEqualTo("brine says hello");

        var run = jobs.publish("glob", "salt*", "cmd.run", "echo from-salt");
        assertThat(run.minions()).containsExactly("salt1");
        assertThat(jobs.awaitReturns(run.jid(), "salt1").get("salt1").returnValue()).isEqualTo("from-salt");

        var grains = jobs.publish("glob", "salt1", "grains.items");
        Object items = jobs.awaitReturns(grains.jid(), "salt1").get("salt1").returnValue();
        assertThat(items).isInstanceOf(java.util.Map.class);
        assertThat(((java.util.Map<?, ?>) items).get("id")).isEqualTo("salt1");

        // bin/brine as the admin runs it: the same shape for both kinds of minion, and the job cache shows it.
        Path conf = Files.createDirectories(dir.resolve("conf"));
        Files.writeString(conf.resolve("master.yaml"), String.join("\n",
                "interface: 127.0.0.1",
                "ret_port: " + fleet.master.master().addresses().request().getPort(),
                "publish_port: " + fleet.master.master().addresses().publish().getPort(),
                "pki_dir: " + fleet.masterConfig.pkiDir(),
                "cachedir: " + fleet.masterConfig.cachedir(),
                ""));
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        int exit = io.brine.master.cli.BrineCli.run(new String[] {"-c", conf.toString(), "--out", "json", "*",
            "test.ping"}, new java.io.PrintWriter(out, true), new java.io.PrintWriter(err, true));
        assertThat(exit).as(err.toString()).isZero();
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readValue(out.toString(), java.util.Map.class))
                .isEqualTo(java.util.Map.of("salt1", true, "web1", true));
        java.io.StringWriter shown = new java.io.StringWriter();
        assertThat(io.brine.master.cli.BrineCli.run(new String[] {"jobs", "show", run.jid(), "-c", conf.toString(),
            "--out", "json"}, new java.io.PrintWriter(shown, true), new java.io.PrintWriter(err, true))).isZero();
        assertThat(shown.toString()).contains("salt1").contains("from-salt");

        // The grains it reported with _pillar select it.
        var byGrain = jobs.publish("grain", "id:salt1", "test.ping");
        assertThat(byGrain.minions()).containsExactly("salt1");
        assertThat(jobs.awaitReturns(byGrain.jid(), "salt1").get("salt1").returnValue()).isEqualTo(true);
    }

    @Test
    void aDeletedSaltMinionReadsNothingPublishedAfterwards() throws Exception {
        fleet.startMaster(b -> b.saltMinions(true));
        SaltMinionProcess removed = startSalt("salt1", "zeromq");
        SaltMinionProcess kept = startSalt("salt2", "zeromq");
        for (String id : java.util.List.of("salt1", "salt2")) {
            await().atMost(WAIT).until(() -> Files.exists(fleet.masterConfig.pkiDir().resolve("minions_pre/" + id)));
            fleet.master.keyStore().accept(id, null, "test-admin");
        }
        removed.awaitLog("Minion is ready to receive requests!");
        kept.awaitLog("Minion is ready to receive requests!");
        awaitSubscribed("salt1", "salt2");
        FleetJobs jobs = new FleetJobs(fleet);
        var before = jobs.publish("glob", "*", "test.ping");
        jobs.awaitReturns(before.jid(), "salt1", "salt2");

        // Deleted: a new offer of its key waits in minions_pre.
        fleet.master.keyStore().delete("salt1", "test-admin");
        var after = jobs.publish("glob", "*", "test.echo", "after the removal");
        assertThat(after.minions()).containsExactly("salt2");
        assertThat(jobs.awaitReturns(after.jid(), "salt2").get("salt2").returnValue()).isEqualTo("after the removal");

        // Both sit on 127.0.0.1, so salt1's subscription still carries salt2's envelopes: it fails their MAC (the
        // aes key rotated on the removal) and asks to sign in again, which files its key anew, unaccepted.
        await().atMost(WAIT).until(() -> Files.exists(fleet.masterConfig.pkiDir().resolve("minions_pre/salt1")));
        assertThat(fleet.masterConfig.pkiDir().resolve("minions/salt1")).doesNotExist();
        assertThat(removed.log()).contains(before.jid()).doesNotContain(after.jid());
        assertThat(kept.log()).contains(after.jid());
    }
}
