package io.brine.minion;

import io.brine.minion.auth.MasterPin;
import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.Publications;
import io.brine.protocol.codec.ReplayWindow;
import io.brine.protocol.codec.Signed;
import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.Suite;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides which publications become jobs (PROTOCOL.md 8.3): signed by the pinned master, of a publish key
 * generation the minion holds (a newer one waits for its key), fresh by serial, a jid not seen before, and a box
 * that opens. It holds the publish keys by generation, the serial floor and replay window, the jids seen and the
 * publications waiting for a key; it never sends anything itself, but says what it needs ({@link AwaitKey}).
 *
 * <p>Confined to the minion's event thread.
 */
final class PublicationGate {

    private static final Logger LOG = LoggerFactory.getLogger(PublicationGate.class);
    private static final int MAX_AWAITING_KEY = 64;
    private static final int SEEN_JIDS = 4096;
    /** The current generation and the one before it, for publications still in flight during a rotation. */
    private static final int GENERATIONS_KEPT = 2;

    /** What became of a publication. */
    sealed interface Outcome {}

    /** It passed every check: run its job. */
    record Run(PublishLoad load) implements Outcome {}

    /** It is held until the key of this newer generation arrives: ask the master for it. */
    record AwaitKey(long generation) implements Outcome {}

    /** Dropped (and logged). */
    record Dropped() implements Outcome {}

    private static final Dropped DROPPED = new Dropped();

    private final String id;
    private final MasterPin pin;
    private final StatusFile status;
    private final Clock clock;
    private final Duration maxAge;
    private final WarnThrottle warnings;
    private final TreeMap<Long, SessionKey> publishKeys = new TreeMap<>();
    private long serialFloor;
    private final ReplayWindow serials = new ReplayWindow();
    private final LinkedHashSet<String> seenJids = new LinkedHashSet<>();
    private final Deque<Publish> awaitingKey = new ArrayDeque<>();

    /** @param maxAge {@code publish_max_age}: how long after its signed issue time a publication may still run */
    PublicationGate(String id, MasterPin pin, StatusFile status, Clock clock, Duration maxAge) {
        this.id = id;
        this.pin = pin;
        this.status = status;
        this.clock = clock;
        this.maxAge = maxAge;
        this.warnings = new WarnThrottle(clock);
    }

    /** A new session: its generation's key and serial floor replace what the old session held. */
    void begin(long generation, SessionKey publishKey, long floor) {
        publishKeys.values().forEach(SessionKey::wipe);
        publishKeys.clear();
        publishKeys.put(generation, publishKey);
        serialFloor = floor;
        awaitingKey.forEach(publish -> unkeyed(publish, "a new session began"));
        awaitingKey.clear();
        status.generation(generation);
    }

    /** The newest generation held; -1 before the first session. */
    long currentGeneration() {
        return publishKeys.isEmpty() ? -1 : publishKeys.lastKey();
    }

