package io.brine.store.audit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;

/**
 * Where key and auth decisions are audited: the append-only {@link FileAuditLog}, or {@link #none()} where nothing
 * is (brine-key's dry runs, and a brine-key run whose defaulted cachedir cannot be written, after its warning). The
 * master always audits to a file.
 */
public sealed interface AuditLog extends AutoCloseable permits FileAuditLog, AuditLog.None {

    String FILE_NAME = "audit.log";

    /** Opens (creating 0700 if needed) {@code cachedir} and appends to its {@code audit.log}. */
    static FileAuditLog open(Path cachedir, Clock clock) throws IOException {
        return openFile(cachedir.resolve(FILE_NAME), clock);
    }

    /** Appends to {@code file} ({@code audit_log}), creating its directory (0700) if needed. */
    static FileAuditLog openFile(Path file, Clock clock) throws IOException {
        return FileAuditLog.open(file, clock);
    }

    /** Audits nothing: what is recorded is dropped, and nothing fails. */
    static AuditLog none() {
        return None.INSTANCE;
    }

    /**
     * Appends one line.
     *
     * @throws UncheckedIOException when the line cannot be written
     */
    void record(AuditEvent event);

    /**
     * Forces what was recorded to disk.
     *
     * @throws UncheckedIOException when it cannot be
     */
    void sync();

    @Override
    void close();

    /** The form that audits nothing. */
    enum None implements AuditLog {
        INSTANCE;

        @Override
        public void record(AuditEvent event) {
            // not audited
        }

        @Override
        public void sync() {
            // nothing recorded
        }

        @Override
        public void close() {
            // nothing open
        }
    }
}
