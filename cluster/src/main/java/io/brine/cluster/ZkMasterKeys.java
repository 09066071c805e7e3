package io.brine.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.crypto.Aead;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.salt.SaltPubkeySignature;
import io.brine.store.audit.AuditEvent;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.MasterKeyRotation;
import io.brine.store.keys.MasterKeyRotation.MasterKeySet;
import io.brine.store.keys.OfflineMasterSigning;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The cluster's master key rotations, {@code /master_key} (PROTOCOL.md 6.4): the chain of succession records and,
 * beside each record, the private half of the key it names, sealed (AES-256-GCM under a fresh key wrapped with
 * RSA-OAEP) for the record's previous public key, as the publish key is sealed for the master key. A master holding
 * any key of the chain (its installed {@code master.pem}) walks it record by record: each record must verify with
 * the key the walk holds (a ZooKeeper writer without the master key cannot extend the chain: sealing needs only a
 * public key, signing does not) and each unsealed private key must be the record's next key. Past the records kept,
 * a master installed with the cluster's first key opens the {@link Anchor} instead. One znode, replaced by
 * one versioned transaction with its audit event ({@link ZkKeyStore#rotateMasterKey}): every master sees the old
 * chain or the new one, never a part.
 */
public final class ZkMasterKeys implements AutoCloseable {

    static final String PATH = "/master_key";
    /** 16 records of 8,192-bit keys, each with its sealed private key, stay well below this. */
    static final int MAX_NODE_BYTES = 256 * 1024;

    private static final String PURPOSE = "brine-master-keys 1";
    private static final String ANCHOR_PURPOSE = "brine-master-anchor-v1";
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The newest and the previous private keys sealed for the cluster's first key, signed by it: how a master still
     * installed with that key reaches the newest once its record is no longer kept.
     */
    record Anchor(byte[] newest, byte[] previous, byte[] signature) {}

    /**
     * A rotation prepared for the offline signing key ({@code brine-key --rotate-master-key --prepare}): its record,
     * signed by the key in force but not yet by the signing key, and the new private key sealed for the key in force,
     * as a record's is. Not in force; {@link #completePrepared} adds the signing key's signature and appends it.
     */
    record Pending(MasterSuccession record, byte[] sealed) {

        /** The request the admin signs, as a master alone's {@code master_sign.request}. */
        OfflineMasterSigning.Request request() throws KeyStoreException {
            try {
                return new OfflineMasterSigning.Request(
                        RsaKeys.publicKeyFromDer(record.previousKey()),
                        RsaKeys.publicKeyFromDer(record.nextKey()),
                        record.issuedMs(),
                        record.graceUntilMs());
            } catch (KeyFormatException e) {
                throw new KeyStoreException(PATH + ": the prepared rotation names no RSA key: " + e.getMessage(), e);
            }
        }
    }

    /**
     * What {@code /master_key} holds: the chain, oldest first, the sealed next key of each record, and the cluster's
     * first key ({@code origin}) with its {@link Anchor} (null when the newest rotation was made without that key);
     * the rotation prepared for the offline signing key ({@code pending}, or null), and Salt's {@code pub_sig} of the
     * newest key as {@link SaltPubkeySignature#text} ({@code pubSig}, or null: made by the signing key, checked by each
     * master against its own {@code master_sign.pub} before it is sent).
     */
    record Stored(
            List<MasterSuccession> chain,
            List<byte[]> sealed,
            byte[] origin,
            Anchor anchor,
            Pending pending,
            String pubSig) {
        Stored {
            chain = List.copyOf(chain);
            sealed = List.copyOf(sealed);
            if (chain.size() != sealed.size()) {
                throw new IllegalArgumentException(chain.size() + " records, " + sealed.size() + " sealed keys");
            }
        }

        Stored(List<MasterSuccession> chain, List<byte[]> sealed, byte[] origin, Anchor anchor) {
            this(chain, sealed, origin, anchor, null, null);
        }

        Stored with(Pending pending, String pubSig) {
            return new Stored(chain, sealed, origin, anchor, pending, pubSig);
        }

        static final Stored NONE = new Stored(List.of(), List.of(), null, null);
    }

    /**
     * The keys in force for one master, and Salt's {@code pub_sig} as ZooKeeper holds it (unchecked, unparsed: the
     * master parses it, bounded, and checks it against the key in force and its {@code master_sign.pub}).
     */
    public record InForce(MasterKeySet keys, Optional<String> saltSignature) {}

    private final CuratorFramework client;
    private CuratorCache cache;

    public ZkMasterKeys(CuratorFramework client) {
        this.client = client;
    }

    /** What {@code /master_key} holds now (nothing before the cluster's first rotation). */
    Stored read() throws IOException, KeyStoreException {
        try {
            Stat stat = client.checkExists().forPath(PATH);
            if (stat != null && stat.getDataLength() > MAX_NODE_BYTES) {
                // Refused before its bytes are fetched; decode checks again what a later write may have made.
                throw new KeyStoreException(
                        PATH + " holds " + stat.getDataLength() + " bytes, over " + MAX_NODE_BYTES + "; not used");
            }
            byte[] data = stat == null ? null : client.getData().forPath(PATH);
            return decode(data);
        } catch (IOException | KeyStoreException e) {
            throw e;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("cannot read the cluster's master key record " + PATH + ": " + e, e);
        }
    }

    /**
     * The keys in force for a master that holds {@code installed}, at {@code nowMs}: the newest key of the chain
     * and, while the newest record's grace lasts, the one it replaced.
     *
     * @throws KeyStoreException when {@code installed} is not in the chain, or the chain does not walk from it
     */
    public MasterKeySet load(KeyPair installed, long nowMs) throws IOException, KeyStoreException {
        return resolve(read(), installed, nowMs);
    }

    /** As {@link #load}, with Salt's {@code pub_sig} of the same read. */
    public InForce loadInForce(KeyPair installed, long nowMs) throws IOException, KeyStoreException {
        Stored stored = read();
        return new InForce(resolve(stored, installed, nowMs), Optional.ofNullable(stored.pubSig()));
    }

    /** The rotation prepared for the offline signing key; empty when none waits. */
    public Optional<OfflineMasterSigning.Request> pending() throws IOException, KeyStoreException {
        Pending pending = read().pending();
        return pending == null ? Optional.empty() : Optional.of(pending.request());
    }

    /**
     * The newest public key of the chain, each record verified from {@code installed} (no private key needed:
     * brine-key's {@code -F}); {@code installed} itself before the first rotation.
     *
     * @throws KeyStoreException when the chain does not lead from {@code installed}
     */
    public RSAPublicKey newestPublic(RSAPublicKey installed) throws IOException, KeyStoreException {
        return newestPublic(read().chain(), installed);
    }

    private static RSAPublicKey newestPublic(List<MasterSuccession> chain, RSAPublicKey installed)
            throws KeyStoreException {
        if (chain.isEmpty() || Arrays.equals(chain.get(chain.size() - 1).nextKey(), installed.getEncoded())) {
            return installed;
        }
        MasterSuccessions.Walk walk = MasterSuccessions.walk(installed, chain, Optional.empty());
        if (walk instanceof MasterSuccessions.Walk.Verified verified) {
            return verified.newest();
        }
        throw new KeyStoreException("the cluster's master key chain " + PATH + " does not lead from master.pub here ("
                + ((MasterSuccessions.Walk.Refused) walk).reason() + "); install the key of a master in service");
    }

    /** Calls {@code onChange} (on Curator's thread) after each write to {@code /master_key}. */
    public void watch(Runnable onChange) {
        cache = CuratorCache.build(client, PATH, CuratorCache.Options.SINGLE_NODE_CACHE);
        cache.listenable()
                .addListener(CuratorCacheListener.builder()
                        .forCreatesAndChanges((old, node) -> onChange.run())
                        .build());
        cache.start();
    }

    @Override
    public void close() {
        if (cache != null) {
            cache.close();
        }
    }

    /**
     * Rotates the cluster's master key: a new pair, its record signed by the key in force (which {@code installed}
     * leads to) and by {@code signingKey} when given, appended with its sealed private key, the newest {@code keep}
     * kept, written with its audit event in one transaction. Refused, with nothing changed, when another rotation was
     * committed since the read (two admins at once: the second looks first).
     */
    static MasterKeyRotation.Rotated rotate(
            ZkWrites writes,
            KeyPair installed,
            int keysize,
            Duration grace,
            int keep,
            Optional<PrivateKey> signingKey,
            String actor,
            Clock clock)
            throws KeeperException, KeyStoreException {
        ZkWrites.Read read = writes.read(PATH);
        Stored stored = decode(read.data());
        Draft draft = Draft.make(stored, installed, keysize, grace, clock);
        KeyPair old = draft.old();
        KeyPair next = draft.next();
        MasterSuccession record = draft.signedAlsoBy(signingKey);
        MasterKeyRotation.Rotated rotated =
                new MasterKeyRotation.Rotated(record, (RSAPublicKey) old.getPublic(), (RSAPublicKey) next.getPublic());
        // Salt's pub_sig of the new key when the signing key signs the rotation; none else (an older one would not
        // verify for the new key).
        String pubSig = signingKey
                .map(key -> SaltPubkeySignature.sign(key, next.getPublic()).text())
                .orElse(null);
        write(
                writes,
                read,
                append(stored, record, next, old, installed, keep).with(null, pubSig),
                rotated.auditEvent(actor));
        return rotated;
    }

    /**
     * The first of the two steps of a rotation signed offline, in the cluster: a new pair, its record signed by the
     * key in force, kept in {@code /master_key} as the pending rotation (its private key sealed for the key in force)
     * with the audit event, in one versioned transaction. Not in force. Refused while another waits.
     */
    static OfflineMasterSigning.Request prepare(
            ZkWrites writes, KeyPair installed, int keysize, Duration grace, String actor, Clock clock)
            throws KeeperException, KeyStoreException {
        ZkWrites.Read read = writes.read(PATH);
        Stored stored = decode(read.data());
        Draft draft = Draft.make(stored, installed, keysize, grace, clock);
        Pending pending = new Pending(
                draft.record(),
                seal(draft.next(), draft.record().previousKey(), draft.record().nextKey()));
        OfflineMasterSigning.Request request = pending.request();
        write(writes, read, stored.with(pending, stored.pubSig()), OfflineMasterSigning.prepared(request, actor));
        return request;
    }

    /**
     * The last step in the cluster: {@code signature} checked against the pending rotation and {@code signingPub}
     * ({@link OfflineMasterSigning#checkRotation}), the pending record signed by the key in force, its key unsealed;
     * then the record, with the signing key's signature, appended as {@link #rotate} does, the pending rotation
     * dropped and Salt's {@code pub_sig} of the new key kept, with the audit event, in one versioned transaction.
     */
    static MasterKeyRotation.Rotated completePrepared(
            ZkWrites writes,
            KeyPair installed,
            OfflineMasterSigning.Signature signature,
            RSAPublicKey signingPub,
            int keep,
            String actor,
            Clock clock)
            throws KeeperException, KeyStoreException {
        ZkWrites.Read read = writes.read(PATH);
        Stored stored = decode(read.data());
        Pending pending = stored.pending();
        if (pending == null) {
            throw new KeyStoreException("no prepared rotation in the cluster (" + PATH + "): run brine-key"
                    + " --rotate-master-key --prepare first");
        }
        KeyPair old = resolve(stored, installed, clock.millis()).current();
        OfflineMasterSigning.Request request = pending.request();
        OfflineMasterSigning.checkRotation(
                request, signature, (RSAPublicKey) old.getPublic(), signingPub, clock.millis());
        MasterSuccession prepared = pending.record();
        byte[] signed = MasterSuccessions.signedBytes(
                prepared.previousKey(), prepared.nextKey(), prepared.issuedMs(), prepared.graceUntilMs());
        if (prepared.previousSignature() == null
                || !Rsa.verify(old.getPublic(), signed, prepared.previousSignature())) {
            throw new KeyStoreException(PATH + ": the prepared rotation is not signed by the key in force (written by"
                    + " someone without the master key?); drop it with brine-key --rotate-master-key --cancel");
        }
        KeyPair next = unseal(pending.sealed(), old, prepared.nextKey());
        if (!Arrays.equals(next.getPublic().getEncoded(), prepared.nextKey())) {
            throw new KeyStoreException(PATH + ": the prepared private key is not the key the request names; drop it"
                    + " with brine-key --rotate-master-key --cancel");
        }
        MasterSuccession record = new MasterSuccession(
                prepared.previousKey(),
                prepared.nextKey(),
                prepared.issuedMs(),
                prepared.graceUntilMs(),
                prepared.previousSignature(),
                signature.succession());
        MasterKeyRotation.Rotated rotated =
                new MasterKeyRotation.Rotated(record, (RSAPublicKey) old.getPublic(), (RSAPublicKey) next.getPublic());
        write(
                writes,
                read,
                append(stored, record, next, old, installed, keep)
                        .with(null, signature.pubSig().text()),
                rotated.auditEvent(actor));
        return rotated;
    }

    /** Drops the pending rotation, audited; returns its request (empty when it named no key). */
    static Optional<OfflineMasterSigning.Request> cancel(ZkWrites writes, String actor)
            throws KeeperException, KeyStoreException {
        ZkWrites.Read read = writes.read(PATH);
        Stored stored = decode(read.data());
        if (stored.pending() == null) {
            throw new KeyStoreException("no prepared rotation in the cluster (" + PATH + ") to cancel");
        }
        Optional<OfflineMasterSigning.Request> request;
        try {
            request = Optional.of(stored.pending().request());
        } catch (KeyStoreException e) {
            request = Optional.empty(); // an unreadable one is dropped too
        }
        write(writes, read, stored.with(null, stored.pubSig()), OfflineMasterSigning.cancelled(request, actor));
        return request;
    }

    /**
     * Keeps Salt's {@code pub_sig} of the cluster's key in force, reached from {@code installed} (a master host's
     * {@code master.pub}: the records verified, no private key needed), once {@link
     * OfflineMasterSigning#checkKeySignature} passes, with its audit event, in one versioned transaction. Every master
     * checks it again against its own {@code master_sign.pub} before it sends it. Returns the key in force.
     */
    static RSAPublicKey installSaltSignature(
            ZkWrites writes,
            RSAPublicKey installed,
            OfflineMasterSigning.Signature signature,
            RSAPublicKey signingPub,
            String actor)
            throws KeeperException, KeyStoreException {
        ZkWrites.Read read = writes.read(PATH);
        Stored stored = decode(read.data());
        RSAPublicKey inForce = newestPublic(stored.chain(), installed);
        OfflineMasterSigning.checkKeySignature(signature, inForce, signingPub);
        write(
                writes,
                read,
                stored.with(stored.pending(), signature.pubSig().text()),
                OfflineMasterSigning.keySignatureInstalled(inForce, signingPub, actor));
        return inForce;
    }

    /**
     * A new pair after the key in force and its record, signed by that key ({@code signingSignature} nil): refused
     * while a prepared rotation waits.
     */
    private record Draft(KeyPair old, KeyPair next, MasterSuccession record) {

        static Draft make(Stored stored, KeyPair installed, int keysize, Duration grace, Clock clock)
                throws KeyStoreException {
            refuseWhilePrepared(stored);
            KeyPair old = resolve(stored, installed, clock.millis()).current();
            KeyPair next = RsaKeys.generate(keysize);
            long issuedMs = clock.millis();
            long graceUntilMs = issuedMs + grace.toMillis();
            byte[] previousDer = old.getPublic().getEncoded();
            byte[] nextDer = next.getPublic().getEncoded();
            byte[] signed = MasterSuccessions.signedBytes(previousDer, nextDer, issuedMs, graceUntilMs);
            return new Draft(
                    old,
                    next,
                    new MasterSuccession(
                            previousDer, nextDer, issuedMs, graceUntilMs, Rsa.sign(old.getPrivate(), signed), null));
        }

        /** The record, also signed by {@code signingKey} when given. */
        MasterSuccession signedAlsoBy(Optional<PrivateKey> signingKey) {
            if (signingKey.isEmpty()) {
                return record;
            }
            byte[] signed = MasterSuccessions.signedBytes(
                    record.previousKey(), record.nextKey(), record.issuedMs(), record.graceUntilMs());
            return new MasterSuccession(
                    record.previousKey(),
                    record.nextKey(),
                    record.issuedMs(),
                    record.graceUntilMs(),
                    record.previousSignature(),
                    Rsa.sign(signingKey.get(), signed));
        }
    }

    private static void refuseWhilePrepared(Stored stored) throws KeyStoreException {
        if (stored.pending() != null) {
            OfflineMasterSigning.Request pending = stored.pending().request();
            throw new KeyStoreException("a prepared rotation of the cluster's master key is waiting for its signature"
                    + " (new key " + Fingerprints.of(pending.next()) + ", prepared at "
                    + Instant.ofEpochMilli(pending.issuedMs()) + "): finish it with brine-key --rotate-master-key"
                    + " --signature FILE on a master host, or drop it with brine-key --rotate-master-key --cancel");
        }
    }

    /**
     * Replaces {@code /master_key} as {@code read} saw it by {@code stored}, with {@code event}, in one versioned
     * transaction; refused, nothing changed, when another change was committed since the read, or when the record
     * would be over the bound masters read.
     */
    private static void write(ZkWrites writes, ZkWrites.Read read, Stored stored, AuditEvent event)
            throws KeeperException, KeyStoreException {
        byte[] data = encode(stored);
        if (data.length > MAX_NODE_BYTES) {
            throw new KeyStoreException(PATH + " would hold " + data.length + " bytes, over " + MAX_NODE_BYTES);
        }
        ZkWrites.Transaction tx = writes.begin();
        if (read.exists()) {
            tx.setData(PATH, read.version(), data);
        } else {
            tx.create(PATH, data);
        }
        tx.audit(event);
        if (tx.commit().isEmpty()) {
            throw new KeyStoreException("another change of the cluster's master key was committed while this one"
                    + " was made (look with brine-key -F before trying again)");
        }
    }

    /** See {@link #load}. */
    static MasterKeySet resolve(Stored stored, KeyPair installed, long nowMs) throws KeyStoreException {
        List<MasterSuccession> chain = stored.chain();
        byte[] held = installed.getPublic().getEncoded();
        if (chain.isEmpty() || Arrays.equals(chain.get(chain.size() - 1).nextKey(), held)) {
            // No rotation yet, or this master was installed with the newest key: the previous private key is sealed
            // for a key it does not hold, so it signs everything with its own.
            return new MasterKeySet(installed, Optional.empty(), chain);
        }
        int start = -1;
        for (int i = 0; i < chain.size(); i++) {
            if (Arrays.equals(chain.get(i).previousKey(), held)) {
                start = i;
                break;
            }
        }
        if (start < 0 && stored.anchor() != null && Arrays.equals(stored.origin(), held)) {
            return fromAnchor(stored, installed, nowMs);
        }
        if (start < 0) {
            throw new KeyStoreException("this master's key (" + Fingerprints.of(installed.getPublic()) + ") is not"
                    + " in the cluster's master key chain " + PATH + " (the cluster's key was rotated more than"
                    + " master_key_chain times since it was installed here): copy master.pem (mode 0400) and"
                    + " master.pub from a master in service");
        }
        KeyPair previous = null;
        KeyPair walking = installed;
        for (int i = start; i < chain.size(); i++) {
            MasterSuccession step = chain.get(i);
            byte[] signed = MasterSuccessions.signedBytes(
                    step.previousKey(), step.nextKey(), step.issuedMs(), step.graceUntilMs());
            if (!Arrays.equals(step.previousKey(), walking.getPublic().getEncoded())
                    || step.previousSignature() == null
                    || !Rsa.verify(walking.getPublic(), signed, step.previousSignature())) {
                throw new KeyStoreException(PATH + ": record " + (i + 1) + " of the cluster's master key chain is not"
                        + " signed by the key before it (written by someone without the master key?); not used");
            }
            KeyPair next = unseal(stored.sealed().get(i), walking, step.nextKey());
            if (!Arrays.equals(next.getPublic().getEncoded(), step.nextKey())) {
                throw new KeyStoreException(PATH + ": the private key sealed with record " + (i + 1)
                        + " is not the key the record names; not used");
            }
            previous = walking;
            walking = next;
        }
        long graceUntilMs = chain.get(chain.size() - 1).graceUntilMs();
        return new MasterKeySet(walking, nowMs < graceUntilMs ? Optional.of(previous) : Optional.empty(), chain);
    }

    /** The newest key and the previous one, from the anchor, for a master installed with the cluster's first key. */
    private static MasterKeySet fromAnchor(Stored stored, KeyPair installed, long nowMs) throws KeyStoreException {
        MasterSuccession last = stored.chain().get(stored.chain().size() - 1);
        Anchor anchor = stored.anchor();
        if (anchor.signature() == null
                || !Rsa.verify(
                        installed.getPublic(),
                        anchorBytes(last.nextKey(), anchor.newest(), anchor.previous()),
                        anchor.signature())) {
            throw new KeyStoreException(PATH + ": the anchor is not signed by this master's key; not used");
        }
        KeyPair newest = unseal(anchor.newest(), installed, last.nextKey());
        KeyPair previous = unseal(anchor.previous(), installed, last.previousKey());
        if (!Arrays.equals(newest.getPublic().getEncoded(), last.nextKey())
                || !Arrays.equals(previous.getPublic().getEncoded(), last.previousKey())) {
            throw new KeyStoreException(PATH + ": the anchor's keys are not the newest record's; not used");
        }
        return new MasterKeySet(
                newest, nowMs < last.graceUntilMs() ? Optional.of(previous) : Optional.empty(), stored.chain());
    }

    /**
     * {@code stored} with {@code record} and its sealed key appended, the oldest dropped past {@code keep}; with a
     * new anchor when {@code installed} is the cluster's first key (the key of the first rotation's record), else
     * none (an older one would name a key no longer the newest).
     */
    static Stored append(
            Stored stored, MasterSuccession record, KeyPair next, KeyPair previous, KeyPair installed, int keep) {
        List<MasterSuccession> chain = new ArrayList<>(stored.chain());
        List<byte[]> sealed = new ArrayList<>(stored.sealed());
        chain.add(record);
        sealed.add(seal(next, record.previousKey(), record.nextKey()));
        int max = Math.max(1, Math.min(keep, MasterSuccessions.MAX_CHAIN));
        while (chain.size() > max) {
            chain.remove(0);
            sealed.remove(0);
        }
        byte[] origin = stored.origin() != null
                ? stored.origin()
                : stored.chain().isEmpty()
                        ? record.previousKey()
                        : stored.chain().get(0).previousKey();
        Anchor anchor = null;
        if (Arrays.equals(origin, installed.getPublic().getEncoded())) {
            byte[] newest = seal(next, origin, record.nextKey());
            byte[] before = seal(previous, origin, record.previousKey());
            anchor = new Anchor(
                    newest, before, Rsa.sign(installed.getPrivate(), anchorBytes(record.nextKey(), newest, before)));
        }
        return new Stored(chain, sealed, origin, anchor);
    }

    private static byte[] anchorBytes(byte[] nextKey, byte[] newest, byte[] previous) {
        byte[] purpose = ANCHOR_PURPOSE.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(purpose.length + 12 + nextKey.length + newest.length + previous.length)
                .put(purpose)
                .putInt(nextKey.length)
                .put(nextKey)
                .putInt(newest.length)
                .put(newest)
                .putInt(previous.length)
                .put(previous)
                .array();
    }

    /**
     * {@code key}'s private half sealed for {@code recipient} (SPKI DER), bound to {@code named} (the key's SPKI DER):
     * {@code wrapped key length (u16) || RSA-OAEP(recipient, AES key) || AES-GCM(PKCS#1 PEM of the key)}.
     */
    private static byte[] seal(KeyPair key, byte[] recipient, byte[] named) {
        SessionKey aes = SessionKey.random();
        byte[] pem = Pem.bytes(Pem.privateKeyPkcs1(key.getPrivate()));
        try {
            byte[] wrapped = Rsa.wrap(RsaKeys.publicKeyFromDer(recipient), aes.bytes());
            byte[] box = Aead.seal(aes, context(named), pem);
            return ByteBuffer.allocate(2 + wrapped.length + box.length)
                    .putShort((short) wrapped.length)
                    .put(wrapped)
                    .put(box)
                    .array();
        } catch (KeyFormatException e) {
            throw new IllegalStateException("a key of the chain, parsed before", e);
        } finally {
            aes.wipe();
            Arrays.fill(pem, (byte) 0);
        }
    }

    private static KeyPair unseal(byte[] sealed, KeyPair holder, byte[] nextKey) throws KeyStoreException {
        SessionKey key = null;
        byte[] pem = null;
        try {
            int wrappedLength = sealed.length < 2 ? Integer.MAX_VALUE : (sealed[0] & 0xff) << 8 | (sealed[1] & 0xff);
            if (wrappedLength > sealed.length - 2) {
                throw new CryptoException("truncated");
            }
            key = SessionKey.of(Rsa.unwrap(holder.getPrivate(), Arrays.copyOfRange(sealed, 2, 2 + wrappedLength)));
            pem = Aead.open(key, context(nextKey), Arrays.copyOfRange(sealed, 2 + wrappedLength, sealed.length));
            return Pem.readPrivateKey(new String(pem, StandardCharsets.US_ASCII));
        } catch (CryptoException | KeyFormatException e) {
            throw new KeyStoreException(
                    PATH + ": a private key of the cluster's master key chain does not open with"
                            + " this master's key: " + e.getMessage(),
                    e);
        } finally {
            if (key != null) {
                key.wipe();
            }
            if (pem != null) {
                Arrays.fill(pem, (byte) 0);
            }
        }
    }

    /** The sealed key is bound to the record that names it: no sealed key passes for another record's. */
    private static byte[] context(byte[] nextKey) {
        byte[] purpose = PURPOSE.getBytes(StandardCharsets.US_ASCII);
        byte[] out = Arrays.copyOf(purpose, purpose.length + nextKey.length);
        System.arraycopy(nextKey, 0, out, purpose.length, nextKey.length);
        return out;
    }

    static byte[] encode(Stored stored) {
        ObjectNode body = JSON.createObjectNode().put("purpose", PURPOSE);
        body.put("chain", Base64.getEncoder().encodeToString(MasterSuccessions.encodeChain(stored.chain())));
        ArrayNode sealed = body.putArray("sealed");
        stored.sealed().forEach(s -> sealed.add(Base64.getEncoder().encodeToString(s)));
        if (stored.origin() != null) {
            body.put("origin", Base64.getEncoder().encodeToString(stored.origin()));
        }
        if (stored.anchor() != null) {
            body.putObject("anchor")
                    .put(
                            "newest",
                            Base64.getEncoder().encodeToString(stored.anchor().newest()))
                    .put(
                            "previous",
                            Base64.getEncoder().encodeToString(stored.anchor().previous()))
                    .put(
                            "signature",
                            Base64.getEncoder().encodeToString(stored.anchor().signature()));
        }
        if (stored.pending() != null) {
            body.putObject("pending")
                    .put(
                            "record",
                            Base64.getEncoder()
                                    .encodeToString(MasterSuccessions.encodeChain(
                                            List.of(stored.pending().record()))))
                    .put(
                            "sealed",
                            Base64.getEncoder().encodeToString(stored.pending().sealed()));
        }
        if (stored.pubSig() != null) {
            body.put("pub_sig", stored.pubSig());
        }
        return body.toString().getBytes(StandardCharsets.UTF_8);
    }

    static Stored decode(byte[] data) throws KeyStoreException {
        if (data == null || data.length == 0) {
            return Stored.NONE;
        }
        if (data.length > MAX_NODE_BYTES) {
            throw new KeyStoreException(
                    PATH + " holds " + data.length + " bytes, over " + MAX_NODE_BYTES + "; not used");
        }
        try {
            JsonNode body = JSON.readTree(data);
            if (!PURPOSE.equals(body.path("purpose").asText())
                    || !body.path("sealed").isArray()) {
                throw new KeyStoreException(PATH + " does not hold the cluster's master key chain; not used");
            }
            List<MasterSuccession> chain = MasterSuccessions.decodeChain(
                    Base64.getDecoder().decode(body.path("chain").asText("")));
            List<byte[]> sealed = new ArrayList<>();
            for (JsonNode node : body.path("sealed")) {
                sealed.add(Base64.getDecoder().decode(node.asText("")));
            }
            if (sealed.size() != chain.size()) {
                throw new KeyStoreException(
                        PATH + " holds " + chain.size() + " records and " + sealed.size() + " sealed keys; not used");
            }
            byte[] origin = body.hasNonNull("origin")
                    ? Base64.getDecoder().decode(body.get("origin").asText())
                    : null;
            JsonNode anchor = body.path("anchor");
            Pending pending = null;
            if (body.hasNonNull("pending")) {
                List<MasterSuccession> record = MasterSuccessions.decodeChain(Base64.getDecoder()
                        .decode(body.path("pending").path("record").asText("")));
                if (record.size() != 1) {
                    throw new KeyStoreException(
                            PATH + ": the prepared rotation holds " + record.size() + " records, not one; not used");
                }
                pending = new Pending(
                        record.get(0),
                        Base64.getDecoder()
                                .decode(body.path("pending").path("sealed").asText("")));
            }
            JsonNode pubSig = body.path("pub_sig");
            if (!pubSig.isMissingNode() && !pubSig.isNull() && !pubSig.isTextual()) {
                throw new KeyStoreException(PATH + ": pub_sig is not text; not used");
            }
            return new Stored(
                    chain,
                    sealed,
                    origin,
                    anchor.isObject()
                            ? new Anchor(
                                    Base64.getDecoder()
                                            .decode(anchor.path("newest").asText("")),
                                    Base64.getDecoder()
                                            .decode(anchor.path("previous").asText("")),
                                    Base64.getDecoder()
                                            .decode(anchor.path("signature").asText("")))
                            : null,
                    pending,
                    pubSig.isTextual() ? pubSig.asText() : null);
        } catch (IOException | MalformedException | IllegalArgumentException e) {
            throw new KeyStoreException(PATH + " is damaged: " + e.getMessage() + "; not used", e);
        }
    }
}
