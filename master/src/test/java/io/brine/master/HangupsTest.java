package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A SIGHUP that comes while the master is starting (logrotate does not wait for it) is handled, not fatal, and acted
 * on once the daemon is up; LogsIT once lost its "Logs reopened" line to this race under load.
 */
class HangupsTest {

    @Test
    void aHangupWhileStartingReopensTheLogsOnceStartedAndLaterOnesReopenAtOnce() {
        AtomicInteger reopened = new AtomicInteger();
        MasterMain.Hangups hangups = new MasterMain.Hangups();

        hangups.hangup();
        hangups.hangup();
        assertThat(reopened).hasValue(0);

        hangups.started(reopened::incrementAndGet);
        assertThat(reopened).as("the hangups while starting, once").hasValue(1);

        hangups.hangup();
        assertThat(reopened).hasValue(2);
    }

    @Test
    void withoutAHangupStartingReopensNothing() {
        AtomicInteger reopened = new AtomicInteger();
        new MasterMain.Hangups().started(reopened::incrementAndGet);
        assertThat(reopened).hasValue(0);
    }
}
