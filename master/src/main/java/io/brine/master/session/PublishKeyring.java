package io.brine.master.session;

import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.SessionMessage;
import java.time.Clock;

/**
 * The publish key of the current generation (Salt's {@code aes}). A rotation makes a fresh random key: keys of
 * different generations are independent, so holding one tells nothing about the next.
 *
 * <p>Generations start from the clock's milliseconds when the master starts, so they increase across restarts;
 * serials likewise start from the clock in microseconds and only ever grow.
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

    public PublishKeyring(Clock clock) {
        this.current = new Generation(clock.millis(), SessionKey.random());
        this.serial = clock.millis() * 1000;
    }

    public Generation current() {
        return current;
    }

    /** Replaces the current generation with a new one and returns it. */
    public synchronized Generation rotate() {
        Generation replaced = current;
        current = new Generation(replaced.number() + 1, SessionKey.random());
        if (previous != null) {
            previous.key().wipe();
        }
        previous = replaced;
        return current;
    }

    /** The next publication serial: strictly greater than every serial handed out before. */
    public synchronized long nextSerial() {
        return ++serial;
    }

    /** The last serial handed out; minions accept only publications above it. */
    public synchronized long serialFloor() {
        return serial;
    }

    /** The current generation's key and serial floor, for one minion's session (PROTOCOL.md 8.5). */
    public SessionMessage.KeyUpdate keyUpdate() {
        Generation generation = current;
        return new SessionMessage.KeyUpdate(generation.number(), generation.key().bytes(), serialFloor());
    }
}
