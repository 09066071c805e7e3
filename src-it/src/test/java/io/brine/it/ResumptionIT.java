package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.TransportKind;
import io.brine.master.MasterDaemon;
import io.brine.master.publish.JobPublisher;
import io.brine.master.resume.TicketKeys;
import io.brine.minion.KeyRotation;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.crypto.Fingerprints;
import io.micrometer.core.instrument.Counter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Session resumption with real daemons on loopback (issue 26, PROTOCOL.md 8.9): after a master restart minions come
 * back with their tickets, and the master spends no private-key operation on them (no auth answer, no SessionUnknown:
 * its metrics count every signed answer); without the ticket keys they authenticate in full, as before.
 */
class ResumptionIT {

    private static final List<String> IDS = List.of("m1", "m2", "m3");

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    @BeforeEach
    void setUp() {
        fleet = new Fleet(dir);
    }

    @ParameterizedTest
    @EnumSource(names = {"ZEROMQ", "TCP"})
    void minionsResumeAfterAMasterRestartWithoutAPrivateKeyOperationAndAuthenticateInFullWithoutTheTicketKeys(
            TransportKind kind) throws Exception {
        fleet.transport(kind);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        for (String id : IDS) {
            fleet.startMinion(id);
        }
        fleet.awaitAll(MinionState.ACCEPTED);
        // Their grains are in: nothing of the first sessions is left queued to reach the next master (a frame of a
        // session it does not know would cost a signed SessionUnknown).
        await().until(() -> IDS.stream()
                .allMatch(id -> fleet.master.master().grains().get(id).size() > 1));
        // And each holds its ticket (status.json's resumable_until, set when the ticket is stored): the master counts a
        // ticket before it is sent, so its count says nothing of what a restart right after it would find.
        await().until(() -> fleet.minions.stream().allMatch(ResumptionIT::holdsTicket));

        MasterDaemon restarted = fleet.restartMaster();
        await().until(() -> restarted.master().sessions().size() == IDS.size()
                && fleet.minions.stream().allMatch(this::resumed));
        assertThat(counted(restarted, "brine.resumptions")).isEqualTo(IDS.size());
        assertThat(signedAnswers(restarted)).isZero();
        ping(kind);
        assertThat(signedAnswers(restarted)).isZero();

        // Without the ticket keys (a restore, a new pki dir) every ticket is refused: a full auth each, as before.
        fleet.stopMaster();
        Files.delete(fleet.masterConfig.pkiDir().resolve(TicketKeys.FILE));
        MasterDaemon withoutKeys = fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        await().until(() -> withoutKeys.master().sessions().size() == IDS.size()
                && fleet.minions.stream()
                        .allMatch(minion -> minion.minion().state() == MinionState.ACCEPTED
                                && "accepted".equals(minion.minion().status().reason())));
        assertThat(counted(withoutKeys, "brine.resumptions.refused")).isEqualTo(IDS.size());
        ping(kind);
    }

    @ParameterizedTest
    @EnumSource(names = {"ZEROMQ", "TCP"})
    void aMinionThatRotatedItsKeyResumesWithTheNewKeysTicketAfterAMasterRestart(TransportKind kind) throws Exception {
        fleet.transport(kind);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        MinionDaemon m1 = fleet.startMinion("m1");
        fleet.awaitAll(MinionState.ACCEPTED);
        await().until(() -> holdsTicket(m1));
        Instant firstTicket = m1.minion().status().resumableUntil();

        CompletableFuture<KeyRotation.Result> rotating = m1.rotateKey();
        await().until(rotating::isDone);
        KeyRotation.Result rotation = rotating.join();
        assertThat(rotation.rotated()).as(rotation.reason()).isTrue();
        // The old key's ticket is given up and one for the new key is asked for and stored (a later expiry).
        await().until(() ->
                holdsTicket(m1) && m1.minion().status().resumableUntil().isAfter(firstTicket));

        MasterDaemon restarted = fleet.restartMaster();
        await().until(() -> restarted.master().sessions().size() == 1 && resumed(m1));
        assertThat(counted(restarted, "brine.resumptions")).isEqualTo(1);
        assertThat(counted(restarted, "brine.resumptions.refused")).isZero();
        assertThat(signedAnswers(restarted)).isZero();
        assertThat(Fingerprints.of(restarted
                        .master()
                        .sessions()
                        .byMinion("m1")
                        .orElseThrow()
                        .publicKey()))
                .isEqualTo(rotation.fingerprint());
        if (kind == TransportKind.ZEROMQ) {
            fleet.awaitSubscribed("m1");
        }
        fleet.awaitReturns(fleet.publish("test.ping", List.of("m1")).jid(), List.of("m1"));
    }

    static boolean holdsTicket(MinionDaemon minion) {
        return minion.minion().status().resumableUntil() != null;
    }

    private boolean resumed(MinionDaemon minion) {
        return minion.minion().state() == MinionState.ACCEPTED
                && "resumed".equals(minion.minion().status().reason());
    }

    private void ping(TransportKind kind) throws Exception {
        if (kind == TransportKind.ZEROMQ) {
            fleet.awaitSubscribed(IDS.toArray(String[]::new));
        }
        JobPublisher.Published job = fleet.publish("test.ping", IDS);
        fleet.awaitReturns(job.jid(), IDS);
    }

    /** Signed answers before a session: auth replies of every outcome, SessionUnknown. One private operation each. */
    static double signedAnswers(MasterDaemon master) {
        return master.metrics().registry().find("brine.auth.answers").counters().stream()
                        .mapToDouble(Counter::count)
                        .sum()
                + counted(master, "brine.auth.budget.answers");
    }

    static double counted(MasterDaemon master, String name) {
        return master.metrics().registry().get(name).functionCounter().count();
    }
}
