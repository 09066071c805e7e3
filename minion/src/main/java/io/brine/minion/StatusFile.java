package io.brine.minion;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.brine.daemon.files.AtomicFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the minion stands ({@link MinionStatus}), kept in memory and written to {@code status_file} on every change
 * for admins and scripts. The state and reason come from whoever decides them ({@link Handshake}, {@link Minion});
 * the facts shown beside them (the master's fingerprint, the publish key generation) are set by the part that learns
 * them, and written with the next change.
 *
 * <p>Written on the minion's event thread only; {@link #current()} may be read from any thread.
 */
final class StatusFile {

    private static final Logger LOG = LoggerFactory.getLogger(StatusFile.class);

    private final Path file;
    private final Clock clock;
    // jackson-core's streaming writer: an ObjectMapper would load some 350 databind classes for this one file.
    private final JsonFactory json = new JsonFactory();
    private volatile MinionStatus current;
    private String masterFingerprint;
    private Long generation;

    /**
     * @param file        where to write it; null for none
     * @param fingerprint the minion key's fingerprint
     */
    StatusFile(String id, Path file, Clock clock, String fingerprint) {
        this.file = file;
        this.clock = clock;
        this.current = new MinionStatus(
                id, MinionState.CONNECTING, "starting", clock.instant(), null, fingerprint, null, null, 0, null);
    }

    MinionStatus current() {
        return current;
    }

    MinionState state() {
        return current.state();
    }

    /** Enters {@code state} (or stays in it, keeping when it began) and writes the file. */
    void enter(MinionState state, String reason, Duration nextAttemptIn) {
        Instant now = clock.instant();
        MinionStatus previous = current;
        current = new MinionStatus(
                previous.id(),
                state,
                reason,
                previous.state() == state ? previous.since() : now,
                nextAttemptIn == null ? null : now.plus(nextAttemptIn),
                previous.fingerprint(),
                masterFingerprint,
                generation,
                previous.stalePublications(),
                previous.resumableUntil());
        write();
    }

    /**
     * The minion is closing. A minion that stopped by itself keeps the state it stopped in, and a rejected one stays
     * {@code rejected} (with rejected_retry too): for monitoring, why it is out of service matters more than that
     * its process ended.
     */
    void stopped() {
        if (!state().terminal() && state() != MinionState.REJECTED && state() != MinionState.MASTER_KEY_MISMATCH) {
            enter(MinionState.STOPPED, "stopped", null);
        }
    }

    /** The master key of the last verified auth reply (the pinned one once pinned); shown from the next change. */
    /** The minion's key changed (a rotation): shown from the next state on. */
    void fingerprint(String fingerprint) {
        MinionStatus s = current;
        current = new MinionStatus(
                s.id(),
                s.state(),
                s.reason(),
                s.since(),
                s.nextAttempt(),
                fingerprint,
                s.masterFingerprint(),
                s.generation(),
                s.stalePublications(),
                s.resumableUntil());
    }

    /**
     * The resumption ticket held changed: {@code until} is when the new one expires, null when none is held (used,
     * refused, or never given). Written at once when it changes: tickets come once per session, so a peer cannot make
     * this a flood of writes.
     */
    void ticket(Instant until) {
        MinionStatus s = current;
        if (Objects.equals(until, s.resumableUntil())) {
            return;
        }
        current = new MinionStatus(
                s.id(),
                s.state(),
                s.reason(),
                s.since(),
                s.nextAttempt(),
                s.fingerprint(),
                s.masterFingerprint(),
                s.generation(),
                s.stalePublications(),
                until);
        write();
    }

    void masterKey(String fingerprint) {
        masterFingerprint = fingerprint;
    }

    /** The newest publish key generation, without writing: a new session's is written with its state. */
    void generation(long newest) {
        generation = newest;
    }

    /** A new publish key generation installed during a session: written at once. */
    void installed(long newest) {
        generation = newest;
        MinionStatus s = current;
        current = new MinionStatus(
                s.id(),
                s.state(),
                s.reason(),
                s.since(),
                s.nextAttempt(),
                s.fingerprint(),
                s.masterFingerprint(),
                newest,
                s.stalePublications(),
                s.resumableUntil());
        write();
    }

    /**
     * One more publication refused as too old. Written at once: only the master can sign one, so an attacker who
     * withheld some can make at most one write each (replays of it are refused earlier, as replays).
     */
    void stalePublication() {
        MinionStatus s = current;
        current = new MinionStatus(
                s.id(),
                s.state(),
                s.reason(),
                s.since(),
                s.nextAttempt(),
                s.fingerprint(),
                s.masterFingerprint(),
                s.generation(),
                s.stalePublications() + 1,
                s.resumableUntil());
        write();
    }

    private void write() {
        if (file == null) {
            return;
        }
        MinionStatus s = current;
        ByteArrayOutputStream doc = new ByteArrayOutputStream(512);
        try {
            try (JsonGenerator out = json.createGenerator(doc).useDefaultPrettyPrinter()) {
                out.writeStartObject();
                out.writeStringField("id", s.id());
                out.writeStringField("state", s.state().name().toLowerCase(Locale.ROOT));
                out.writeStringField("reason", s.reason());
                out.writeStringField("since", s.since().toString());
                out.writeStringField(
                        "next_attempt",
                        s.nextAttempt() == null ? null : s.nextAttempt().toString());
                out.writeStringField("fingerprint", s.fingerprint());
                out.writeStringField("master_fingerprint", s.masterFingerprint());
                out.writeFieldName("generation");
                if (s.generation() == null) {
                    out.writeNull();
                } else {
                    out.writeNumber(s.generation());
                }
                out.writeNumberField("stale_publications", s.stalePublications());
                out.writeStringField(
                        "resumable_until",
                        s.resumableUntil() == null ? null : s.resumableUntil().toString());
                out.writeEndObject();
            }
            AtomicFiles.ensureDirectory(file.toAbsolutePath().getParent());
            AtomicFiles.write(file, doc.toByteArray(), AtomicFiles.PUBLIC_READ);
        } catch (IOException e) {
            LOG.warn("Minion {}: cannot write status file {}: {}", s.id(), file, e.getMessage());
        }
    }
}
