package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The minion key rotations admins asked for ({@code brine-key --rotate-keys}, PROTOCOL.md 6.3), in the file store:
 * {@code pki_dir/minions_rotation_asked/ID} holds one line {@code FINGERPRINT ASKED_MS}, the accepted key asked to
 * rotate and when. The ask is outstanding while that key is the id's accepted key, and done once the id's accepted key
 * is another one that retired it; the master asks the minion at each heartbeat while it is outstanding. Written only
 * under the store lock (temp file + rename, 0600, the directory 0700), dropped with the accepted key (a delete or a
 * reject), and every change bumps the counter {@code pki_dir/.rotate_keys}, which a running master polls to reload
 * the asks into memory ({@link #reloadIfChanged}): a heartbeat reads them from there.
 */
public final class RotationAsks {

    public static final String DIRECTORY = "minions_rotation_asked";
    static final String COUNTER = ".rotate_keys";

    /**
     * An ask's record ({@code FINGERPRINT ASKED_MS}, a line) is at most this big, in a file or a cluster's znode: a
     * larger one is not an ask (a fingerprint is 95 bytes, the time at most 20).
     */
    public static final int MAX_RECORD_BYTES = 128;

    private static final Logger log = LoggerFactory.getLogger(RotationAsks.class);

    /** An admin's ask: the fingerprint of the accepted key to rotate, and when it was asked. */
    public record Ask(String fingerprint, Instant askedAt) {

        /**
         * Whether the minion is still to rotate: the key asked about is the id's accepted key ({@code accepted}, null
         * when it has none). Once the minion rotated, the accepted key is another and the old one is retired for the id
         * (never accepted again under it), so the ask is spent for good without being rewritten: both key stores keep
         * it, and {@code brine-key -L} shows it rotated.
         */
        public boolean outstandingFor(String accepted) {
            return fingerprint.equals(accepted);
        }
    }

    /**
     * What an admin's ask does to {@code id} ({@code brine-key --rotate-keys}), decided by both key stores on what
     * they read where they commit: DONE (the caller records {@code Ask(fingerprint, now)} and audits it) for an
     * accepted brine minion's key not asked yet (or asked about another key); UNCHANGED when that key is asked already
     * (the first time stays); NOT_FOUND without an accepted key; REFUSED for a Salt minion's key (Salt has no such
     * message) or one the store cannot read.
     *
     * @param state      the id's state, empty when it holds no key
     * @param key        the key as read; null when there is none or it cannot be read
     * @param unreadable what is wrong with an accepted key's record that cannot be read (else null): refused
     * @param kind       the kind the id's key is filed for
     * @param existing   the ask recorded for the id, if one is readable
     */
    public static AdminResult decide(
            String id,
            Optional<KeyState> state,
            StoredKey key,
            String unreadable,
            MinionKind kind,
            Optional<Ask> existing) {
        if (key == null && unreadable != null) {
            return AdminResult.of(
                    id,
                    AdminResult.Status.REFUSED,
                    id + ": " + unreadable + "; not acted on: fix or remove it by hand");
        }
        if (key == null || state.isEmpty() || state.get() != KeyState.ACCEPTED) {
            return AdminResult.of(
                    id,
                    AdminResult.Status.NOT_FOUND,
                    id + ": no accepted key"
                            + state.map(s -> " (the id is " + s.label() + ")").orElse("")
                            + "; only an accepted key is rotated");
        }
        if (kind == MinionKind.SALT) {
            return AdminResult.of(
                    id,
                    AdminResult.Status.REFUSED,
                    id + ": a Salt minion cannot rotate its key over its session (Salt has no such message); rotate it"
                            + " by hand: stop the minion, remove its minion.pem and minion.pub, brine-key -d " + id
                            + ", start it, and accept its new key");
        }
        Optional<KeyState> accepted = Optional.of(KeyState.ACCEPTED);
        if (existing.filter(ask -> ask.outstandingFor(key.fingerprint())).isPresent()) {
            return new AdminResult(
                    id,
                    AdminResult.Status.UNCHANGED,
                    accepted,
                    accepted,
                    key.fingerprint(),
                    id + ": already asked to rotate " + key.fingerprint());
        }
        return new AdminResult(
                id,
                AdminResult.Status.DONE,
                accepted,
                accepted,
                key.fingerprint(),
                id + ": asked to rotate " + key.fingerprint() + " at its next heartbeat");
    }

    /** An ask's record, as a file and a cluster's znode hold it. */
    public static byte[] encode(Ask ask) {
        return (ask.fingerprint() + " " + ask.askedAt().toEpochMilli() + "\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** The ask in {@code record}; empty when it is not one, or is larger than {@link #MAX_RECORD_BYTES}. */
    public static Optional<Ask> decode(byte[] record) {
        if (record == null || record.length > MAX_RECORD_BYTES) {
            return Optional.empty();
        }
        String[] parts = new String(record, StandardCharsets.US_ASCII).strip().split(" ");
        if (parts.length != 2) {
            return Optional.empty();
        }
        String fingerprint = Fingerprints.normalize(parts[0]);
        try {
            long askedMs = Long.parseLong(parts[1]);
            return fingerprint == null || askedMs < 0
                    ? Optional.empty()
                    : Optional.of(new Ask(fingerprint, Instant.ofEpochMilli(askedMs)));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private final Path dir;
    private final Path counter;
    private volatile Map<String, Ask> cached = Map.of();
    private volatile long loaded = Long.MIN_VALUE;
    private volatile Object loadedStamp;

    RotationAsks(Path pkiDir) {
        this.dir = pkiDir.resolve(DIRECTORY);
        this.counter = pkiDir.resolve(COUNTER);
    }

    /** The ask recorded for {@code id}; empty when none, or not a readable record. */
    Optional<Ask> of(String id) throws IOException {
        try {
            return decode(AtomicFiles.readSmall(MinionIds.resolveInside(dir, id), MAX_RECORD_BYTES));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /**
     * Records {@code ask} for {@code id}, over an earlier one, whole but not yet durable: the caller holds the store
     * lock, forces {@link #dir()} once for all the asks it wrote before it bumps or answers anyone, then bumps.
     */
    void putUnforcedLocked(String id, Ask ask) throws IOException {
        AtomicFiles.ensureDirectory(dir);
        AtomicFiles.writeUnforced(MinionIds.resolveInside(dir, id), encode(ask), AtomicFiles.OWNER_RW);
    }

    /** Where the asks are, one file per id. */
    Path dir() {
        return dir;
    }

    /** Drops the ask of {@code id} and bumps the counter when there was one (the caller holds the store lock). */
    void dropLocked(String id) throws IOException {
        try {
            AtomicFiles.delete(MinionIds.resolveInside(dir, id));
        } catch (NoSuchFileException e) {
            return;
        }
        bumpLocked();
        reloadIfChanged(); // this process's master forgets it now, not at its next poll
    }

    /** Tells a running master that the asks changed (the caller holds the store lock). */
    void bumpLocked() throws IOException {
        AtomicFiles.write(
                counter, (Math.max(0, count()) + 1 + "\n").getBytes(StandardCharsets.US_ASCII), AtomicFiles.OWNER_RW);
    }

    /** The counter: 0 when never bumped, -1 when it cannot be read. Needs no lock (it is only replaced whole). */
    long count() {
        return RotationRequests.read(counter);
    }

    /** Every readable ask, by id (names that are not ids, links and unreadable records are skipped). */
    public Map<String, Ask> read() throws IOException {
        Map<String, Ask> asks = new TreeMap<>();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return asks;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path file : files) {
                String id = file.getFileName().toString();
                if (MinionIds.isValid(id) && Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                    of(id).ifPresent(ask -> asks.put(id, ask));
                }
            }
        }
        return asks;
    }

    /** The asks of the pki dir {@code pkiDir} (brine-key's listing, without a store). */
    public static Map<String, Ask> read(Path pkiDir) throws IOException {
        return new RotationAsks(pkiDir).read();
    }

    /** The ask of {@code id} as of the last {@link #reloadIfChanged}: from memory. */
    Optional<Ask> cached(String id) {
        return Optional.ofNullable(cached.get(id));
    }

    /** Rereads the asks when the counter moved since the last reload (a master's poll: one small read otherwise). */
    void reloadIfChanged() {
        reload(false);
    }

    /**
     * {@link #reloadIfChanged}, and also when the directory changed since the last reload (its identity and time): a
     * master's full rescan, which so finds asks whose writer could not bump the counter (a full disk).
     */
    void reloadIfChangedOrStale() {
        reload(true);
    }

    private void reload(boolean stampToo) {
        long now = count();
        boolean counted = now == loaded && now >= 0;
        if (counted && !stampToo) {
            return;
        }
        Object stamp = stamp();
        if (counted && Objects.equals(stamp, loadedStamp)) {
            return;
        }
        try {
            cached = Map.copyOf(read());
            loaded = now;
            loadedStamp = stamp; // taken before the read: a change during it is read again next time
        } catch (IOException e) {
            log.warn("Key store {}: cannot read {}: {}", dir.getParent(), DIRECTORY, e.toString());
        }
    }

    /** The directory's identity and time; null when it is absent or cannot be stat'ed. */
    private Object stamp() {
        try {
            return AtomicFiles.attributes(dir)
                    .map(a -> List.of(String.valueOf(a.fileKey()), a.lastModifiedTime()))
                    .orElse(null);
        } catch (IOException e) {
            return null;
        }
    }
}
