package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.store.keys.Snapshot.Entry;
import io.brine.store.keys.Snapshot.FileStamp;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state directories of a pki dir as files: preparing them, reading one id's files, scanning all of them into a
 * {@link Snapshot}, and the changes between two snapshots. Never writes a key; never follows a link; a file whose
 * name is not a valid id or whose content is not a public key becomes a {@link KeyProblem}.
 */
final class KeyDirectory {

    /** Precedence when a hand-made copy leaves an id in two exclusive states: the most restrictive wins. */
    static final List<KeyState> PRECEDENCE = List.of(KeyState.REJECTED, KeyState.ACCEPTED, KeyState.PENDING);

    private static final Logger log = LoggerFactory.getLogger(KeyDirectory.class);
    private static final int MAX_KEY_BYTES = Pem.MAX_PEM_CHARS;

    private final Path pkiDir;
    private final Map<KeyState, Path> dirs;
    private final SaltMarks marks;
    private final RotationAsks asks;
    /** Key files read and parsed, by scans and single reads (a test's view: a rescan of unchanged files reads none). */
    private final LongAdder filesRead = new LongAdder();
    /** Keys this master checked before, whose small-factor check a scan skips; none until the master key is read. */
    private volatile CheckedKeys checked = CheckedKeys.none();

    private KeyDirectory(Path pkiDir) {
        this.pkiDir = pkiDir;
        this.marks = new SaltMarks(pkiDir);
        this.asks = new RotationAsks(pkiDir);
        Map<KeyState, Path> map = new EnumMap<>(KeyState.class);
        for (KeyState state : KeyState.values()) {
            map.put(state, pkiDir.resolve(state.dirName()));
        }
        this.dirs = map;
    }

    /**
     * The pki dir {@code configured} (a link to it is fine; nothing inside it may be one), created 0700 when missing
     * and {@code create} is set. The state directories are made by {@link #prepareStateDirectories}.
     *
     * @throws KeyStoreException for a missing or unsafe pki dir (the message names the path and the fix)
     */
    static KeyDirectory of(Path configured, boolean create) throws IOException, KeyStoreException {
        Path dir = configured.toAbsolutePath().normalize();
        if (AtomicFiles.attributes(dir).isEmpty()) {
            if (!create) {
                throw new KeyStoreException("pki dir " + dir + " does not exist");
            }
            PkiPermissions.ensurePrivateDirectory(dir);
        }
        Path real = dir.toRealPath();
        PosixFileAttributes attributes = AtomicFiles.attributes(real).orElseThrow();
        if (!attributes.isDirectory()) {
            throw new KeyStoreException("pki dir " + dir + " is not a directory");
        }
        if (PkiPermissions.groupOrOtherWrite(attributes)) {
            throw new KeyStoreException("pki dir " + real + " is writable by group or others; run: chmod 700 " + real);
        }
        return new KeyDirectory(real);
    }

    /**
     * Creates missing state directories (0700) and removes the temp files a crash left. The caller holds the store
     * lock: every writer makes temp files only while holding it, so those found are a crash's leftovers.
     */
    void prepareStateDirectories() throws IOException, KeyStoreException {
        for (Path dir : dirs.values()) {
            PkiPermissions.ensurePrivateDirectory(dir);
            AtomicFiles.removeLeftovers(dir);
        }
        AtomicFiles.removeLeftovers(pkiDir);
    }

    Path pkiDir() {
        return pkiDir;
    }

    Path dir(KeyState state) {
        return dirs.get(state);
    }

    /** Where the kind of each Salt minion's key is recorded. */
    SaltMarks marks() {
        return marks;
    }

    /** The key rotations admins asked for; dropped with the accepted key they name. */
    RotationAsks asks() {
        return asks;
    }

    /** The keys whose small-factor check a scan may skip ({@link CheckedKeys}): set once the master key is read. */
    void useChecked(CheckedKeys checked) {
        this.checked = checked;
    }

    CheckedKeys checked() {
        return checked;
    }

    long filesRead() {
        return filesRead.sum();
    }

    /** The kind of the id's pending, accepted or rejected key, as the disk holds it. */
    MinionKind kindOf(String id) {
        return marks.isMarked(id) ? MinionKind.SALT : MinionKind.BRINE;
    }

    /** One id's file in one state directory, as found on disk. */
    record DiskEntry(KeyState state, Path path, StoredKey key, String problem) {}

    /** The id's file in its strongest exclusive state, read from disk. */
    Optional<DiskEntry> readMain(String id) throws IOException {
        for (KeyState state : PRECEDENCE) {
            Optional<DiskEntry> entry = readOne(state, id);
            if (entry.isPresent()) {
                return entry;
            }
        }
        return Optional.empty();
    }

