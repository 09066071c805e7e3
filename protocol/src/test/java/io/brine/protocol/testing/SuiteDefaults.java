package io.brine.protocol.testing;

import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * The whole suite's one default wait: every {@code await()} without its own {@code atMost} gives up after
 * {@link #WAIT}, and looks at its condition at once (no poll delay), then every 100 ms. Registered in
 * {@code META-INF/services} of protocol's test jar, which every module's tests have on their class path, so JUnit
 * applies it before any test of any module runs (surefire and failsafe alike).
 *
 * <p>A generous bound, not a measurement: waits end as soon as their condition holds, and the bound only decides how
 * long a broken build takes to say so. It is long because the build machine is shared (2 cores, a load average of
 * 30 has been seen while the suite ran). Use {@link #WAIT} for the waits Awaitility does not do (a process's exit).
 */
public final class SuiteDefaults implements LauncherSessionListener {

    /** How long any test waits for something that should happen, before it fails. */
    public static final Duration WAIT = Duration.ofSeconds(30);

    /**
     * How long a test waits for a fixed amount of work to finish in another process (a worker that makes a few hundred
     * synced store changes): its time grows with the machine's load (6 s alone, 62 s at a load average of 45), so the
     * bound is larger than {@link #WAIT}; like it, it only decides how long a hung worker takes to fail the build.
     */
    public static final Duration WORK = Duration.ofSeconds(180);

    private static volatile boolean applied;

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        Awaitility.setDefaultTimeout(WAIT);
        // A condition that already holds passes at once: by default Awaitility first waits one poll interval
        // (100 ms), which every wait of the suite paid, most of them on a condition already true.
        Awaitility.setDefaultPollDelay(Duration.ZERO);
        applied = true;
    }

    /** True once JUnit has called this listener in this JVM. */
    public static boolean applied() {
        return applied;
    }
}
