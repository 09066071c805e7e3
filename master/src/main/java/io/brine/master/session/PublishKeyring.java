package io.brine.master.session;

import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.SessionMessage;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The publish key of the current generation (Salt's {@code aes}). A rotation makes a fresh random key: keys of
 * different generations are independent, so holding one tells nothing about the next.
 *
 * <p>Generations start from the clock's milliseconds when the master starts, so they increase across restarts;
 * serials likewise start from the clock in microseconds and only ever grow. A serial never falls behind the clock in
 * microseconds either, so the masters of a cluster (clocks in step) hand out serials a minion moving between them
 * still takes as new. In a cluster the masters agree on each generation ({@link #candidate}, {@link #install}).
 */
public final class PublishKeyring {

    /** A publish key generation. */
    public record Generation(long number, SessionKey key) {
        @Override
        public String toString() {
            return "Generation[" + number + "]";
        }
    }

    private volatile Generation current;
    /** Kept one rotation longer: a thread may still be copying its key bytes into a reply. */
    private Generation previous;

    private long serial;
    private final Clock clock;
    /** Keys rotated with this one (Salt's {@code aes}, issue 15): same triggers, same moment. */
    private final List<Runnable> rotationListeners = new CopyOnWriteArrayList<>();

    public PublishKeyring(Clock clock) {
        this.clock = clock;
        this.current = new Generation(clock.millis(), SessionKey.random());
        this.serial = clock.millis() * 1000;
    }

    public Generation current() {
        return current;
    }

    /** Replaces the current generation with a new one and returns it: a master alone's rotation. */
    public synchronized Generation rotate() {
        Generation next = candidate();
        install(next);
        return next;
    }

    /** Runs {@code listener} after every rotation and every cluster generation installed, on that thread. */
    public void onRotate(Runnable listener) {
        rotationListeners.add(listener);
    }

    /** A fresh generation after the current one, not installed: what this master proposes to its cluster. */
    public Generation candidate() {
        return new Generation(current.number() + 1, SessionKey.random());
    }

    /**
     * Makes {@code agreed} (the cluster's generation) the current one unless it already is; returns whether it
     * replaced the current generation.
     */
    public synchronized boolean install(Generation agreed) {
        Generation replaced = current;
        if (agreed.number() == replaced.number()) {
            return false;
        }
        current = agreed;
        if (previous != null) {
            previous.key().wipe();
        }
        previous = replaced;
        rotationListeners.forEach(Runnable::run);
        return true;
    }

    /** The next publication serial: strictly greater than every serial handed out before, and than the clock's. */
    public synchronized long nextSerial() {
        serial = Math.max(serial + 1, clock.millis() * 1000);
        return serial;
    }

    /** The last serial handed out; minions accept only publications above it. */
    public synchronized long serialFloor() {
        return serial;
    }

    /** The current generation's key and serial floor, for one minion's session (PROTOCOL.md 8.5). */
    public SessionMessage.KeyUpdate keyUpdate() {
        Generation generation = current;
        return new SessionMessage.KeyUpdate(
                generation.number(), generation.key().bytes(), serialFloor());
    }
}
