package io.brine.daemon;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * Named steps of a change made in several writes and messages (a minion's key rotation), where a test stops a daemon
 * process to kill it with {@code kill -9} exactly there (RotationCrashIT). Off unless the JVM was started with
 * {@code -Dbrine.crash_points=DIR}: then a step whose name is a file in {@code DIR} removes that file (so it stops
 * once), prints {@code crash point reached: NAME} on standard error and holds the thread that reached it for good;
 * the test waits for that line and sends SIGKILL. Only whoever starts the JVM can set the property, and it can do
 * anything to the process anyway.
 */
public final class CrashPoints {

    public static final String PROPERTY = "brine.crash_points";

    private CrashPoints() {}

    /** Holds the calling thread for good when {@code step} is armed; returns at once otherwise. */
    public static void reach(String step) {
        String dir = System.getProperty(PROPERTY);
        if (dir == null) {
            return;
        }
        try {
            if (!Files.deleteIfExists(Path.of(dir, step))) {
                return;
            }
        } catch (IOException e) {
            return;
        }
        System.err.println("crash point reached: " + step);
        System.err.flush();
        while (true) {
            LockSupport.park();
        }
    }
}
