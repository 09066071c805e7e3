package io.brine.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.FileAuditLog;
import io.brine.store.keys.CheckedKeys;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.StoredKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.interfaces.RSAPublicKey;
import java.time.Instant;
import java.util.Locale;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * The cluster's znodes and what they hold, all under the configured root:
 * <ul>
 * <li>{@code /keys/<id>}: the id's key in its pending, accepted or rejected state, as JSON {@code {"state", "pem"}},
 * and {@code "kind": "salt"} for a key filed by Salt's {@code _auth} ({@link MinionKind}). One znode per id, so "in
 * exactly one state" holds by construction, a move is one versioned setData, and the kind is filed, kept and deleted
 * with the key.</li>
 * <li>{@code /denied/<id>}: the last different key offered under the id.</li>
 * <li>{@code /retired/<id>}: the fingerprints of the keys the id retired by rotating, one a line (kept when the id's
 * key is deleted: offered again, such a key is denied).</li>
 * <li>{@code /fingerprints/<hex>}: the slots ({@code keys/<id>}) holding one public key, one per line, changed or
 * checked in every transaction that stores, moves or removes that key ({@link ZkFingerprints}): "one key, one id"
 * holds across masters, not only in one master's view. A denied key holds no id and is not recorded.</li>
 * <li>{@code /format}: the number of this layout ({@link #FORMAT_VERSION}), written by the first master to open the
 * cluster and checked by every one that opens it: a master of another format refuses to start.</li>
 * <li>{@code /audit/e-<seq>}: one audit event per sequential znode, written in the same transaction as the
 * change it records: one ordered trail whichever master wrote it.</li>
 * <li>{@code /asked/<id>}: an admin's ask that the id's minion rotate its accepted key ({@code brine-key
 * --rotate-keys}), the record of the file store's {@code minions_rotation_asked/<id>} ({@link
 * io.brine.store.keys.RotationAsks}); written with a version bump of {@code /keys/<id>} and deleted with that key
 * ({@link ZkRotationAsks}).</li>
 * <li>{@code /rotate}: the count of admins' rotation requests; {@code /spent/<digest>}: spent grants and tokens.</li>
 * <li>{@code /master_key}: the master key's succession records, each with its private key sealed for the key before
 * it ({@link ZkMasterKeys}); absent before the cluster's first master key rotation.</li>
 * </ul>
 * No private key and no session key is ever written here in the clear: the publish key, the ticket keys and the
 * rotated master keys are sealed for a master key.
 */
final class ZkRecords {

    static final String KEYS = "/keys";
    static final String DENIED = "/denied";
    static final String RETIRED = "/retired";
    static final String ASKED = "/asked";
    static final String AUDIT = "/audit";
    static final String AUDIT_PREFIX = AUDIT + "/e-";
    static final String ROTATE = "/rotate";
    static final String SPENT = "/spent";
    static final String FORMAT = "/format";
    /** The field of a key record naming a Salt minion's key ({@link MinionKind}); absent for a brine minion's. */
    static final String KIND = "kind";
    /**
     * The layout this code reads and writes. 1: keys with their {@code /fingerprints} znodes. (Masters of the
     * version before it neither write nor check {@code /format}: they must be stopped before this one starts.)
     */
    static final int FORMAT_VERSION = 1;
    /** Bumped by every key transaction: its version stat names the transaction's zxid. */
    static final String SEQ = "/seq";

    /** A znode's data is at most this big (a 8192-bit key's PEM is under 1.5 KiB). */
    static final int MAX_RECORD_BYTES = 16 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();

    private ZkRecords() {}

