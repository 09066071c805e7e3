package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
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

/**
 * brine-key's reading of a pki dir of any size: the state directories one entry at a time, each file judged as the
 * store judges it ({@link KeyDirectory}: the same problems, the same precedence of states), keeping per key its id,
 * state and fingerprint, never the parsed key, and which keys are shared ({@link SharedKeys}). A listing of 100,000
 * keys thus needs memory for their ids and fingerprints; the store's snapshot, which the master needs, holds every
 * parsed key. Takes no lock and writes nothing (a missing state directory is empty): what it reads may change at
 * once, so a change made from it is checked again under the lock ({@link BulkDelete}, {@link KeyStore}).
 */
public final class KeyScan {

    /** Valid keys per state, sorted by id (their {@link StoredKey#key()} is null), problems, shared keys. */
    public record Result(KeyListing listing, SharedKeys shared) {}

    private KeyScan() {}

    /**
     * Reads the pki dir {@code pkiDir} (which must exist and be writable by its owner alone, as for the store).
     *
     * @throws KeyStoreException for a missing or unsafe pki dir
     */
    public static Result scan(Path pkiDir) throws IOException, KeyStoreException {
        KeyDirectory directory = KeyDirectory.of(pkiDir, false);
        KeyFileCheck check = new KeyFileCheck();
        Map<KeyState, List<StoredKey>> keys = new EnumMap<>(KeyState.class);
        List<KeyProblem> problems = new ArrayList<>();
        SharedKeys shared = new SharedKeys();
        // The exclusive states first, strongest first: a second copy of an id is a problem, as in the store.
        Map<String, StoredKey> main = new HashMap<>();
        Set<String> salt = directory.marks().ids();
        for (KeyState state : List.of(KeyState.REJECTED, KeyState.ACCEPTED, KeyState.PENDING, KeyState.DENIED)) {
            List<StoredKey> found = new ArrayList<>();
            Path dir = directory.dir(state);
            for (String name : sortedNames(dir)) {
                Path path = dir.resolve(name);
                Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(path);
                if (attributes.isEmpty()) {
                    continue; // gone since the directory was read
                }
                String file = MinionIds.printable(state.dirName() + "/" + name);
                Optional<String> badName = MinionIds.problem(name);
                if (badName.isPresent()) {
                    problems.add(new KeyProblem(file, "name is not a valid id (" + badName.get() + ")"));
                    continue;
                }
                KeyFileCheck.Verdict verdict = check.check(path, attributes.get());
                if (verdict.problem() != null) {
                    problems.add(new KeyProblem(file, verdict.problem()));
                    continue;
                }
                StoredKey key = new StoredKey(
                        name,
                        state,
                        null,
                        verdict.fingerprint(),
                        state != KeyState.DENIED && salt.contains(name) ? MinionKind.SALT : MinionKind.BRINE);
                if (state == KeyState.DENIED) {
                    StoredKey other = main.get(name);
                    if (other == null || !other.fingerprint().equals(key.fingerprint())) {
                        shared.add(key.fingerprint(), name); // an id once per key
                    }
                } else if (main.containsKey(name)) {
                    problems.add(new KeyProblem(
                            file,
                            "the id is also in " + main.get(name).state().dirName()
                                    + "/, which takes precedence; remove one copy by hand"));
                    continue;
                } else {
                    main.put(name, key);
                    shared.add(key.fingerprint(), name);
                }
                found.add(key);
            }
            keys.put(state, found);
        }
        problems.sort(Comparator.comparing(KeyProblem::file));
        return new Result(new KeyListing(keys, problems), shared);
    }

    /**
     * The public key of {@code key} (from a scan of {@code pkiDir}: its id and state) as its file holds it now, parsed
     * one at a time for {@code -p}/{@code -P}; empty when the file is gone or no longer a valid key.
     */
    public static Optional<RSAPublicKey> readKey(Path pkiDir, StoredKey key) throws IOException {
        Path path = MinionIds.resolveInside(pkiDir.resolve(key.state().dirName()), key.id());
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(path);
        return attributes.map(found -> KeyDirectory.KeyFile.read(path, found).key());
    }

    /** The names in {@code dir} other than temp files, sorted; none when it does not exist. */
    private static List<String> sortedNames(Path dir) throws IOException {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (Path path : stream) {
                String name = path.getFileName().toString();
                if (!AtomicFiles.isTemp(name)) {
                    names.add(name);
                }
            }
        } catch (NoSuchFileException e) {
            return List.of();
        }
        names.sort(null);
        return names;
    }
}
