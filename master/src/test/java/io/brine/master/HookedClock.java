package io.brine.master;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;

/**
 * A clock that tells {@code base}'s time and runs the hook set by {@link #onNextRead} once, the next time it is read:
 * given to the one object a test wants to interrupt (the request record, while it records a request), it runs a race
 * at the point where it can happen.
 */
public final class HookedClock extends Clock {

    private final Clock base;
    private volatile Runnable hook;

    public HookedClock(Clock base) {
        this.base = base;
    }

    /** Runs {@code hook} the next time this clock is read, and only then. */
    public void onNextRead(Runnable hook) {
        this.hook = hook;
    }

    @Override
    public ZoneId getZone() {
        return base.getZone();
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Instant instant() {
        Runnable next = hook;
        hook = null;
        if (next != null) {
            next.run();
        }
        return base.instant();
    }
}
