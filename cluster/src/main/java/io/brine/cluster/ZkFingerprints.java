package io.brine.cluster;

import io.brine.store.keys.StoredKey;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.zookeeper.KeeperException;

/**
 * One key, one id across masters: {@code /fingerprints/<hex>} lists the slots ({@code keys/<id>}) that hold one
 * public key, and every transaction that stores, moves or removes a key changes or checks it with the version it
 * read. A denied key holds no id (the offer was refused), so {@code /denied} is never recorded here: an
 * unauthenticated peer offering one key under every known id would otherwise grow one znode without bound. The
 * slots of pending keys are bounded too: a znode is never written past {@link #MAX_BYTES} (such an offer is
 * answered "pending, not recorded"; an admin change is refused). A master's decision "this key is stored under no other id" is therefore
 * part of the transaction that acts on it: two masters offering one key under two ids within one watch delay
 * conflict on the fingerprint znode, and the loser re-reads and decides again (its view may not have heard yet).
 *
 * <p>Clusters written before this znode existed have keys without one. It is created lazily, by the next
 * transaction that touches a key with that fingerprint: the slots are then read from ZooKeeper itself (the
 * candidates being the ids this master's view holds the key under, complete for such keys since
 * {@link ZkKeyStore#open} read every key) and each one read is checked in the transaction, so the znode is born
 * right or not at all. A key new to this master's view is taken to have no znode on a first attempt, without a
 * read: the transaction creates the znode, which fails if another master made it meanwhile.
 */
final class ZkFingerprints {

    static final String ROOT = "/fingerprints";

    /**
     * The most one fingerprint znode holds: some 250 ids of the longest kind. One key held by that many ids is an
     * attack or a mistake, and ZooKeeper refuses a znode over 1 MiB (jute.maxbuffer) with a lost connection.
     */
    static final int MAX_BYTES = 64 * 1024;

    private static final String KEYS = "keys/";

    private ZkFingerprints() {}

    static String path(String fingerprint) {
        return ROOT + "/" + fingerprint.replace(":", "");
    }

    static String keySlot(String id) {
        return KEYS + id;
    }

    private static String idOf(String slot) {
        return slot.substring(slot.indexOf('/') + 1);
    }

    /** The fingerprint side of one transaction about {@code id}: each fingerprint read once, then written once. */
    static final class Changes {
        private final ZkKeyStore store;
        private final String id;
        private final boolean trustAbsence;
        private final Map<String, Owners> touched = new LinkedHashMap<>();

        /**
         * @param trustAbsence whether a key this master's view holds under no id may be taken to have no znode
         *     without reading it (a first attempt: the transaction's create of the znode fails if another master
         *     made it meanwhile, and the next attempt reads it)
         */
        Changes(ZkKeyStore store, String id, boolean trustAbsence) {
            this.store = store;
            this.id = id;
            this.trustAbsence = trustAbsence;
        }

        /** The ids other than this transaction's that hold the key (pending, accepted or rejected); sorted. */
        List<String> otherIds(String fingerprint) throws KeeperException {
            return owners(fingerprint).slots.stream()
                    .map(ZkFingerprints::idOf)
                    .filter(other -> !other.equals(id))
                    .distinct()
                    .sorted()
                    .toList();
        }

        /**
         * The ids marked "same key as": those holding the key as read ({@link #otherIds}), and those this master's
         * view holds it denied under (as the filesystem store marks them; a denied key holds no id, so that part is
         * a hint, never recorded nor checked in the transaction).
         */
        List<String> sameKeyAs(String fingerprint) throws KeeperException {
            TreeSet<String> ids = new TreeSet<>(otherIds(fingerprint));
            for (String other : store.view().otherIds(fingerprint, id)) {
                ZkKeyView.Entry denied = store.view().deniedEntry(other);
                if (denied != null && denied.key().fingerprint().equals(fingerprint)) {
                    ids.add(other);
                }
            }
            return List.copyOf(ids);
        }

        Changes add(String fingerprint, String slot) throws KeeperException {
            owners(fingerprint).slots.add(slot);
            return this;
        }

        Changes remove(String fingerprint, String slot) throws KeeperException {
            owners(fingerprint).slots.remove(slot);
            return this;
        }

        /** Reads the fingerprint so that the transaction checks it even when nothing about it changes. */
        Changes touch(String fingerprint) throws KeeperException {
            owners(fingerprint);
            return this;
        }

