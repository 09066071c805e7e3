package io.brine.master.resume;

import io.brine.cluster.ZkTicketKeys;
import io.brine.daemon.WarnInterval;
import io.brine.daemon.files.AtomicFiles;
import io.brine.daemon.files.TrustedPath;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.SessionKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keys that seal resumption tickets (PROTOCOL.md 8.9), which only masters hold: the current one, which seals new
 * tickets, and the one it replaced, which still opens tickets for one more period. Rotated every {@link #PERIOD_MS};
 * a ticket whose key is older than that is refused (its key retired). Kept in {@code pki_dir/ticket_keys}, mode
 * 0600, written atomically, so that minions resume across a restart; a file that anybody but this user and root could
 * write or read is not used (whoever could write it could forge tickets, whoever could read it open them): an ERROR
 * names it, and fresh keys replace it, so only resumptions are lost. In a cluster ({@link #shared}) the keys are the
 * masters' together, in ZooKeeper ({@link ZkTicketKeys}: wrapped and signed with the master key), so a minion resumes
 * on another master after a failover and on a restarted one; the first master whose current key has sealed for a
 * period rotates them for all. Without either ({@link #inMemory}) the keys last as long as the process. Where the
 * keys are kept, and so how a due key is rotated, is one {@link Keeping} per mode, never absent.
 */
public final class TicketKeys implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TicketKeys.class);
    public static final String FILE = "ticket_keys";
    /** How long a ticket key seals new tickets, and how long after that it still opens them. */
    public static final long PERIOD_MS = 24 * 3_600_000L;

    private static final String HEADER = "brine-ticket-keys 1";
    private static final long CLUSTER_RETRY_MS = 60_000;
    /** A znode others may write can be made unusable at will: one ERROR a minute at most. */
    private static final long UNUSABLE_LOG_INTERVAL_MS = 60_000;

    private static final int MAX_FILE = 4096;
    private static final Set<PosixFilePermission> NOT_OURS = Set.of(
            PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A ticket key: its id (the first bytes of each ticket it seals) and when it began sealing. */
    public record Key(byte[] id, SessionKey key, long createdMs) {
        @Override
        public String toString() {
            return "TicketKey[" + HexFormat.of().formatHex(id) + "]";
        }
    }

    private final Keeping keeping;
    private final Clock clock;
    /** Written under this object's lock; read without it ({@link #find}, {@link #holds}, {@link #current}). */
    private volatile Key current;

    private volatile Key previous;

    private TicketKeys(Keeping keeping, Clock clock, Key current, Key previous) {
        this.keeping = keeping;
        this.clock = clock;
        this.current = current;
        this.previous = previous;
    }

    /** Keys that live in this process only: tickets do not outlive it. */
    public static TicketKeys inMemory(Clock clock) {
        return new TicketKeys(new InMemory(), clock, fresh(clock.millis()), null);
    }

    /**
     * The cluster's keys, or fresh ones made the cluster's when it has none it can use (none yet, or a znode that does
     * not verify or unwrap: an ERROR says so); then the keys each rotation by another master leaves.
     *
     * @throws IOException when ZooKeeper cannot be read or written
     */
    public static TicketKeys shared(ZkTicketKeys cluster, Clock clock) throws IOException {
        Key own = fresh(clock.millis());
        List<Key> agreed = keys(cluster.replace(null, stored(own, null)));
        if (!Arrays.equals(agreed.get(0).id(), own.id())) {
            own.key().wipe();
        }
        TicketKeys keys =
                new TicketKeys(new InCluster(cluster), clock, agreed.get(0), agreed.size() > 1 ? agreed.get(1) : null);
        WarnInterval unusable = new WarnInterval(clock, UNUSABLE_LOG_INTERVAL_MS);
        cluster.watch(heard -> keys.heard(keys(heard)), why -> {
            long suppressed = unusable.due();
            if (suppressed >= 0) {
                LOG.error(
                        "Cluster ticket keys not used: {}. This master keeps its own until keys are written that "
                                + "verify{}",
                        why,
                        suppressed > 0 ? " (and " + suppressed + " more since the last line)" : "");
            }
        });
        return keys;
    }

    /** Another master's rotation (or this one's, heard back); an older set than this master's is not taken back. */
    private synchronized void heard(List<Key> keys) {
        Key first = keys.get(0);
        if (Arrays.equals(first.id(), current.id()) || first.createdMs() < current.createdMs()) {
            return;
        }
        previous = keys.size() > 1 ? keys.get(1) : null; // first: a reader that sees the new key sees its previous
        current = first;
        LOG.info(
                "Ticket keys rotated by another master: {} seals new tickets, {} opens those it sealed for one "
                        + "more period",
                current,
                previous);
    }

    /**
     * Reads {@code file}, or makes it when missing, damaged or not this user's alone (an ERROR says why: its tickets
     * are then refused, and minions authenticate in full once).
     *
     * @throws IOException when the new file cannot be written
     */
    public static TicketKeys open(Path file, Clock clock) throws IOException {
        Optional<String> problem = problem(file);
        if (problem.isEmpty()) {
            try {
                List<Key> keys = parse(AtomicFiles.readSmall(file, MAX_FILE));
                return new TicketKeys(new InFile(file), clock, keys.get(0), keys.size() > 1 ? keys.get(1) : null);
            } catch (NoSuchFileException e) {
                problem = Optional.empty();
            } catch (IOException | RuntimeException e) {
                problem = Optional.of(file + " cannot be read: " + e.getMessage());
            }
        }
        problem.ifPresent(why -> LOG.error(
                "Ticket keys not used: {}. New keys replace them: minions holding tickets "
                        + "authenticate in full once",
                why));
        if (AtomicFiles.attributes(file).isPresent()) {
            AtomicFiles.delete(file);
        }
        InFile inFile = new InFile(file);
        TicketKeys keys = new TicketKeys(inFile, clock, fresh(clock.millis()), null);
        inFile.save(keys);
        return keys;
    }

    /**
     * The key that seals new tickets; rotated first when it has sealed for a period, or when it is dated more than the
     * clock skew ahead (made while this master's clock, or another master's, was ahead): else it would seal, and open
     * its tickets, until the clock caught up, where a theft must expose at most two days of resumptions. In a cluster
     * one worker writes the candidate to ZooKeeper, holding no lock (Curator may retry for a minute while ZooKeeper is
     * out of reach): the other workers, and {@link #find}, go on with the due key, which opens its tickets on every
     * master for a period more.
     */
    public Key current() throws IOException {
        long now = clock.millis();
        Key sealing = current;
        if (!due(sealing, now)) {
            return sealing;
        }
        return keeping.rotate(this, sealing, now);
    }

    /** Where the keys are kept, which decides how a due key is rotated: one per mode. */
    private sealed interface Keeping permits Alone, InCluster {
        /** Rotates {@code sealing}, due at {@code nowMs}; returns the key that seals from now on. */
        Key rotate(TicketKeys keys, Key sealing, long nowMs) throws IOException;

        /** Stops what the keeping started. */
        void close();
    }

    /** A master alone rotates its keys itself, under the lock, and keeps them ({@link #save}) before it seals. */
    private abstract static sealed class Alone implements Keeping permits InMemory, InFile {
        @Override
        public Key rotate(TicketKeys keys, Key sealing, long nowMs) throws IOException {
            synchronized (keys) {
                if (due(keys.current, nowMs)) {
                    keys.install(keys.current, fresh(nowMs));
                    save(keys);
                }
                return keys.current;
            }
        }

        /** Keeps {@code keys}' current and previous key; under its lock, or before it is shared. */
        abstract void save(TicketKeys keys) throws IOException;

        @Override
        public void close() {}
    }

    /** In this process only: the keys last as long as it. */
    private static final class InMemory extends Alone {
        @Override
        void save(TicketKeys keys) {}
    }

    /** In {@code pki_dir/ticket_keys}, mode 0600, written atomically at each rotation: they outlive a restart. */
    private static final class InFile extends Alone {
        private final Path file;

        InFile(Path file) {
            this.file = file;
        }

        @Override
        void save(TicketKeys keys) throws IOException {
            StringBuilder text = new StringBuilder(HEADER).append('\n');
            for (Key key : keys.previous == null ? List.of(keys.current) : List.of(keys.current, keys.previous)) {
                byte[] bytes = key.key().bytes();
                text.append(HexFormat.of().formatHex(key.id()))
                        .append(' ')
                        .append(key.createdMs())
                        .append(' ')
                        .append(Base64.getEncoder().encodeToString(bytes))
                        .append('\n');
                Arrays.fill(bytes, (byte) 0);
            }
            AtomicFiles.write(file, text.toString().getBytes(StandardCharsets.US_ASCII), AtomicFiles.OWNER_RW);
        }
    }

    /** In ZooKeeper, the cluster's masters' together: rotated by one worker, holding no lock ({@link #current}). */
    private static final class InCluster implements Keeping {
        private final ZkTicketKeys cluster;
        /** When a rotation through ZooKeeper that failed is tried again. */
        private volatile long nextAttemptMs = Long.MIN_VALUE;
        /** A worker is writing this master's candidate to ZooKeeper: the others seal with the due key meanwhile. */
        private final AtomicBoolean rotating = new AtomicBoolean();

        InCluster(ZkTicketKeys cluster) {
            this.cluster = cluster;
        }

        @Override
        public Key rotate(TicketKeys keys, Key sealing, long nowMs) throws IOException {
            if (nowMs < nextAttemptMs || !rotating.compareAndSet(false, true)) {
                return sealing;
            }
            try {
                // Of the masters whose key is due, one writes its candidate; the others take its keys.
                Key candidate = fresh(nowMs);
                List<Key> agreed;
                try {
                    agreed = keys(cluster.replace(sealing.id(), stored(candidate, sealing)));
                } catch (IOException e) {
                    candidate.key().wipe();
                    nextAttemptMs = nowMs + CLUSTER_RETRY_MS;
                    LOG.warn(
                            "Ticket key not rotated: {}; {} seals on, tried again in {} s",
                            e.getMessage(),
                            sealing,
                            CLUSTER_RETRY_MS / 1000);
                    return keys.current;
                }
                if (!Arrays.equals(agreed.get(0).id(), candidate.id())) {
                    candidate.key().wipe();
                    keys.heard(agreed);
                    return keys.current;
                }
                synchronized (keys) {
                    if (keys.current == sealing) {
                        keys.install(sealing, candidate);
                    } else {
                        candidate.key().wipe(); // the watch heard the write first and took the znode's copy
                    }
                    return keys.current;
                }
            } finally {
                rotating.set(false);
            }
        }

        /** Stops hearing the cluster's rotations. */
        @Override
        public void close() {
            cluster.close();
        }
    }

    private static boolean due(Key key, long nowMs) {
        return nowMs - key.createdMs() >= PERIOD_MS || key.createdMs() - nowMs > Timestamps.MAX_CLOCK_SKEW.toMillis();
    }

    /** {@code candidate} seals from now on, {@code replaced} opens its tickets one period more; under the lock. */
    private void install(Key replaced, Key candidate) {
        Key dropped = previous;
        previous = replaced; // first: a reader that sees the new key sees its previous
        current = candidate;
        if (dropped != null && dropped != replaced) {
            dropped.key().wipe();
        }
        LOG.info(
                "Ticket key rotated: {} seals new tickets, {} opens those it sealed for one more period",
                candidate,
                replaced);
    }

    /** Stops hearing the cluster's rotations (in a cluster). */
    @Override
    public void close() {
        keeping.close();
    }

    private static List<ZkTicketKeys.Stored> stored(Key current, Key previous) {
        List<ZkTicketKeys.Stored> stored = new ArrayList<>();
        for (Key key : previous == null ? List.of(current) : List.of(current, previous)) {
            stored.add(new ZkTicketKeys.Stored(key.id(), key.key(), key.createdMs()));
        }
        return stored;
    }

    private static List<Key> keys(List<ZkTicketKeys.Stored> stored) {
        return stored.stream()
                .map(key -> new Key(key.id(), key.key(), key.createdMs()))
                .toList();
    }

    /**
     * Whether {@code id} names the current or the previous key, retired or not: never waits, for the transport thread
     * choosing a resumption's lane; {@link #find} decides.
     */
    public boolean holds(byte[] id) {
        Key now = current;
        Key before = previous;
        return Arrays.equals(now.id(), id) || (before != null && Arrays.equals(before.id(), id));
    }

    /** The key with this id, unless retired (replaced a period ago or more) or unknown. Never waits. */
    public Optional<SessionKey> find(byte[] id) {
        long now = clock.millis();
        Key sealing = current;
        Key before = previous;
        if (Arrays.equals(sealing.id(), id) && now - sealing.createdMs() < 2 * PERIOD_MS) {
            return Optional.of(sealing.key());
        }
        if (before != null && Arrays.equals(before.id(), id) && now - before.createdMs() < 2 * PERIOD_MS) {
            return Optional.of(before.key());
        }
        return Optional.empty();
    }

    /** Why {@code file} is not to be used: someone else could write or read it, or it is not a regular file. */
    private static Optional<String> problem(Path file) throws IOException {
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(file);
        if (attributes.isEmpty()) {
            return Optional.empty();
        }
        if (!attributes.get().isRegularFile()) {
            return Optional.of(file + " is not a regular file");
        }
        Optional<String> untrusted = TrustedPath.forThisProcess().problem(file);
        if (untrusted.isPresent()) {
            return untrusted;
        }
        if (attributes.get().permissions().stream().anyMatch(NOT_OURS::contains)) {
            return Optional.of(file + " may be read or written by others (mode "
                    + PosixFilePermissions.toString(attributes.get().permissions())
                    + "); it must be 0600");
        }
        return Optional.empty();
    }

    private static List<Key> parse(byte[] bytes) throws IOException {
        String[] lines = new String(bytes, StandardCharsets.US_ASCII).split("\n");
        if (lines.length < 2 || lines.length > 3 || !lines[0].equals(HEADER)) {
            throw new IOException("not a ticket key file");
        }
        List<Key> keys = new ArrayList<>();
        for (int i = 1; i < lines.length; i++) {
            String[] fields = lines[i].split(" ");
            if (fields.length != 3) {
                throw new IOException("line " + (i + 1) + " is damaged");
            }
            try {
                byte[] id = HexFormat.of().parseHex(fields[0]);
                if (id.length != Resumptions.KEY_ID_LENGTH) {
                    throw new IOException("line " + (i + 1) + " is damaged");
                }
                keys.add(new Key(id, SessionKey.of(Base64.getDecoder().decode(fields[2])), Long.parseLong(fields[1])));
            } catch (CryptoException | IllegalArgumentException e) {
                throw new IOException("line " + (i + 1) + " is damaged");
            }
        }
        return keys;
    }

    private static Key fresh(long nowMs) {
        byte[] id = new byte[Resumptions.KEY_ID_LENGTH];
        RANDOM.nextBytes(id);
        return new Key(id, SessionKey.random(), nowMs);
    }
}
