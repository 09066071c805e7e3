package io.brine.bench;

import java.time.Duration;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * A wait for a count (the master's open files) to reach a goal that gives up only when the count stops growing, not
 * at a fixed deadline: on a shared machine the master may take minutes to accept 10,000 connections and still be
 * getting there, and a deadline sized for a quiet machine (60 s + 1 s per 200 minions) stopped one such run at 8,153
 * of about 10,081 open files. A new highest count is progress; {@code stall} without any ends the wait.
 */
final class GrowthWait {

    /** How long the master's open files may stay below their highest count before the bench gives up. */
    static final Duration STALL = Duration.ofSeconds(60);

    private static final long POLL_MILLIS = 100;

    private GrowthWait() {}

    /**
     * How the wait ended: {@code reached} or not, the last count read, the highest, the time waited and the longest
     * time the count went without a new highest.
     */
    record Outcome(boolean reached, long count, long highest, long waitedNanos, long longestStallNanos) {}

    /** Reads {@code count} until it reaches {@code goal}, or until it has not grown for {@code stall}. */
    static Outcome await(long goal, Duration stall, LongSupplier count) {
        return await(goal, stall, count, System::nanoTime, MasterProcess::sleep);
    }

    /** As {@link #await(long, Duration, LongSupplier)}, on {@code nanoTime}'s clock, pausing with {@code pause}. */
    static Outcome await(
            long goal, Duration stall, LongSupplier count, LongSupplier nanoTime, LongConsumer pauseMillis) {
        long started = nanoTime.getAsLong();
        long grew = started;
        long longest = 0;
        long highest = Long.MIN_VALUE;
        while (true) {
            long now = nanoTime.getAsLong();
            long value = count.getAsLong();
            if (value > highest) {
                highest = value;
                grew = now;
            }
            longest = Math.max(longest, now - grew);
            if (value >= goal) {
                return new Outcome(true, value, highest, now - started, longest);
            }
            if (now - grew >= stall.toNanos()) {
                return new Outcome(false, value, highest, now - started, longest);
            }
            pauseMillis.accept(POLL_MILLIS);
        }
    }
}
