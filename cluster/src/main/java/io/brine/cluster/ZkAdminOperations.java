package io.brine.cluster;

import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.store.audit.AuditEvent;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.AdminResult.Status;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.StoredKey;
import java.io.IOException;
import java.security.interfaces.RSAPublicKey;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import org.apache.zookeeper.KeeperException;

/**
 * An admin's accept, reject or delete of one key in the cluster, judged on the znodes as read and committed with a
 * check of the versions read (the filesystem store's {@code AdminOperations}, with ZooKeeper's versions in place of
 * its lock). A stored key is never replaced; a fingerprint the admin saw must be the key's. When the ensemble has
 * no quorum, the change is refused with a clear message and nothing is written.
 */
final class ZkAdminOperations {

    private static final int MAX_ATTEMPTS = 50;

    private final ZkKeyStore store;
    private final int maxMinions;

    ZkAdminOperations(ZkKeyStore store, int maxMinions) {
        this.store = store;
        this.maxMinions = maxMinions;
    }

    AdminResult operation(String id, KeyState from, KeyState to, String expectedFingerprint, String actor) {
        MinionIds.requireValid(id);
        Objects.requireNonNull(actor, "actor");
        String expected = null;
        if (expectedFingerprint != null) {
            expected = Fingerprints.normalize(expectedFingerprint);
            if (expected == null) {
                throw new IllegalArgumentException(MinionIds.printable(expectedFingerprint)
                        + " is not a fingerprint (expected 32 hex bytes, e.g. ab:cd:...)");
            }
        }
        ClusterHealth health = store.awaitWritable();
        if (!health.writable()) {
            return refused(
                    id,
                    id + ": " + verb(to) + " refused: " + health.describe() + "; nothing changed, try"
                            + " again when this master is connected to ZooKeeper with a quorum");
        }
        try {
            for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
                Optional<AdminResult> result = attempt(id, from, to, expected, actor);
                if (result.isPresent()) {
                    return result.get();
                }
            }
            return refused(id, id + ": " + verb(to) + " failed: the id kept changing; try again");
        } catch (KeeperException e) {
            return refused(
                    id,
                    id + ": " + verb(to) + " failed: the cluster cannot be written ("
                            + e.code().name().toLowerCase(Locale.ROOT).replace('_', ' ')
                            + "); nothing changed, try again when ZooKeeper has a quorum");
        }
    }

    private Optional<AdminResult> attempt(String id, KeyState from, KeyState to, String expected, String actor)
            throws KeeperException {
        ZkWrites.Read mainRead = store.read(ZkRecords.keyPath(id));
        StoredKey main = mainRead.key(id);
        ZkWrites.Read sourceRead;
        StoredKey source;
        if (from.exclusive()) {
            if (main == null || main.state() != from) {
                if (main != null && main.state() == to && (expected == null || expected.equals(main.fingerprint()))) {
                    return Optional.of(of(id, Status.UNCHANGED, id + ": already " + to.label()));
                }
                if (main != null && expected != null && !expected.equals(main.fingerprint())) {
                    // Another key took the id since it was listed: never report it as this one's outcome.
                    return Optional.of(AdminResult.replaced(id, main.state(), main.fingerprint(), from, expected));
                }
                return Optional.of(of(
                        id,
                        Status.NOT_FOUND,
                        id + ": no " + from.label() + " key"
                                + (main == null
                                        ? ""
                                        : " (the id is " + main.state().label() + ")")));
            }
            sourceRead = mainRead;
            source = main;
        } else {
            sourceRead = store.read(ZkRecords.deniedPath(id));
            source = sourceRead.key(id);
            if (source == null) {
                return Optional.of(of(id, Status.NOT_FOUND, id + ": no denied key"));
            }
            if (to != null && main != null) {
                if (main.state() == KeyState.REJECTED && to == KeyState.REJECTED) {
                    return Optional.of(
                            of(id, Status.UNCHANGED, id + ": already rejected; its denied key is left" + " in place"));
                }
                return Optional.of(
                        refused(
                                id,
                                id + ": already has " + (main.state() == KeyState.ACCEPTED ? "an " : "a ")
                                        + main.state().label() + " key (" + main.fingerprint() + "); a denied key never"
                                        + " replaces a stored key. Delete the id's keys and let the minion offer its key again"));
            }
        }
        if (expected != null && !expected.equals(source.fingerprint())) {
            return Optional.of(refused(
                    id,
                    id + ": the " + source.state().label() + " key has fingerprint " + source.fingerprint() + ", not "
                            + expected + "; nothing changed"));
        }
        if (to == KeyState.ACCEPTED && maxMinions > 0 && store.view().count(KeyState.ACCEPTED) >= maxMinions) {
            return Optional.of(refused(id, id + ": max minions (" + maxMinions + ") reached"));
        }
        String sourcePath = from.exclusive() ? ZkRecords.keyPath(id) : ZkRecords.deniedPath(id);
        ZkWrites.Transaction tx = store.writes().begin();
        // One key, one id: the fingerprint's znode is changed or version-checked in every transaction on a stored
        // key (a denied key holds no id and is not recorded there, ZkFingerprints).
        ZkFingerprints.Changes owners = new ZkFingerprints.Changes(store, id, false);
        String slot = ZkFingerprints.keySlot(id);
        if (to == null) {
            tx.delete(sourcePath, sourceRead.version());
            if (from.exclusive()) {
                owners.remove(source.fingerprint(), slot);
            }
        } else if (from.exclusive()) {
            tx.setData(sourcePath, sourceRead.version(), ZkRecords.encodeKey(to, source.key(), source.kind()));
            owners.add(source.fingerprint(), slot); // already there: a version check
        } else {
            tx.create(ZkRecords.keyPath(id), ZkRecords.encodeKey(to, source.key()));
            tx.delete(sourcePath, sourceRead.version());
            owners.add(source.fingerprint(), slot);
        }
        if (!owners.fits()) {
            return Optional.of(refused(
                    id,
                    id + ": " + verb(to) + " refused: the same key is held by more ids than"
                            + " the cluster records (" + KeyListing.sameKeyAs(owners.otherIds(source.fingerprint()))
                            + "); delete some of them first"));
        }
        owners.writeTo(tx);
        // An admin's ask to rotate the key goes with it (ZkRotationAsks bumps the key's version, so an ask made since
        // the read fails this transaction, which is decided again).
        Optional<ZkWrites.Read> asked = from == KeyState.ACCEPTED && to != KeyState.ACCEPTED
                ? store.asks().dropIn(tx, id)
                : Optional.empty();
        // One key, one id: an admin may accept a key stored under another id (brine-key asks for a flag); say so,
        // as the fingerprint's znode has it (this master's view may not have heard yet).
        List<String> sharing = to == null ? List.of() : owners.sameKeyAs(source.fingerprint());
        String reason = to == null
                ? "deleted by admin"
                : to.label() + " by admin" + (sharing.isEmpty() ? "" : "; " + KeyListing.sameKeyAs(sharing));
        tx.audit(AuditEvent.builder(to == null ? "key-deleted" : AuditEvent.keyChange(to.label()), actor)
                .id(id)
                .from(from.label())
                .to(to == null ? null : to.label())
                .fingerprint(source.fingerprint())
                .reason(reason)
                .build());
        Optional<Long> zxid = tx.commit();
        if (zxid.isEmpty()) {
            return Optional.empty();
        }
        if (asked.isPresent()) {
            store.asks().dropped(id, zxid.get());
        }
        ZkKeyView view = store.view();
        if (to == null) {
            view.apply(!from.exclusive(), id, null, -1, zxid.get());
            return Optional.of(new AdminResult(
                    id, Status.DONE, Optional.of(from), Optional.empty(), source.fingerprint(), id + ": deleted"));
        }
        if (from.exclusive()) {
            view.apply(
                    false,
                    id,
                    ZkKeyStore.storedKey(id, to, source.key()).as(source.kind()),
                    sourceRead.version() + 1,
                    zxid.get());
        } else {
            view.apply(false, id, ZkKeyStore.storedKey(id, to, source.key()), 0, zxid.get());
            view.apply(true, id, null, -1, zxid.get());
        }
        return Optional.of(new AdminResult(
                id, Status.DONE, Optional.of(from), Optional.of(to), source.fingerprint(), id + ": " + to.label()));
    }

    /** {@link ZkKeyStore#importKey}: a versioned create of the id's znode, never a replacement. */
    ZkKeyStore.Imported importKey(
            String id, KeyState state, RSAPublicKey key, MinionKind kind, String actor, String reason)
            throws IOException {
        MinionIds.requireValid(id);
        Objects.requireNonNull(key, "key");
        ClusterHealth now = store.awaitWritable();
        if (!now.writable()) {
            throw new IOException(now.describe());
        }
        boolean denied = state == KeyState.DENIED;
        String path = denied ? ZkRecords.deniedPath(id) : ZkRecords.keyPath(id);
        try {
            for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
                ZkWrites.Read read = store.read(path);
                StoredKey current = read.key(id);
                if (current != null) {
                    return current.state() == state
                                    && KeyLookup.sameKey(current.key(), key)
                                    && (denied || current.kind() == kind)
                            ? ZkKeyStore.Imported.UNCHANGED
                            : ZkKeyStore.Imported.CONFLICT;
                }
                // One key, one id: an import never stores a key another id holds (brine-key checks first; this
                // is the check no other master can race). A denied key holds no id: it neither conflicts nor is
                // recorded (the live cluster itself makes {keys/B, denied/A} for one key).
                String fingerprint = Fingerprints.of(key);
                ZkFingerprints.Changes owners = new ZkFingerprints.Changes(store, id, attempt == 0);
                ZkWrites.Transaction tx = store.writes().begin();
                MinionKind filed = denied ? MinionKind.BRINE : kind;
                tx.create(path, ZkRecords.encodeKey(state, key, filed));
                if (!denied) {
                    if (!owners.otherIds(fingerprint).isEmpty()) {
                        return ZkKeyStore.Imported.CONFLICT;
                    }
                    owners.add(fingerprint, ZkFingerprints.keySlot(id)).writeTo(tx);
                }
                tx.audit(AuditEvent.builder(AuditEvent.keyChange(state.label()), actor)
                        .id(id)
                        .to(state.label())
                        .fingerprint(fingerprint)
                        .reason(reason)
                        .build());
                Optional<Long> zxid = tx.commit();
                if (zxid.isPresent()) {
                    store.view()
                            .apply(
                                    denied,
                                    id,
                                    ZkKeyStore.storedKey(id, state, key).as(filed),
                                    0,
                                    zxid.get());
                    return ZkKeyStore.Imported.ADDED;
                }
            }
            throw new IOException(id + ": lost " + MAX_ATTEMPTS + " races in a row");
        } catch (KeeperException e) {
            throw new IOException("the cluster cannot be written: " + e.getMessage(), e);
        }
    }

    private static AdminResult of(String id, Status status, String message) {
        return new AdminResult(id, status, Optional.empty(), Optional.empty(), null, message);
    }

    private static AdminResult refused(String id, String message) {
        return of(id, Status.REFUSED, message);
    }

    private static String verb(KeyState to) {
        return to == null
                ? "delete"
                : to == KeyState.ACCEPTED ? "accept" : to == KeyState.REJECTED ? "reject" : to.label();
    }
}