        /** Whether every fingerprint this transaction adds a slot to stays within {@link #MAX_BYTES}. */
        boolean fits() {
            return touched.values().stream()
                    .allMatch(owners ->
                            owners.slots.size() <= owners.read.size() || encode(owners.slots).length <= MAX_BYTES);
        }

        /** Adds a versioned operation per fingerprint touched: a lost race on any of them is a lost race. */
        void writeTo(ZkWrites.Transaction tx) {
            for (Map.Entry<String, Owners> each : touched.entrySet()) {
                String path = path(each.getKey());
                Owners owners = each.getValue();
                for (Map.Entry<String, Integer> check : owners.legacyChecks.entrySet()) {
                    tx.check(check.getKey(), check.getValue());
                }
                if (owners.version >= 0) {
                    if (owners.slots.isEmpty()) {
                        tx.delete(path, owners.version);
                    } else if (owners.slots.equals(owners.read)) {
                        tx.check(path, owners.version);
                    } else {
                        tx.setData(path, owners.version, encode(owners.slots));
                    }
                } else if (!owners.slots.isEmpty()) {
                    tx.create(path, encode(owners.slots));
                } else {
                    // Still absent when the transaction commits: created and deleted in it.
                    tx.create(path, new byte[0]);
                    tx.delete(path, 0);
                }
            }
        }

        private Owners owners(String fingerprint) throws KeeperException {
            Owners owners = touched.get(fingerprint);
            if (owners == null) {
                owners = read(fingerprint);
                touched.put(fingerprint, owners);
            }
            return owners;
        }

        private Owners read(String fingerprint) throws KeeperException {
            List<String> candidates = store.view().ids(fingerprint);
            if (trustAbsence && candidates.isEmpty()) {
                return new Owners(new TreeSet<>(), -1, Map.of()); // a new key, the usual case: no read
            }
            ZkWrites.Read read = store.read(path(fingerprint));
            if (read.exists()) {
                return new Owners(decode(read.data()), read.version(), Map.of());
            }
            // No znode: the key is new, or was stored before fingerprints were recorded. Such keys were in ZooKeeper
            // when this master opened, so its view knows the candidates (none for a new key); what
            // they hold is read from ZooKeeper, and checked in the transaction (this id's znodes are checked by the
            // transaction's own operations).
            TreeSet<String> slots = new TreeSet<>();
            Map<String, Integer> checks = new LinkedHashMap<>();
            for (String owner : candidates) {
                String path = ZkRecords.keyPath(owner);
                ZkWrites.Read slot = store.read(path);
                StoredKey key = slot.key(owner);
                if (key != null && key.fingerprint().equals(fingerprint)) {
                    slots.add(keySlot(owner));
                    if (!owner.equals(id)) {
                        checks.put(path, slot.version());
                    }
                }
            }
            return new Owners(slots, -1, checks);
        }
    }

    /** The slots holding one key as read ({@code version} -1: no znode yet), and as this transaction leaves them. */
    private static final class Owners {
        final TreeSet<String> read;
        final TreeSet<String> slots;
        final int version;
        final Map<String, Integer> legacyChecks;

        Owners(TreeSet<String> read, int version, Map<String, Integer> legacyChecks) {
            this.read = read;
            this.slots = new TreeSet<>(read);
            this.version = version;
            this.legacyChecks = legacyChecks;
        }
    }

    static byte[] encode(TreeSet<String> slots) {
        return String.join("\n", slots).getBytes(StandardCharsets.UTF_8);
    }

    /** The {@code keys/} slots; {@code denied/} ones, recorded by the first version of this znode, are dropped. */
    static TreeSet<String> decode(byte[] data) {
        TreeSet<String> slots = new TreeSet<>();
        if (data != null) {
            for (String line : new String(data, StandardCharsets.UTF_8).split("\n")) {
                if (line.strip().startsWith(KEYS)) {
                    slots.add(line.strip());
                }
            }
        }
        return slots;
    }

    /** For tests and tools: the slots recorded for {@code fingerprint}, empty when none is. */
    static List<String> recorded(ZkWrites writes, String fingerprint) throws KeeperException {
        ZkWrites.Read read = writes.read(path(fingerprint));
        return read.exists() ? new ArrayList<>(decode(read.data())) : List.of();
    }
}
