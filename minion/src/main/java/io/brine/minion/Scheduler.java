package io.brine.minion;

import java.time.Duration;

/**
 * The minion's one event thread and its timers. Every part of the minion ({@link Handshake},
 * {@link PublicationGate}, {@link SessionChannel}, {@link StatusFile}) is confined to this thread: other threads
 * (the transport's, the job runner's) only hand work over with {@link #execute}, and every wait (auth back-off and
 * timeouts, heartbeats, resends) is a {@link #schedule timer} that runs on it.
 *
 * <p>The daemon uses {@link EventThread}; tests use a manual scheduler whose timers fire only when the test moves
 * its clock, so they move time instead of sleeping through back-offs.
 */
public interface Scheduler {

    /** Runs {@code task} on the event thread after everything handed over before it; dropped once closed. */
    void execute(Runnable task);

    /** Runs {@code task} on the event thread once {@code delay} has passed; dropped once closed or cancelled. */
    Timer schedule(Duration delay, Runnable task);

    /** Runs the tasks already handed over, drops pending timers and ends the thread, waiting a few seconds at most. */
    void close();

    /** A pending {@link #schedule} task. */
    interface Timer {
        /** A timer that never fires: the initial value of a part's timer fields, and what a closed scheduler gives. */
        Timer NONE = () -> {};

        /** Keeps the task from running if it has not started; does nothing afterwards. */
        void cancel();
    }
}
