package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.TransportKind;
import io.brine.master.jobs.StoredReturn;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.store.keys.AdminResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The same flows, unchanged, on each transport: key exchange and rotation, and the publish-and-return scenario
 * (accept, ping, list and glob targets, cmd.run, async jobs, a deleted minion stops answering).
 */
class TransportParityIT {

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    private Fleet fleet(TransportKind kind) {
        fleet = new Fleet(dir).transport(kind);
        return fleet;
    }

    private void accept(String id) {
        assertThat(fleet.master.keyStore().accept(id, null, "it").status()).isEqualTo(AdminResult.Status.DONE);
    }

    @ParameterizedTest
    @EnumSource(TransportKind.class)
    void pendingUntilAcceptedAndADeletedKeyRotatesThePublishKey(TransportKind kind) throws Exception {
        fleet(kind).startMaster(b -> b);
        MinionDaemon web1 = fleet.startMinion("web1");
        MinionDaemon web2 = fleet.startMinion("web2");
        await().until(() ->
                web1.minion().state() == MinionState.PENDING && web2.minion().state() == MinionState.PENDING);
        assertThat(fleet.masterConfig.pkiDir().resolve("minions_pre/web1")).exists();

        accept("web1");
        accept("web2");
        await().until(() ->
                web1.minion().state() == MinionState.ACCEPTED && web2.minion().state() == MinionState.ACCEPTED);
        assertThat(Files.readString(dir.resolve("minions/web1/pki/minion_master.pub")))
                .isEqualTo(Files.readString(fleet.masterConfig.pkiDir().resolve("master.pub")));
        if (kind == TransportKind.ZEROMQ) {
            // A minion subscribes on the publish port as its session opens; a KeyUpdate sent before the master honours
            // that subscription reaches it only at its next heartbeat (30 s) or first publication (PROTOCOL.md 8.4).
            fleet.awaitSubscribed("web1", "web2");
        }
        long generation = fleet.master.master().keyring().current().number();

        assertThat(fleet.master.keyStore().delete("web2", "it").status()).isEqualTo(AdminResult.Status.DONE);

        await().until(() -> fleet.master.master().keyring().current().number() > generation);
        long rotated = fleet.master.master().keyring().current().number();
        await().until(() -> web1.minion().status().generation() != null
                && web1.minion().status().generation() == rotated);
        // web2's session went first: the new key never reaches it (it learns it was dropped at its next heartbeat,
        // or at once on TCP, where the master closes its connection).
        assertThat(web2.minion().status().generation()).isNotEqualTo(rotated);
        assertThat(fleet.master.master().sessions().all())
                .extracting(s -> s.minionId())
                .containsExactly("web1");
    }

    @ParameterizedTest
    @EnumSource(TransportKind.class)
    void threeMinionsAnswerAndADeletedOneStopsAnswering(TransportKind kind) throws Exception {
        fleet(kind).startMaster(b -> b);
        FleetJobs jobs = new FleetJobs(fleet);
        List<MinionDaemon> minions =
                List.of(fleet.startMinion("web1"), fleet.startMinion("web2"), fleet.startMinion("db1"));
        await().until(() -> minions.stream().allMatch(m -> m.minion().state() == MinionState.PENDING));
        List.of("web1", "web2", "db1").forEach(this::accept);
        await().until(() -> minions.stream().allMatch(m -> m.minion().state() == MinionState.ACCEPTED));

        // ping everyone
        JobPublisher.Published ping = jobs.publish("glob", "*", "test.ping");
        assertThat(ping.minions()).containsExactly("db1", "web1", "web2");
        assertThat(jobs.awaitReturns(ping.jid(), "db1", "web1", "web2").values())
                .allSatisfy(r -> assertThat(r.returnValue()).isEqualTo(true));

        // list and glob targets
        JobPublisher.Published list = jobs.publish("list", "web1,db1", "test.echo", "listed");
        assertThat(list.minions()).containsExactly("db1", "web1");
        assertThat(jobs.awaitReturns(list.jid(), "db1", "web1").get("web1").returnValue())
                .isEqualTo("listed");
        JobPublisher.Published glob = jobs.publish("glob", "web*", "test.ping");
        assertThat(glob.minions()).containsExactly("web1", "web2");
        jobs.awaitReturns(glob.jid(), "web1", "web2");

        // cmd.run
        JobPublisher.Published cmd = jobs.publish("list", "web2", "cmd.run", "echo brine");
        StoredReturn output = jobs.awaitReturns(cmd.jid(), "web2").get("web2");
        assertThat(output.returnValue()).isEqualTo("brine");
        assertThat(output.retcode()).isZero();

        // async: a slow job does not hold up a quick one; both returns land in the job cache
        JobPublisher.Published slow = jobs.publish("glob", "*", "test.sleep", "1");
        JobPublisher.Published quick = jobs.publish("glob", "*", "test.echo", "quick");
        jobs.awaitReturns(quick.jid(), "db1", "web1", "web2");
        assertThat(jobs.returners(slow.jid())).hasSizeLessThan(3);
        jobs.awaitReturns(slow.jid(), "db1", "web1", "web2");

        // a deleted minion stops answering, even when published to by name
        long generation = fleet.master.master().keyring().current().number();
        assertThat(fleet.master.keyStore().delete("db1", "it").status()).isEqualTo(AdminResult.Status.DONE);
        await().until(() -> fleet.master.master().keyring().current().number() > generation);
        JobPublisher.Published after = jobs.publish("glob", "*", "test.ping");
        assertThat(after.minions()).containsExactly("web1", "web2");
        jobs.awaitReturns(after.jid(), "web1", "web2");
        JobPublisher.Published byName = jobs.publishTo(List.of("db1"), "list", "db1", "test.ping");
        JobPublisher.Published check = jobs.publish("glob", "*", "test.ping");
        jobs.awaitReturns(check.jid(), "web1", "web2");
        assertThat(jobs.returns(byName.jid())).isEmpty();
        assertThat(jobs.returners(check.jid())).doesNotContain("db1");
    }
}
