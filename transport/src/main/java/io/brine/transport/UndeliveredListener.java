package io.brine.transport;

import java.util.Set;

/**
 * Told about publications a transport accepted from {@link ServerTransport#publish} but then could not queue, for
 * transports that queue publications on their own thread and find out only there (a minion's queue filled up in
 * the meantime, or it unsubscribed). Together with {@code publish}'s return value this accounts for every minion
 * a publication was meant for: a publication never vanishes silently.
 */
@FunctionalInterface
public interface UndeliveredListener {

    /**
     * Called on a transport thread: enqueue work only.
     *
     * @param minionIds the minions {@code frame} was not queued for
     * @param frame the frame as given to {@code publish} (the same array; do not modify it)
     */
    void onUndelivered(Set<String> minionIds, byte[] frame);
}
