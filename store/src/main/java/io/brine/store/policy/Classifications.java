package io.brine.store.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.grant.ProvisioningGrant;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The classification a provisioning grant gave each minion, stored under {@code cachedir/classes/ID.json} and kept
 * in memory. A classification is bound to the key fingerprint its grant named: it applies only while that very key
 * is the id's accepted key, so a deleted and re-enrolled id (or a stale file) never inherits it. The master merges
 * it into the minion's grains as {@code class} (GrainsStore), where the minion's own claims cannot set it.
 */
public final class Classifications {

    public static final String DIR_NAME = "classes";
    private static final Logger LOG = LoggerFactory.getLogger(Classifications.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_BYTES = 64 * 1024;

    private static final class Stored {
        final String fingerprint;
        final Map<String, String> classes;
        /** The accepted key last seen to have {@code fingerprint}: spares a fingerprint per lookup. */
        volatile RSAPublicKey verified;

        Stored(String fingerprint, Map<String, String> classes) {
            this.fingerprint = fingerprint;
            this.classes = classes;
        }
    }

    private final Path dir;
    private final Function<String, Optional<RSAPublicKey>> acceptedKeys;
    private final Map<String, Stored> byId = new ConcurrentHashMap<>();

    /**
     * Reads what is stored in {@code dir}.
     *
     * @param acceptedKeys the accepted key of an id ({@code KeyStore::acceptedKey})
     */
    public Classifications(Path dir, Function<String, Optional<RSAPublicKey>> acceptedKeys) {
        this.dir = dir;
        this.acceptedKeys = acceptedKeys;
        load();
    }

    /** Stores the classification of the key with {@code fingerprint} under {@code id}, replacing any other. */
    void put(String id, String fingerprint, Map<String, String> classes) throws IOException {
        ObjectNode document = JSON.createObjectNode();
        document.put("fingerprint", fingerprint);
        ObjectNode node = document.putObject("class");
        classes.forEach(node::put);
        AtomicFiles.ensureDirectory(dir);
        // A valid id has no '/' and no leading dot: the name stays inside dir.
        AtomicFiles.write(
                dir.resolve(MinionIds.requireValid(id) + ".json"),
                (document + "\n").getBytes(StandardCharsets.UTF_8),
                AtomicFiles.OWNER_RW);
        byId.put(id, new Stored(fingerprint, Collections.unmodifiableMap(new LinkedHashMap<>(classes))));
    }

    /**
     * Removes the classification of {@code id} if it is bound to the key with {@code fingerprint}: that key was
     * deleted or rejected, and its {@code classes/ID.json} goes with it. A classification of another key (a newer
     * grant) stays.
     */
    public void removeIfFor(String id, String fingerprint) {
        Stored stored = byId.get(id);
        if (stored == null || !stored.fingerprint.equals(fingerprint)) {
            return;
        }
        byId.remove(id, stored);
        remove(dir, id, fingerprint);
    }

    /**
     * Deletes {@code dir/ID.json} if it holds the classification of the key with {@code fingerprint}: brine-key's
     * part when it deletes or rejects an accepted key (the master drops its copy when it sees the change).
     *
     * @return whether a file was deleted
     */
    public static boolean remove(Path dir, String id, String fingerprint) {
        Path file = dir.resolve(MinionIds.requireValid(id) + ".json");
        try {
            JsonNode document = JSON.readTree(AtomicFiles.readSmall(file, MAX_BYTES));
            if (!fingerprint.equals(
                    Fingerprints.normalize(document.path("fingerprint").asText(null)))) {
                return false;
            }
            AtomicFiles.delete(file);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            LOG.warn("Classification {} of a removed key could not be removed: {}", file, e.getMessage());
            return false;
        }
    }

    /** The classification of {@code id}'s accepted key, or an empty map. */
    public Map<String, String> of(String id) {
        Stored stored = byId.get(id);
        if (stored == null) {
            return Map.of();
        }
        Optional<RSAPublicKey> accepted = acceptedKeys.apply(id);
        if (accepted.isEmpty()) {
            return Map.of();
        }
        RSAPublicKey key = accepted.get();
        if (key == stored.verified) {
            return stored.classes;
        }
        if (Fingerprints.of(key).equals(stored.fingerprint)) {
            stored.verified = key;
            return stored.classes;
        }
        return Map.of();
    }

    private void load() {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.json")) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                String id = name.substring(0, name.length() - ".json".length());
                if (!MinionIds.isValid(id)) {
                    continue;
                }
                try {
                    JsonNode document = JSON.readTree(AtomicFiles.readSmall(file, MAX_BYTES));
                    String fingerprint =
                            Fingerprints.normalize(document.path("fingerprint").asText(null));
                    Map<String, String> classes = new LinkedHashMap<>();
                    for (Iterator<Map.Entry<String, JsonNode>> it =
                                    document.path("class").fields();
                            it.hasNext(); ) {
                        Map.Entry<String, JsonNode> entry = it.next();
                        if (entry.getValue().isTextual()
                                && ProvisioningGrant.classProblem(
                                                entry.getKey(), entry.getValue().textValue())
                                        .isEmpty()) {
                            classes.put(entry.getKey(), entry.getValue().textValue());
                        }
                    }
                    if (fingerprint != null) {
                        byId.put(id, new Stored(fingerprint, Collections.unmodifiableMap(classes)));
                    }
                } catch (IOException e) {
                    LOG.warn("Classification {} unreadable, ignored: {}", file, e.getMessage());
                }
            }
        } catch (NoSuchFileException e) {
            // nothing classified yet
        } catch (IOException e) {
            LOG.warn("Classifications in {} unreadable: {}", dir, e.getMessage());
        }
    }
}
