package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The keys each id retired by rotating ({@link KeyStore#rotate}), in the file store: {@code pki_dir/minions_retired/ID}
 * holds their fingerprints, one a line, oldest first, the newest {@value #MAX_PER_ID} kept. Written only under the
 * store lock (temp file + rename, 0600, the directory 0700); it outlives a delete of the id's key, so a retired key
 * offered again is denied, never accepted by a policy (an admin may still accept it from {@code minions_denied/}).
 * The cluster keeps the same record in a znode per id ({@link #decode}, {@link #adding}).
 */
public final class RetiredKeys {

    static final String DIRECTORY = "minions_retired";

    /** Rotations remembered per id: a key retired longer ago than that is forgotten. */
    public static final int MAX_PER_ID = 16;

    private static final Pattern FINGERPRINT = Pattern.compile("[0-9a-f]{2}(:[0-9a-f]{2}){31}");
    private static final int MAX_FILE_BYTES = MAX_PER_ID * 100;

    private final Path dir;

    RetiredKeys(Path pkiDir) {
        this.dir = pkiDir.resolve(DIRECTORY);
    }

    /** The fingerprints retired for {@code id}, oldest first. */
    List<String> of(String id) throws IOException {
        try {
            return decode(AtomicFiles.readSmall(MinionIds.resolveInside(dir, id), MAX_FILE_BYTES));
        } catch (NoSuchFileException e) {
            return List.of();
        }
    }

    /** Adds {@code fingerprint} to the id's record (the caller holds the store lock). */
    void retireLocked(String id, String fingerprint) throws IOException {
        retireUnforcedLocked(id, fingerprint);
        AtomicFiles.forceDirectory(dir);
    }

    /**
     * {@link #retireLocked} without forcing the directory: the record is whole, old or new, and durable once the
     * caller forces {@link #dir()}, once for a batch of rotations, before any key it retires is replaced.
     */
    void retireUnforcedLocked(String id, String fingerprint) throws IOException {
        AtomicFiles.ensureDirectory(dir);
        AtomicFiles.writeUnforced(MinionIds.resolveInside(dir, id), adding(of(id), fingerprint), AtomicFiles.OWNER_RW);
    }

    /** The directory of the records. */
    Path dir() {
        return dir;
    }

    /** A record's fingerprints (null or empty: none); lines that are not a fingerprint are ignored. */
    public static List<String> decode(byte[] record) {
        List<String> fingerprints = new ArrayList<>();
        if (record == null) {
            return fingerprints;
        }
        for (String line : new String(record, StandardCharsets.US_ASCII).split("\n")) {
            if (FINGERPRINT.matcher(line).matches()) {
                fingerprints.add(line);
            }
        }
        return fingerprints;
    }

    /** The record of {@code fingerprints} with {@code fingerprint} added as the newest, the oldest past the bound gone. */
    public static byte[] adding(List<String> fingerprints, String fingerprint) {
        List<String> kept = new ArrayList<>(fingerprints);
        kept.remove(fingerprint);
        kept.add(fingerprint);
        if (kept.size() > MAX_PER_ID) {
            kept = kept.subList(kept.size() - MAX_PER_ID, kept.size());
        }
        return (String.join("\n", kept) + "\n").getBytes(StandardCharsets.US_ASCII);
    }
}
