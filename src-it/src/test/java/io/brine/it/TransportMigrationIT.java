package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.TransportKind;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.store.keys.AdminResult;
import java.nio.file.Path;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A master serving ZeroMQ and TCP at once, with minions on each: a fleet half-way through a migration. */
class TransportMigrationIT {

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    @Test
    void oneMasterReachesMinionsOnBothTransports() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.transports(TransportKind.ZEROMQ, TransportKind.TCP));
        MinionDaemon old = fleet.startMinion("old1", TransportKind.ZEROMQ);
        MinionDaemon moved = fleet.startMinion("moved1", TransportKind.TCP);
        await().until(() ->
                old.minion().state() == MinionState.PENDING && moved.minion().state() == MinionState.PENDING);

        for (String id : new String[] {"old1", "moved1"}) {
            assertThat(fleet.master.keyStore().accept(id, null, "it").status()).isEqualTo(AdminResult.Status.DONE);
        }
        await().until(() ->
                old.minion().state() == MinionState.ACCEPTED && moved.minion().state() == MinionState.ACCEPTED);

        FleetJobs jobs = new FleetJobs(fleet);
        JobPublisher.Published ping = jobs.publish("glob", "*", "test.echo", "both");
        assertThat(ping.unreachable()).isEmpty();
        assertThat(jobs.awaitReturns(ping.jid(), "old1", "moved1").values())
                .allSatisfy(r -> assertThat(r.returnValue()).isEqualTo("both"));

        // A rotation reaches both too: each gets the new key on its own transport, and answers under it.
        long generation = fleet.master.master().keyring().current().number();
        fleet.master.master().requestRotation("it");
        await().until(() -> fleet.master.master().keyring().current().number() > generation);
        JobPublisher.Published again = jobs.publish("glob", "*", "test.ping");
        jobs.awaitReturns(again.jid(), "old1", "moved1");
    }
}
