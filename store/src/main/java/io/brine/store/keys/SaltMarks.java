package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;

/**
 * The kind of each Salt minion's key in a filesystem pki dir ({@link MinionKind}): an empty file
 * {@code pki_dir/salt_minions/ID} per key filed by Salt's {@code _auth}, written by the key store under its lock in the
 * same step as the key, and removed with the key. A key without a mark is a brine minion's. Beside the key
 * directories, so that salt-key, which reads only those, is not disturbed. An admin never edits marks by hand: a
 * minion's kind changes by deleting its key and letting the minion offer it again.
 */
public final class SaltMarks {

    public static final String DIRECTORY = "salt_minions";

    private final Path dir;

    public SaltMarks(Path pkiDir) {
        this.dir = pkiDir.resolve(DIRECTORY);
    }

    /** Marks {@code id} (validated) as a Salt minion; nothing when it is marked already. */
    public void mark(String id) throws IOException {
        Path file = dir.resolve(MinionIds.requireValid(id));
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        AtomicFiles.ensureDirectory(dir);
        try {
            AtomicFiles.create(file, new byte[0], AtomicFiles.OWNER_RW);
        } catch (FileAlreadyExistsException e) {
            // marked meanwhile
        }
    }

    /** Drops {@code id}'s mark, if any. */
    public void unmark(String id) throws IOException {
        try {
            AtomicFiles.delete(dir.resolve(MinionIds.requireValid(id)));
        } catch (NoSuchFileException e) {
            // not marked
        }
    }

    public boolean isMarked(String id) {
        return MinionIds.isValid(id) && Files.isRegularFile(dir.resolve(id), LinkOption.NOFOLLOW_LINKS);
    }

    /** Every marked id (names that are not valid ids, and anything but plain files, are ignored). */
    public Set<String> ids() {
        Set<String> ids = new TreeSet<>();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return ids;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (MinionIds.isValid(name) && Files.isRegularFile(entry, LinkOption.NOFOLLOW_LINKS)) {
                    ids.add(name);
                }
            }
        } catch (IOException e) {
            return ids; // a listing without marks is still a listing
        }
        return ids;
    }
}
