package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * brine-key's {@code --clean}: the entries of the state directories that are not key files at all (a name that is
 * not a valid id, a symbolic link, a directory or other non-regular file, a file too large or whose content is not a
 * public key), found without a lock, then moved, each judged again under the store lock, into {@code
 * pki_dir/invalid/STAMP/STATE_DIR/NAME} (mode 0700): out of the store's sight, but nothing is lost (a misnamed file
 * may be a real key filed by hand). A file that cannot be read (an I/O or permission error), a temp file and a valid
 * key shadowed by the same id in a stronger state are never moved: they may be keys.
 */
public final class InvalidEntries {

    private static final Logger log = LoggerFactory.getLogger(InvalidEntries.class);

    /** Where moved entries go, under the pki dir. */
    public static final String DIR_NAME = "invalid";

    private static final DateTimeFormatter STAMP =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

    /** One invalid entry: {@code name} in {@code state}'s directory, and why it is not a key file. */
    public record Entry(KeyState state, String name, String reason) {

        /** {@code minions/NAME}, escaped: safe to print. */
        public String file() {
            return MinionIds.printable(state.dirName() + "/" + name);
        }
    }

    /** What {@link #moveAside} did: the entries moved (and where), and those left with why. */
    public record Outcome(Path destination, List<Entry> moved, List<String> left, List<String> unaudited) {}

    private InvalidEntries() {}

    /** The invalid entries of {@code pkiDir}'s state directories, by file; reads without a lock, writes nothing. */
    public static List<Entry> find(Path pkiDir) throws IOException, KeyStoreException {
        KeyDirectory directory = KeyDirectory.of(pkiDir, false);
        KeyFileCheck check = new KeyFileCheck();
        List<Entry> found = new ArrayList<>();
        for (KeyState state : KeyState.values()) {
            Path dir = directory.dir(state);
            try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
                for (Path path : stream) {
                    String name = path.getFileName().toString();
                    judge(dir, name, check).ifPresent(reason -> found.add(new Entry(state, name, reason)));
                }
            } catch (NoSuchFileException e) {
                // no such state directory: nothing in it
            }
        }
        found.sort(Comparator.comparing(Entry::file));
        return found;
    }

    /**
     * Why {@code name} in {@code dir} is not a key file and may be moved; empty for a valid key, a temp file, a file
     * that cannot be read, or an entry gone.
     */
    static Optional<String> judge(Path dir, String name, KeyFileCheck check) throws IOException {
        if (AtomicFiles.isTemp(name)) {
            return Optional.empty(); // a writer's, or a crash's: the store removes those under its lock
        }
        Path path = dir.resolve(name);
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(path);
        if (attributes.isEmpty()) {
            return Optional.empty();
        }
        Optional<String> badName = MinionIds.problem(name);
        if (badName.isPresent()) {
            return Optional.of("name is not a valid id (" + badName.get() + ")");
        }
        String problem = check.check(path, attributes.get()).problem();
        if (problem == null || problem.startsWith("cannot be read")) {
            return Optional.empty();
        }
        return Optional.of(problem);
    }

    /**
     * Moves each of {@code listed} that is still invalid, judged again under the store lock, to {@code
     * pki_dir/invalid/STAMP/}; one audit line ({@code key-invalid-moved}) each to {@code audit} (null: unaudited).
     */
    @SuppressWarnings("try") // the lock is held throughout
    public static Outcome moveAside(Path pkiDir, List<Entry> listed, AuditLog audit, String actor, Instant now)
            throws IOException, KeyStoreException {
        KeyDirectory directory = KeyDirectory.of(pkiDir, false);
        Path destination = directory.pkiDir().resolve(DIR_NAME).resolve(STAMP.format(now));
        KeyFileCheck check = new KeyFileCheck();
        List<Entry> moved = new ArrayList<>();
        List<String> left = new ArrayList<>();
        List<String> unaudited = new ArrayList<>();
        try (StoreLock lock = StoreLock.open(directory.pkiDir());
                StoreLock.Held held = lock.acquire()) {
            for (Entry entry : listed) {
                Path dir = directory.dir(entry.state());
                Optional<String> still = judge(dir, entry.name(), check);
                if (still.isEmpty()) {
                    left.add(entry.file() + ": gone or now valid since it was listed; left as it is");
                    continue;
                }
                Path target = destination.resolve(entry.state().dirName()).resolve(entry.name());
                AtomicFiles.ensureDirectory(directory.pkiDir().resolve(DIR_NAME));
                AtomicFiles.ensureDirectory(destination);
                AtomicFiles.ensureDirectory(target.getParent());
                if (AtomicFiles.attributes(target).isPresent()) {
                    left.add(entry.file() + ": "
                            + MinionIds.printable(
                                    directory.pkiDir().relativize(target).toString()) + " exists; left as it is");
                    continue;
                }
                AtomicFiles.move(dir.resolve(entry.name()), target);
                moved.add(new Entry(entry.state(), entry.name(), still.get()));
                try {
                    audit.record(AuditEvent.builder("key-invalid-moved", actor)
                            .from(entry.state().label())
                            .reason(entry.file() + " " + still.get() + "; moved to "
                                    + MinionIds.printable(directory
                                            .pkiDir()
                                            .relativize(target)
                                            .toString()))
                            .build());
                } catch (UncheckedIOException e) {
                    log.error(
                            "Key store {}: the move of {} was not written to the audit log: {}",
                            directory.pkiDir(),
                            entry.file(),
                            e.getMessage());
                    unaudited.add(entry.file());
                }
            }
            if (!moved.isEmpty()) {
                try {
                    audit.sync();
                } catch (UncheckedIOException e) {
                    log.error(
                            "Key store {}: the audit log could not be forced to disk: {}",
                            directory.pkiDir(),
                            e.getMessage());
                    moved.forEach(entry -> unaudited.add(entry.file()));
                }
            }
            if (!moved.isEmpty()) {
                try {
                    lock.bumpGeneration(); // a running master re-reads its directories and forgets their warnings
                } catch (IOException e) {
                    log.warn(
                            "Key store {}: the change counter in {} could not be bumped: {}",
                            directory.pkiDir(),
                            StoreLock.FILE_NAME,
                            e.getMessage());
                }
            }
        }
        return new Outcome(destination, List.copyOf(moved), List.copyOf(left), List.copyOf(unaudited));
    }
}