    /**
     * {@link #readMain} for an id whose accepted key {@code known} holds, without reading the key again: when
     * {@code minions/ID} is still the version of the file {@code known} was read from (its {@link FileStamp}, as a
     * scan judges it), its key is {@code known}'s, which was checked when it was read or written. The
     * caller has made the snapshot {@code known} comes from exact ({@code KeyWrites.syncLocked}), so no file of the
     * id was added or removed in another state directory since; a file edited in place is another version, read.
     */
    Optional<DiskEntry> readMain(String id, Entry known) throws IOException {
        if (known == null || known.key().state() != KeyState.ACCEPTED) {
            return readMain(id);
        }
        Path path = MinionIds.resolveInside(dirs.get(KeyState.ACCEPTED), id);
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(path);
        if (attributes.isEmpty()
                || KeyFile.problem(attributes.get()) != null
                || !FileStamp.of(path, attributes.get()).matches(known.stamp())) {
            return readMain(id);
        }
        return Optional.of(new DiskEntry(KeyState.ACCEPTED, path, known.key().as(kindOf(id)), null));
    }

    Optional<DiskEntry> readOne(KeyState state, String id) throws IOException {
        Path path = MinionIds.resolveInside(dirs.get(state), id);
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(path);
        if (attributes.isEmpty()) {
            return Optional.empty();
        }
        ParsedFile parsed = parse(state, id, path, attributes.get());
        StoredKey key = parsed.key() == null || state == KeyState.DENIED
                ? parsed.key()
                : parsed.key().as(kindOf(id));
        return Optional.of(new DiskEntry(state, path, key, parsed.problem()));
    }

    private record ParsedFile(StoredKey key, String problem) {}

    private ParsedFile parse(KeyState state, String id, Path path, BasicFileAttributes attributes) {
        filesRead.increment();
        KeyFile file = KeyFile.read(path, attributes, checked);
        return file.key() == null
                ? new ParsedFile(null, file.problem())
                : new ParsedFile(new StoredKey(id, state, file.key(), Fingerprints.of(file.key())), null);
    }

    /**
     * A key file judged, as the key store and {@link KeyFileCheck} both judge it: a regular file, not a link, small,
     * holding a valid RSA public key; else why not, printable (parser messages may quote the file).
     */
    record KeyFile(RSAPublicKey key, String problem) {

        KeyFile {
            // Keep terminal escapes out of what admins read.
            problem = problem == null ? null : problem.replaceAll("[\\p{Cntrl}]", "?");
        }

        static KeyFile read(Path path, BasicFileAttributes attributes) {
            return read(path, attributes, CheckedKeys.none());
        }

        /** {@link #read(Path, BasicFileAttributes)}, sparing the small-factor check of keys {@code checked} holds. */
        static KeyFile read(Path path, BasicFileAttributes attributes, CheckedKeys checked) {
            String problem = problem(attributes);
            if (problem != null) {
                return new KeyFile(null, problem);
            }
            try {
                return parse(bytes(path), checked);
            } catch (IOException e) {
                return new KeyFile(null, "cannot be read: " + e.getMessage());
            }
        }

        /** Why a file with {@code attributes} is not read as a key file; null when it may be. */
        static String problem(BasicFileAttributes attributes) {
            if (attributes.isSymbolicLink()) {
                return "is a symbolic link (links are never followed)";
            }
            if (!attributes.isRegularFile()) {
                return "is not a regular file";
            }
            if (attributes.size() > MAX_KEY_BYTES) {
                return "is larger than " + MAX_KEY_BYTES + " bytes: not a public key";
            }
            return null;
        }

        /** The bytes of a key file that passed {@link #problem}: at most {@link Pem#MAX_PEM_CHARS}. */
        static byte[] bytes(Path path) throws IOException {
            return AtomicFiles.readSmall(path, MAX_KEY_BYTES);
        }

        static KeyFile parse(byte[] bytes) {
            return parse(bytes, CheckedKeys.none());
        }

        static KeyFile parse(byte[] bytes, CheckedKeys checked) {
            try {
                return new KeyFile(checked.readPublicKey(bytes), null);
            } catch (KeyFormatException e) {
                return new KeyFile(null, "is not a valid public key: " + e.getMessage());
            }
        }
    }

