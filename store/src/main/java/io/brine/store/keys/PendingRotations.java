package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Minion key rotations waiting for an admin ({@code key_rotation: pending}, PROTOCOL.md 6.3), in the file store:
 * {@code pki_dir/minions_rotating/ID} holds the new public key (PEM) that a rotation of ID's accepted key asked for,
 * while {@code minions/ID} keeps the old one. Beside {@code minions_pre/}, not in it: an id holds one key there, and
 * a Salt tool that reads {@code minions_pre/} must not see an accepted id as pending. Written only under the store
 * lock (temp file + rename, 0600, the directory 0700); a file that is not one readable key is ignored (and named by
 * {@link #list}'s caller as not pending).
 */
public final class PendingRotations {

    static final String DIRECTORY = "minions_rotating";

    private final Path dir;

    PendingRotations(Path pkiDir) {
        this.dir = pkiDir.resolve(DIRECTORY);
    }

    /** The new key a rotation of {@code id} waits with; empty when none (or not a readable key). */
    Optional<RSAPublicKey> of(String id) throws IOException {
        try {
            byte[] pem = AtomicFiles.readSmall(MinionIds.resolveInside(dir, id), Pem.MAX_PEM_CHARS);
            return Optional.of(Pem.readPublicKey(new String(pem, StandardCharsets.US_ASCII)));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (KeyFormatException e) {
            return Optional.empty();
        }
    }

    /** Files {@code newKey} as the rotation of {@code id} waiting for an admin, over an earlier one. */
    void putLocked(String id, RSAPublicKey newKey) throws IOException {
        AtomicFiles.ensureDirectory(dir);
        AtomicFiles.write(MinionIds.resolveInside(dir, id), Pem.bytes(Pem.publicKeySpki(newKey)),
                AtomicFiles.OWNER_RW);
    }

    /** Drops the waiting rotation of {@code id}; nothing when there is none. */
    void removeLocked(String id) throws IOException {
        try {
            AtomicFiles.delete(MinionIds.resolveInside(dir, id));
        } catch (NoSuchFileException e) {
            // none
        }
    }

    /** Every waiting rotation: id to the new key's fingerprint, sorted by id. Files that are not a key are left out. */
    public Map<String, String> list() throws IOException {
        Map<String, String> waiting = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return waiting;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path file : files) {
                String id = file.getFileName().toString();
                if (MinionIds.isValid(id)) {
                    of(id).ifPresent(key -> waiting.put(id, Fingerprints.of(key)));
                }
            }
        }
        return waiting;
    }

    /** The waiting rotations of the pki dir {@code pkiDir} (brine-key's listing, without a store). */
    public static Map<String, String> list(Path pkiDir) throws IOException {
        return new PendingRotations(pkiDir).list();
    }
}