    /**
     * Writes {@link #FORMAT_VERSION} into {@code /format} when the cluster has none (only with {@code write}: without,
     * a cluster with none passes and nothing is written, for {@code brine-master --check-config}), and refuses a
     * cluster of another format (written by another version of brine) before anything else is read or written.
     *
     * @throws IOException naming both formats, when they differ
     */
    static void requireFormat(CuratorFramework client, boolean write) throws Exception {
        String ours = Integer.toString(FORMAT_VERSION);
        if (write) {
            try {
                client.create()
                        .creatingParentContainersIfNeeded()
                        .forPath(FORMAT, ours.getBytes(StandardCharsets.US_ASCII));
                return;
            } catch (KeeperException.NodeExistsException e) {
                // written by the first master
            }
        } else if (client.checkExists().forPath(FORMAT) == null) {
            return; // a new cluster: the first master to start writes it
        }
        byte[] data = client.getData().forPath(FORMAT);
        String found = data == null ? "" : new String(data, StandardCharsets.US_ASCII).strip();
        if (!found.equals(ours)) {
            throw new IOException("cluster: /" + client.getNamespace() + " holds its keys in format "
                    + (found.isEmpty()
                            ? "(empty)"
                            : MinionIds.printable(found.length() > 20 ? found.substring(0, 20) + "..." : found))
                    + ", this brine reads and writes format " + ours + "; nothing was changed. Run one version of"
                    + " brine on every master and brine-key of a cluster (stop the others before starting this one)");
        }
    }

    static String keyPath(String id) {
        return KEYS + "/" + id;
    }

    /** The fingerprints of the keys the id retired by rotating ({@link io.brine.store.keys.RetiredKeys}'s lines). */
    static String retiredPath(String id) {
        return RETIRED + "/" + id;
    }

    /** An admin's ask that the id's minion rotate its accepted key. */
    static String askedPath(String id) {
        return ASKED + "/" + id;
    }

    static String deniedPath(String id) {
        return DENIED + "/" + id;
    }

    /** A brine minion's key record (a denied key's too: it is recorded for no kind). */
    static byte[] encodeKey(KeyState state, RSAPublicKey key) {
        return encodeKey(state, key, MinionKind.BRINE);
    }

    /**
     * A key record; a Salt minion's carries {@code "kind": "salt"}, in the same znode as the key, so the kind is
     * written in the transaction that files the key and goes with it. A brine minion's record is as format 1 wrote it.
     */
    static byte[] encodeKey(KeyState state, RSAPublicKey key, MinionKind kind) {
        ObjectNode node = JSON.createObjectNode();
        node.put("state", state.label());
        node.put("pem", Pem.publicKeySpki(key));
        if (kind != MinionKind.BRINE) {
            node.put(KIND, kind.label());
        }
        return node.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** @throws KeyFormatException for data that is not a key record */
    static StoredKey decodeKey(String id, byte[] data) throws KeyFormatException {
        return decodeKey(id, data, CheckedKeys.none());
    }

    /**
     * {@link #decodeKey(String, byte[])}, sparing the small-factor check of a key {@code checked} holds (the view's
     * start-up read of every key).
     */
    static StoredKey decodeKey(String id, byte[] data, CheckedKeys checked) throws KeyFormatException {
        if (data == null || data.length == 0 || data.length > MAX_RECORD_BYTES) {
            throw new KeyFormatException("empty or oversized key record");
        }
        JsonNode node;
        try {
            node = JSON.readTree(data);
        } catch (IOException e) {
            throw new KeyFormatException("not a key record: " + e.getMessage());
        }
        KeyState state = stateOf(node.path("state").asText(""));
        RSAPublicKey key = checked.readPublicKey(node.path("pem").asText("").getBytes(StandardCharsets.UTF_8));
        return new StoredKey(
                id, state, key, Fingerprints.of(key), kindOf(node.path(KIND).asText("")));
    }

    /** No kind (every record before Salt minions had one, and a brine minion's): a brine minion's key. */
    private static MinionKind kindOf(String label) throws KeyFormatException {
        if (label.isEmpty()) {
            return MinionKind.BRINE;
        }
        for (MinionKind kind : MinionKind.values()) {
            if (kind.label().equals(label)) {
                return kind;
            }
        }
        throw new KeyFormatException(
                "unknown kind " + MinionIds.printable(label.length() > 20 ? label.substring(0, 20) + "..." : label));
    }

    private static KeyState stateOf(String label) throws KeyFormatException {
        for (KeyState state : KeyState.values()) {
            if (state.label().equals(label)) {
                return state;
            }
        }
        throw new KeyFormatException("unknown state " + label.toLowerCase(Locale.ROOT));
    }

    static byte[] encodeAudit(AuditEvent event, Instant time) {
        return FileAuditLog.line(event, time).getBytes(StandardCharsets.UTF_8);
    }
}
