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
import java.util.Map;
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

    private static final Logger log = LoggerFactory.getLogger(RotationAsks.class);
    private static final int MAX_FILE_BYTES = 128;

    /** An admin's ask: the fingerprint of the accepted key to rotate, and when it was asked. */
    public record Ask(String fingerprint, Instant askedAt) {}

    private final Path dir;
    private final Path counter;
    private volatile Map<String, Ask> cached = Map.of();
    private volatile long loaded = Long.MIN_VALUE;

    RotationAsks(Path pkiDir) {
        this.dir = pkiDir.resolve(DIRECTORY);
        this.counter = pkiDir.resolve(COUNTER);
    }

    /** The ask recorded for {@code id}; empty when none, or not a readable record. */
    Optional<Ask> of(String id) throws IOException {
        try {
            return decode(AtomicFiles.readSmall(MinionIds.resolveInside(dir, id), MAX_FILE_BYTES));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    private static Optional<Ask> decode(byte[] record) {
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

    /** Records {@code ask} for {@code id}, over an earlier one (the caller holds the store lock, and bumps). */
    void putLocked(String id, Ask ask) throws IOException {
        AtomicFiles.ensureDirectory(dir);
        AtomicFiles.write(
                MinionIds.resolveInside(dir, id),
                (ask.fingerprint() + " " + ask.askedAt().toEpochMilli() + "\n").getBytes(StandardCharsets.US_ASCII),
                AtomicFiles.OWNER_RW);
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
        long now = count();
        if (now == loaded && now >= 0) {
            return;
        }
        try {
            cached = Map.copyOf(read());
            loaded = now;
        } catch (IOException e) {
            log.warn("Key store {}: cannot read {}: {}", dir.getParent(), DIRECTORY, e.toString());
        }
    }
}
