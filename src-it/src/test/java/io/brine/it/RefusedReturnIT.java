package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.brine.daemon.config.MasterConfig;
import io.brine.master.jobs.StoredReturn;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Issue 13: a minion whose return the master refuses hears why (the Ack's reason, PROTOCOL.md 6.1) and says so at
 * WARN. A real master and the real minion over ZeroMQ.
 */
class RefusedReturnIT {

    @TempDir
    Path dir;

    private Fleet fleet;
    private final ListAppender<ILoggingEvent> minionLog = new ListAppender<>();
    private final Logger sessionLogger = (Logger) LoggerFactory.getLogger("io.brine.minion.SessionChannel");

    @BeforeEach
    void listen() {
        minionLog.start();
        sessionLogger.addAppender(minionLog);
    }

    @AfterEach
    void stop() {
        sessionLogger.detachAppender(minionLog);
        if (fleet != null) {
            fleet.close();
        }
    }

    @Test
    void aMinionLogsWhyTheMasterRefusedItsReturnAtWarn() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()).maxReturnBytes(MasterConfig.MIN_RETURN_BYTES));
        MinionDaemon m1 = fleet.startMinion("m1");
        Fleet.awaitState(m1, MinionState.ACCEPTED);
        fleet.awaitSubscribed("m1");

        JobPublisher.Published job = fleet.master
                .master()
                .jobs()
                .publish(
                        "it",
                        "list",
                        "m1",
                        List.of("m1"),
                        "test.echo",
                        List.of("x".repeat(4 * MasterConfig.MIN_RETURN_BYTES)),
                        Map.of(),
                        10,
                        null);
        StoredReturn stored = fleet.awaitReturns(job.jid(), List.of("m1")).get(0);
        assertThat(stored.success()).isFalse();

        String warned = await().until(
                        () -> minionLog.list.stream()
                                .filter(event -> event.getLevel() == Level.WARN)
                                .map(ILoggingEvent::getFormattedMessage)
                                .filter(line -> line.contains(job.jid()))
                                .findFirst()
                                .orElse(null),
                        line -> line != null);
        assertThat(warned)
                .contains("the master refused the return of job " + job.jid())
                .contains("over max_return_bytes (" + MasterConfig.MIN_RETURN_BYTES + ")");
    }
}