    /**
     * Reads every state directory into a snapshot. Files whose stamp (identity, size, mtime and ctime:
     * {@link FileStamp}, which says why that is sound) {@link FileStamp#matches matches} an entry of {@code previous}
     * are not read, parsed or checked again; an entry that keeps its state and key keeps its tenure.
     */
    Snapshot scan(long generation, List<Object> stamps, Snapshot previous, long nowNanos) throws IOException {
        long started = System.nanoTime();
        Map<String, Entry> keys = new HashMap<>();
        Map<String, Entry> denied = new HashMap<>();
        List<KeyProblem> problems = new ArrayList<>();
        Set<String> salt = marks.ids();
        for (KeyState state : List.of(KeyState.REJECTED, KeyState.ACCEPTED, KeyState.PENDING, KeyState.DENIED)) {
            List<Path> entries = new ArrayList<>();
            try (DirectoryStream<Path> stream = Files.newDirectoryStream(dirs.get(state))) {
                stream.forEach(entries::add);
            }
            entries.sort(Comparator.comparing(Path::toString));
            for (Path path : entries) {
                String name = path.getFileName().toString();
                if (AtomicFiles.isTemp(name)) {
                    continue;
                }
                Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(path);
                if (attributes.isEmpty()) {
                    continue;
                }
                String file = MinionIds.printable(state.dirName() + "/" + name);
                Optional<String> badName = MinionIds.problem(name);
                if (badName.isPresent()) {
                    problems.add(new KeyProblem(file, "name is not a valid id (" + badName.get() + ")"));
                    continue;
                }
                // Stamped before the read: a write racing the read changes the ctime, so the next rescan reads it.
                FileStamp stamp = FileStamp.of(path, attributes.get());
                Entry old = previous.entry(state, name);
                Entry entry;
                if (old != null
                        && stamp.matches(old.stamp())
                        && attributes.get().isRegularFile()) {
                    entry = old;
                } else {
                    ParsedFile parsed = parse(state, name, path, attributes.get());
                    if (parsed.key() == null) {
                        problems.add(new KeyProblem(file, parsed.problem()));
                        continue;
                    }
                    entry = old != null
                                    && old.key()
                                            .fingerprint()
                                            .equals(parsed.key().fingerprint())
                            ? old.restamped(parsed.key(), stamp)
                            : Entry.of(parsed.key(), stamp);
                }
                MinionKind kind = state != KeyState.DENIED && salt.contains(name) ? MinionKind.SALT : MinionKind.BRINE;
                if (entry.key().kind() != kind) {
                    entry = entry.restamped(entry.key().as(kind), stamp);
                }
                if (state == KeyState.DENIED) {
                    denied.put(name, entry);
                } else if (keys.containsKey(name)) {
                    problems.add(new KeyProblem(
                            file,
                            "the id is also in " + keys.get(name).key().state().dirName()
                                    + "/, which takes precedence; remove one copy by hand"));
                } else {
                    keys.put(name, entry);
                }
            }
        }
        problems.sort(Comparator.comparing(KeyProblem::file));
        log.debug("Scanned {} keys in {} ms", keys.size() + denied.size(), (System.nanoTime() - started) / 1_000_000);
        return new Snapshot(generation, stamps, keys, denied, problems, nowNanos);
    }

    /** What changed from {@code old} to {@code fresh}, per id in id order: exclusive states first, then denied. */
    static List<KeyChange> diff(Snapshot old, Snapshot fresh) {
        List<KeyChange> changes = new ArrayList<>();
        diff(old.keys, fresh.keys, false, changes);
        diff(old.denied, fresh.denied, true, changes);
        return changes;
    }

    private static void diff(
            Map<String, Entry> old, Map<String, Entry> fresh, boolean denied, List<KeyChange> changes) {
        // Only the ids that changed are sorted: a rescan of 10,000 unchanged keys finds the same entries (the scan
        // keeps an unchanged file's entry), so sorting every id was most of what the diff cost.
        Set<String> ids = new TreeSet<>();
        old.forEach((id, before) -> {
            Entry after = fresh.get(id);
            if (after != before) {
                ids.add(id);
            }
        });
        fresh.forEach((id, after) -> {
            if (!old.containsKey(id)) {
                ids.add(id);
            }
        });
        for (String id : ids) {
            StoredKey before = old.containsKey(id) ? old.get(id).key() : null;
            StoredKey after = fresh.containsKey(id) ? fresh.get(id).key() : null;
            if (before != null
                    && after != null
                    && before.state() == after.state()
                    && before.fingerprint().equals(after.fingerprint())) {
                continue;
            }
            if (before == null && after == null) {
                continue;
            }
            if (denied && before != null && after != null) {
                changes.add(new KeyChange(id, Optional.empty(), Optional.of(KeyState.DENIED), after.fingerprint()));
                continue;
            }
            changes.add(new KeyChange(
                    id,
                    Optional.ofNullable(before).map(StoredKey::state),
                    Optional.ofNullable(after).map(StoredKey::state),
                    after != null ? after.fingerprint() : before.fingerprint()));
        }
    }

    /** Identity and modification time of each state directory: a cheap sign that something changed. */
    List<Object> stamps() {
        List<Object> stamps = new ArrayList<>(dirs.size());
        for (Path dir : dirs.values()) {
            try {
                BasicFileAttributes attributes =
                        Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                stamps.add(List.of(String.valueOf(attributes.fileKey()), attributes.lastModifiedTime()));
            } catch (IOException e) {
                stamps.add(e.toString());
            }
        }
        return stamps;
    }

    static FileStamp stamp(Path file) throws IOException {
        return FileStamp.of(file, Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS));
    }

    static String relative(KeyState state, String id) {
        return state.dirName() + "/" + id;
    }
}
