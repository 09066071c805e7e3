package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.MinionConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.master.jobs.StoredReturn;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.testing.TestKeys;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13 item 7: a publication an on-path attacker holds back and delivers after a rotation (while the minion
 * still holds the key of the generation before) is not run, once it is older than publish_max_age.
 */
class WithheldPublicationIT {

    @TempDir
    Path dir;

    private Fleet fleet;
    private ForgingRelay relay;

    @AfterEach
    void stop() throws Exception {
        if (relay != null) {
            relay.close();
        }
        if (fleet != null) {
            fleet.close();
        }
    }

    @Test
    void aPublicationWithheldPastPublishMaxAgeAndDeliveredAfterARotationIsNotRun() throws Exception {
        TestClock clock = new TestClock(); // master's and minion's: their clocks agree
        fleet = new Fleet(dir, clock).transport(TransportKind.TCP);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        relay = new ForgingRelay(fleet.tcpPort(), TestKeys.pair(TestKeys.COUNT - 10), AuthStatus.PENDING);
        relay.mode(ForgingRelay.Mode.PASS);
        MinionDaemon m1 = fleet.startMinion("m1", b -> b.tcpPort(relay.port()));
        Fleet.awaitState(m1, MinionState.ACCEPTED);
        long generation = m1.minion().status().generation();

        relay.withholdNextPublication();
        JobPublisher.Published withheld = fleet.publish("test.ping", List.of("m1"));
        await().until(relay::holdsPublication);

        clock.advance(MinionConfig.DEFAULT_PUBLISH_MAX_AGE.plus(Duration.ofMinutes(1)));
        fleet.master.master().requestRotation("test");
        await().until(() -> m1.minion().status().generation() == generation + 1);
        relay.deliverWithheld();
        // On the same connection after it: once this one's return is in, the withheld one was handled.
        JobPublisher.Published fresh = fleet.publish("test.ping", List.of("m1"));
        fleet.awaitReturns(fresh.jid(), List.of("m1"));

        List<StoredReturn> returns = fleet.master.master().jobs().cache().returns(withheld.jid());
        assertThat(returns).as("the withheld job did not run").isEmpty();
        assertThat(m1.minion().status().stalePublications()).isEqualTo(1);
    }
}