    /** A publication from the publish channel, during a session. */
    Outcome onPublish(Signed<Publish> signed) {
        Publish publish = signed.message();
        Optional<RSAPublicKey> master = pin.pinned();
        if (master.isEmpty()) {
            return DROPPED;
        }
        if (publish.suite() != Suite.RSA_OAEP_PSS_AES256GCM || !pin.signedByMaster(signed::by, clock.millis())) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.FORGED_PUBLICATION,
                    "Minion {}: publication {} not signed by the" + " master dropped (forged or damaged on the way)",
                    id,
                    MinionIds.printable(publish.jid()));
            return DROPPED;
        }
        return onVerified(publish);
    }

    /** A signed publication: needs its generation's key, a fresh serial and a new jid. */
    private Outcome onVerified(Publish publish) {
        SessionKey key = publishKeys.get(publish.generation());
        if (key == null) {
            if (publish.generation() > currentGeneration()) {
                if (awaitingKey.size() >= MAX_AWAITING_KEY) {
                    unkeyed(awaitingKey.removeFirst(), "more than " + MAX_AWAITING_KEY + " wait for keys");
                }
                awaitingKey.addLast(publish);
                return new AwaitKey(publish.generation());
            }
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.REORDERED_PUBLICATION,
                    "Minion {}: publication {} (generation {},"
                            + " serial {}) not run: it came after its generation's key was replaced (generation {} now)",
                    id,
                    MinionIds.printable(publish.jid()),
                    publish.generation(),
                    publish.serial(),
                    currentGeneration());
            return DROPPED;
        }
        // Further below the newest serial than the window reaches: it may be new, but there is no telling.
        boolean tooLate = serials.highest() - publish.serial() >= ReplayWindow.SIZE;
        if (publish.serial() <= serialFloor
                || seenJids.contains(publish.jid())
                || !tooLate && !serials.accept(publish.serial())) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.REPLAYED_PUBLICATION,
                    "Minion {}: publication {} (serial {})" + " dropped: replayed, or from before this session",
                    id,
                    MinionIds.printable(publish.jid()),
                    publish.serial());
            return DROPPED;
        }
        if (tooLate) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.REORDERED_PUBLICATION,
                    "Minion {}: publication {} (serial {}) not"
                            + " run: it came after serial {}, {} or more later (the replay window)",
                    id,
                    MinionIds.printable(publish.jid()),
                    publish.serial(),
                    serials.highest(),
                    ReplayWindow.SIZE);
            return DROPPED;
        }
        // After the serial window took it: a replay of a publication refused here is dropped above, uncounted.
        if (!fresh(publish)) {
            return DROPPED;
        }
        PublishLoad load;
        try {
            load = Publications.open(key, publish);
        } catch (CryptoException | MalformedException e) {
            warnings.warn(
                    LOG,
                    WarnThrottle.Reason.UNOPENED_PUBLICATION,
                    "Minion {}: publication {} cannot be opened:" + " {}",
                    id,
                    MinionIds.printable(publish.jid()),
                    MinionIds.printable(e.getMessage()));
            return DROPPED;
        }
        rememberJid(publish.jid());
        return new Run(load);
    }

    /**
     * A key update from the master: installs a generation not older than the current one, and returns the jobs of
     * the publications that waited for it.
     */
    List<PublishLoad> install(SessionMessage.KeyUpdate update) {
        if (publishKeys.containsKey(update.generation()) || update.generation() < currentGeneration()) {
            return List.of();
        }
        try {
            publishKeys.put(update.generation(), SessionKey.of(update.publishKey()));
        } catch (CryptoException e) {
            LOG.warn("Minion {}: key update with a bad key dropped", id);
            return List.of();
        }
        while (publishKeys.size() > GENERATIONS_KEPT) {
            publishKeys.pollFirstEntry().getValue().wipe();
        }
        LOG.info("Minion {}: publish key generation {} installed", id, update.generation());
        status.installed(update.generation());
        List<Publish> waiting = List.copyOf(awaitingKey);
        awaitingKey.clear();
        List<PublishLoad> released = new ArrayList<>();
        for (Publish publish : waiting) {
            if (publish.generation() == update.generation()) {
                if (onVerified(publish) instanceof Run run) {
                    released.add(run.load());
                }
            } else if (publish.generation() > update.generation()) {
                awaitingKey.addLast(publish);
            } else {
                unkeyed(publish, "generation " + update.generation() + " came instead");
            }
        }
        return released;
    }

    /**
     * Whether the publication's signed issue time is within {@code publish_max_age} of the minion's clock (and not
     * further ahead than the clock skew the protocol allows): one withheld on the way is refused when it finally
     * comes, even if its generation's key is still held after a rotation.
     */
    private boolean fresh(Publish publish) {
        Instant issued = Instant.ofEpochMilli(publish.issuedMs());
        Instant now = clock.instant();
        Duration age = Duration.between(issued, now);
        if (age.compareTo(maxAge) <= 0 && age.compareTo(Timestamps.MAX_CLOCK_SKEW.negated()) >= 0) {
            return true;
        }
        status.stalePublication();
        long refused = warnings.count(WarnThrottle.Reason.STALE_PUBLICATION);
        if (refused > 0) {
            LOG.warn(
                    "Minion {}: publication {} signed at {} refused: {} s old by this minion's clock ({}), "
                            + "publish_max_age is {} s ({} refused in all: withheld on the way, or the clocks are apart)",
                    id,
                    publish.jid(),
                    issued,
                    age.toSeconds(),
                    now,
                    maxAge.toSeconds(),
                    status.current().stalePublications());
        }
        return false;
    }

    /** A publication held for its generation's key is given up: it is never run, and that is said. */
    private void unkeyed(Publish publish, String why) {
        warnings.warn(
                LOG,
                WarnThrottle.Reason.UNKEYED_PUBLICATION,
                "Minion {}: publication {} (generation {}, serial"
                        + " {}) not run: it waited for its generation's key and {}",
                id,
                MinionIds.printable(publish.jid()),
                publish.generation(),
                publish.serial(),
                why);
    }

    private void rememberJid(String jid) {
        seenJids.add(jid);
        if (seenJids.size() > SEEN_JIDS) {
            var it = seenJids.iterator();
            it.next();
            it.remove();
        }
    }
}
