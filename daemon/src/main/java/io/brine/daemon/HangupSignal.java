package io.brine.daemon;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGHUP, on which a daemon reopens its logs (logrotate's postrotate, {@code systemctl reload}). Caught with
 * {@code sun.misc.Signal}, the JDK's only way to catch a signal; it is in {@code jdk.unsupported}, exported to every
 * class path application.
 */
public final class HangupSignal {

    private static final Logger LOG = LoggerFactory.getLogger(HangupSignal.class);

    private HangupSignal() {}

    /**
     * Runs {@code onHangup} at each SIGHUP from now on. False, after one WARN saying why, what follows and what to do,
     * when it cannot: the process was started with SIGHUP ignored (nohup, some supervisors), which HotSpot keeps
     * ignored (its {@code JVM_RegisterSignal} installs no handler for an ignored HUP and answers {@code SIG_IGN}, so
     * {@code onHangup} would never run), or the JVM refuses the signal ({@code -Xrs}).
     *
     * @param daemon what the log lines call the process ("master", "minion")
     * @param logs the files it reopens, as an admin knows them ("audit.log and log_file")
     */
    @SuppressWarnings("removal")
    public static boolean handle(String daemon, String logs, Runnable onHangup) {
        sun.misc.SignalHandler before;
        try {
            before = sun.misc.Signal.handle(new sun.misc.Signal("HUP"), signal -> onHangup.run());
        } catch (IllegalArgumentException e) {
            LOG.warn("SIGHUP not handled here ({}): restart the {} to reopen {}", e.getMessage(), daemon, logs);
            return false;
        }
        if (before == sun.misc.SignalHandler.SIG_IGN) {
            LOG.warn(
                    "SIGHUP is ignored: the {} was started with SIGHUP ignored (nohup, or a supervisor that does so),"
                            + " and the JVM keeps it so: kill -HUP and systemctl reload will not reopen {}, and once"
                            + " logrotate moves them the {} goes on writing to the moved files. Start it without nohup"
                            + " (the shipped systemd units do), or rotate with logrotate's copytruncate",
                    daemon,
                    logs,
                    daemon);
            return false;
        }
        return true;
    }
}
