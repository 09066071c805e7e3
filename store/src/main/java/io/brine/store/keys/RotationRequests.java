package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How an admin asks the master, in this process or another, to rotate the publish key: a decimal counter in
 * {@code pki_dir/.rotate} that {@link #request} bumps under the store lock and the master polls with {@link #count}.
 */
@SuppressWarnings("try") // try (StoreLock.Held held = lock.acquire()) holds the lock for the block; held is unused
final class RotationRequests {

    static final String FILE_NAME = ".rotate";

    private static final Logger log = LoggerFactory.getLogger(RotationRequests.class);
    private static final int MAX_FILE_BYTES = 32;

    private final Path file;
    private final StoreLock lock;
    private final AuditLog audit;

    RotationRequests(Path pkiDir, StoreLock lock, AuditLog audit) {
        this.file = pkiDir.resolve(FILE_NAME);
        this.lock = lock;
        this.audit = audit;
    }

    /**
     * Bumps the counter (under the store lock, temp file + rename) and audits the request.
     *
     * @return the counter after this request
     * @throws UncheckedIOException when the file cannot be written
     */
    long request(String actor) {
        Objects.requireNonNull(actor, "actor");
        long count;
        try (StoreLock.Held held = lock.acquire()) {
            count = Math.max(0, count()) + 1;
            AtomicFiles.write(file, (count + "\n").getBytes(StandardCharsets.US_ASCII), AtomicFiles.OWNER_RW);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
        log.info("Key store {}: publish key rotation requested by {} (request {})", file.getParent(), actor, count);
        audit.record(AuditEvent.builder("rotation-requested", actor)
                .reason("request " + count)
                .build());
        audit.sync();
        return count;
    }

    /**
     * The counter: 0 when never asked, -1 when the file cannot be read. Reads one small file without the lock (it
     * is only ever replaced whole), so a master can poll it.
     */
    long count() {
        return read(file);
    }

    /** A decimal counter file ({@code .rotate}, {@code .rotate_keys}): 0 when missing, -1 when it cannot be read. */
    static long read(Path file) {
        try {
            if (AtomicFiles.attributes(file)
                    .filter(PosixFileAttributes::isRegularFile)
                    .isEmpty()) {
                return 0;
            }
            return Long.parseLong(
                    new String(AtomicFiles.readSmall(file, MAX_FILE_BYTES), StandardCharsets.US_ASCII).strip());
        } catch (IOException | NumberFormatException e) {
            log.debug("Key store {}: cannot read {}: {}", file.getParent(), file.getFileName(), e.toString());
            return -1;
        }
    }
}
