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
 * {@code pki_dir/minions_rotating/ID} holds a line {@code accepted FP} naming the accepted key the rotation was
 * authorized by, then the new public key (PEM), while {@code minions/ID} keeps the old one. A waiting rotation counts
 * only while the id's accepted key is still that key: one left behind by a delete (and a new minion accepted under
 * the id) is never shown nor accepted. Beside {@code minions_pre/}, not in it: an id holds one key there, and
 * a Salt tool that reads {@code minions_pre/} must not see an accepted id as pending. Written only under the store
 * lock (temp file + rename, 0600, the directory 0700); a file that is not one readable key is ignored (and named by
 * {@link #list}'s caller as not pending).
 */
public final class PendingRotations {

    static final String DIRECTORY = "minions_rotating";
    private static final String ACCEPTED = "accepted ";

    /** A rotation waiting: the new key, and the fingerprint of the accepted key that asked for it. */
    record Waiting(RSAPublicKey newKey, String oldFingerprint) {}

    private final Path dir;

    PendingRotations(Path pkiDir) {
        this.dir = pkiDir.resolve(DIRECTORY);
    }

    /** The rotation of {@code id} waiting; empty when none (or not a readable record). */
    Optional<Waiting> of(String id) throws IOException {
        try {
            String text = new String(
                    AtomicFiles.readSmall(MinionIds.resolveInside(dir, id), Pem.MAX_PEM_CHARS + 200),
                    StandardCharsets.US_ASCII);
            int end = text.indexOf('\n');
            if (end < 0 || !text.startsWith(ACCEPTED)) {
                return Optional.empty();
            }
            String old = Fingerprints.normalize(text.substring(ACCEPTED.length(), end));
            return old == null
                    ? Optional.empty()
                    : Optional.of(new Waiting(Pem.readPublicKey(text.substring(end + 1)), old));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (KeyFormatException e) {
            return Optional.empty();
        }
    }

    /** Files {@code newKey} as the rotation of {@code id}'s accepted key {@code oldFingerprint}, over an earlier one. */
    void putLocked(String id, String oldFingerprint, RSAPublicKey newKey) throws IOException {
        AtomicFiles.ensureDirectory(dir);
        AtomicFiles.write(
                MinionIds.resolveInside(dir, id),
                (ACCEPTED + oldFingerprint + "\n" + Pem.publicKeySpki(newKey)).getBytes(StandardCharsets.US_ASCII),
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

    /**
     * Every waiting rotation: id to the new key's fingerprint, sorted by id; only those whose id's accepted key (in
     * {@code accepted}, id to fingerprint) is still the key that asked.
     */
    public Map<String, String> list(Map<String, String> accepted) throws IOException {
        Map<String, String> waiting = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return waiting;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path file : files) {
                String id = file.getFileName().toString();
                if (MinionIds.isValid(id) && accepted.containsKey(id)) {
                    of(id).filter(w -> w.oldFingerprint().equals(accepted.get(id)))
                            .ifPresent(w -> waiting.put(id, Fingerprints.of(w.newKey())));
                }
            }
        }
        return waiting;
    }

    /** The waiting rotations of the pki dir {@code pkiDir} (brine-key's listing, without a store). */
    public static Map<String, String> list(Path pkiDir, Map<String, String> accepted) throws IOException {
        return new PendingRotations(pkiDir).list(accepted);
    }
}
