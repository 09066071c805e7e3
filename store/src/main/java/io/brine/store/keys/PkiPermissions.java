package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What the key store demands of the modes in a pki dir, on top of {@link AtomicFiles}' safe writes. */
final class PkiPermissions {

    private static final Logger log = LoggerFactory.getLogger(PkiPermissions.class);
    private static final Set<PosixFilePermission> GROUP_OTHER = EnumSet.of(
            PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE,
            PosixFilePermission.OTHERS_EXECUTE);
    private static final Set<PosixFilePermission> GROUP_OTHER_WRITE =
            EnumSet.of(PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_WRITE);

    private PkiPermissions() {}

    static boolean groupOrOtherAccess(PosixFileAttributes attributes) {
        return attributes.permissions().stream().anyMatch(GROUP_OTHER::contains);
    }

    static boolean groupOrOtherWrite(PosixFileAttributes attributes) {
        return attributes.permissions().stream().anyMatch(GROUP_OTHER_WRITE::contains);
    }

    /**
     * Makes sure {@code dir} is a directory that is not a link and not writable by group or others, creating it
     * 0700 when it is missing, and narrowing a hand-made one to 0700.
     */
    static void ensurePrivateDirectory(Path dir) throws IOException, KeyStoreException {
        try {
            AtomicFiles.ensureDirectory(dir);
        } catch (IOException e) {
            PosixFileAttributes existing = AtomicFiles.attributes(dir).orElse(null);
            if (existing != null && existing.isSymbolicLink()) {
                throw new KeyStoreException(dir + " is a symbolic link; the key store refuses links inside pki_dir");
            }
            if (existing != null && !existing.isDirectory()) {
                throw new KeyStoreException(dir + " is not a directory");
            }
            throw e;
        }
        PosixFileAttributes attributes =
                AtomicFiles.attributes(dir).orElseThrow(() -> new NoSuchFileException(dir.toString()));
        if (groupOrOtherWrite(attributes)) {
            throw new KeyStoreException(dir + " is writable by group or others (mode "
                    + PosixFilePermissions.toString(attributes.permissions()) + "); run: chmod 700 " + dir);
        }
        if (groupOrOtherAccess(attributes)) {
            // Made by hand (e.g. mkdir with the usual umask): nobody else needs to list the minions.
            log.info("Setting mode 0700 on {} (was {})", dir, PosixFilePermissions.toString(attributes.permissions()));
            AtomicFiles.setMode(dir, AtomicFiles.OWNER_DIR);
        }
    }
}
