package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.salt.SaltPubkeySignature;
import io.brine.protocol.salt.SaltRsa;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.MasterKeyRotation.MasterKeySet;
import io.brine.store.keys.MasterKeyRotation.Rotated;
import io.brine.store.keys.OfflineMasterSigning;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster's master key rotations in {@code /master_key} (issue 25): a master holding its installed key reaches
 * the newest key and, within the grace, the one before; the rotation is one transaction, so one that fails changes
 * nothing; past the records kept the cluster's first key reaches the newest through the anchor; a record not signed by
 * the key before it, or a chain that no longer holds another installed key, is refused.
 */
class ZkMasterKeysTest {

    @RegisterExtension
    static final SharedZooKeeperServer ZOOKEEPER = new SharedZooKeeperServer();

    private static final KeyPair INSTALLED = TestKeys.pair(200);
    private static final Duration GRACE = Duration.ofDays(7);

    @TempDir
    Path pki;

    private final Clock clock = Clock.fixed(Instant.parse("2026-11-29T04:00:00Z"), ZoneOffset.UTC);
    private CuratorFramework client;
    private ZkKeyStore store;
    private ZkMasterKeys keys;

    @BeforeEach
    void open() throws Exception {
        client = ClusterConnection.open(ZOOKEEPER.freshRoot());
        store = ZkKeyStore.open(
                client, ZkKeyStoreOptions.of(pki, null, AuditLog.none(), clock), Duration.ofSeconds(30));
        keys = new ZkMasterKeys(client);
    }

    @AfterEach
    void close() {
        keys.close();
        store.close();
        client.close();
    }

    private Rotated rotate(int keep) throws Exception {
        return store.rotateMasterKey(INSTALLED, 2048, GRACE, keep, Optional.empty(), "brine-key:test", clock);
    }

    @Test
    void aMasterReachesTheNewestKeyFromItsInstalledOneAndThePreviousWithinTheGrace() throws Exception {
        assertThat(keys.load(INSTALLED, clock.millis()).current()).isSameAs(INSTALLED);
        Rotated first = rotate(5);
        Rotated second = rotate(5);
        assertThat(second.previous()).isEqualTo(first.next());

        MasterKeySet loaded = keys.load(INSTALLED, clock.millis());
        assertThat(loaded.current().getPublic()).isEqualTo(second.next());
        assertThat(loaded.previous().orElseThrow().getPublic()).isEqualTo(first.next());
        assertThat(loaded.chain()).hasSize(2);
        // Private halves are in ZooKeeper only sealed; the audit trail names the rotation.
        String node = new String(client.getData().forPath(ZkMasterKeys.PATH), StandardCharsets.UTF_8);
        assertThat(node).doesNotContain("PRIVATE KEY");
        assertThat(ZkAuditTrail.read(client)).anyMatch(line -> line.contains("\"master-key-rotated\""));
        // A master installed with the newest key serves it, with no previous one; after the grace nobody has one.
        assertThat(keys.load(loaded.current(), clock.millis()).previous()).isEmpty();
        assertThat(keys.load(INSTALLED, clock.millis() + GRACE.toMillis()).previous())
                .isEmpty();
    }

    @Test
    void aRotationWhoseTransactionFailsChangesNothingAndTheNextGoesOnFromTheKeyInForce() throws Exception {
        Rotated first = rotate(5);
        byte[] before = client.getData().forPath(ZkMasterKeys.PATH);
        // The audit event is the transaction's last write: refused there, the record's write is undone with it.
        client.setACL()
                .withACL(List.of(new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.ADMIN, ZooDefs.Ids.ANYONE_ID_UNSAFE)))
                .forPath(ZkRecords.AUDIT);
        assertThatThrownBy(() -> rotate(5)).hasMessageContaining("ZooKeeper");
        assertThat(client.getData().forPath(ZkMasterKeys.PATH)).isEqualTo(before);
        assertThat(keys.load(INSTALLED, clock.millis()).current().getPublic()).isEqualTo(first.next());

        client.setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(ZkRecords.AUDIT);
        Rotated next = rotate(5);
        assertThat(next.previous()).isEqualTo(first.next());
        assertThat(keys.load(INSTALLED, clock.millis()).chain()).hasSize(2);
    }

    @Test
    void aRecordNotSignedByTheKeyBeforeItIsRefused() throws Exception {
        KeyPair stranger = TestKeys.pair(201);
        KeyPair planted = TestKeys.pair(202);
        byte[] previous = INSTALLED.getPublic().getEncoded();
        byte[] next = planted.getPublic().getEncoded();
        long now = clock.millis();
        byte[] signed = MasterSuccessions.signedBytes(previous, next, now, now + GRACE.toMillis());
        // Sealing needs only the installed public key; the signature would need its private key.
        MasterSuccession forged = new MasterSuccession(
                previous, next, now, now + GRACE.toMillis(), Rsa.sign(stranger.getPrivate(), signed), null);
        client.create()
                .forPath(
                        ZkMasterKeys.PATH,
                        ZkMasterKeys.encode(
                                ZkMasterKeys.append(ZkMasterKeys.Stored.NONE, forged, planted, stranger, stranger, 5)));

        assertThatThrownBy(() -> keys.load(INSTALLED, now))
                .isInstanceOf(KeyStoreException.class)
                .hasMessageContaining("not signed by the key before it");
        assertThatThrownBy(() -> rotate(5)).isInstanceOf(KeyStoreException.class);
    }

    @Test
    void pastTheRecordsKeptTheFirstKeyReachesTheNewestThroughItsAnchorAndAnotherIsToldToCopyTheKeyInService()
            throws Exception {
        rotate(1);
        KeyPair second = keys.load(INSTALLED, clock.millis()).current();
        Rotated before = rotate(1);
        Rotated last = rotate(1);
        assertThat(keys.load(INSTALLED, clock.millis()).chain()).hasSize(1);

        MasterKeySet anchored = keys.load(INSTALLED, clock.millis());
        assertThat(anchored.current().getPublic()).isEqualTo(last.next());
        assertThat(anchored.previous().orElseThrow().getPublic()).isEqualTo(before.next());
        assertThatThrownBy(() -> keys.load(second, clock.millis()))
                .isInstanceOf(KeyStoreException.class)
                .hasMessageContaining("not in the cluster's master key chain")
                .hasMessageContaining("copy master.pem");
    }

    @Test
    void aDamagedOrOversizedRecordIsRefused() throws Exception {
        assertThatThrownBy(() -> ZkMasterKeys.decode("{".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("damaged");
        assertThatThrownBy(() -> ZkMasterKeys.decode(new byte[ZkMasterKeys.MAX_NODE_BYTES + 1]))
                .hasMessageContaining("over " + ZkMasterKeys.MAX_NODE_BYTES);
        assertThatThrownBy(() -> ZkMasterKeys.decode(new byte[ZkMasterKeys.MAX_NODE_BYTES]))
                .hasMessageContaining("damaged");
    }

    private static final KeyPair SIGNING = TestKeys.pair(251);

    private static OfflineMasterSigning.Signature signed(OfflineMasterSigning.ToSign request, KeyPair signing)
            throws Exception {
        return OfflineMasterSigning.sign(request, signing.getPrivate(), (RSAPublicKey) signing.getPublic());
    }

    private ZkMasterKeys.InForce inForce() throws Exception {
        return keys.loadInForce(INSTALLED, clock.millis());
    }

    /**
     * Issue 25, the two steps in a cluster: the pending key and its request are in ZooKeeper (not in force, a
     * one-step rotation and a second prepare refused meanwhile); a signature by another signing key is refused with
     * nothing changed; the signing key's puts the key in force with its record signed by both and Salt's pub_sig of
     * it, the pending rotation gone, in one audited write.
     */
    @Test
    void aRotationSignedOfflineWaitsInZooKeeperAndIsPutInForceWithItsPubSig() throws Exception {
        OfflineMasterSigning.Request request =
                store.prepareMasterKeyRotation(INSTALLED, 2048, GRACE, "brine-key:test", clock);
        assertThat(request.previous()).isEqualTo(INSTALLED.getPublic());
        assertThat(keys.pending()).contains(request);
        assertThat(inForce().keys().current()).isSameAs(INSTALLED);
        assertThat(new String(client.getData().forPath(ZkMasterKeys.PATH), StandardCharsets.UTF_8))
                .doesNotContain("PRIVATE KEY");
        assertThatThrownBy(() -> rotate(5)).hasMessageContaining("waiting for its signature");
        assertThatThrownBy(() -> store.prepareMasterKeyRotation(INSTALLED, 2048, GRACE, "brine-key:test", clock))
                .hasMessageContaining("waiting for its signature");

        byte[] before = client.getData().forPath(ZkMasterKeys.PATH);
        RSAPublicKey signingPub = (RSAPublicKey) SIGNING.getPublic();
        assertThatThrownBy(() -> store.completeMasterKeyRotation(
                        INSTALLED, signed(request, TestKeys.pair(252)), signingPub, 5, "brine-key:test", clock))
                .isInstanceOf(KeyStoreException.class)
                .hasMessageContaining("not made by the master signing key");
        assertThat(client.getData().forPath(ZkMasterKeys.PATH)).isEqualTo(before);

        Rotated rotated = store.completeMasterKeyRotation(
                INSTALLED, signed(request, SIGNING), signingPub, 5, "brine-key:test", clock);
        assertThat(rotated.next()).isEqualTo(request.next());
        ZkMasterKeys.InForce now = inForce();
        assertThat(now.keys().current().getPublic()).isEqualTo(request.next());
        assertThat(now.keys().previous().orElseThrow()).isSameAs(INSTALLED);
        MasterSuccession record = now.keys().chain().get(0);
        assertThat(record.signingSignature()).isNotNull();
        assertThat(MasterSuccessions.walk(
                        (RSAPublicKey) INSTALLED.getPublic(), now.keys().chain(), Optional.of(signingPub)))
                .isInstanceOf(MasterSuccessions.Walk.Verified.class);
        assertThat(SaltPubkeySignature.parse(now.saltSignature().orElseThrow()).verifies(request.next(), signingPub))
                .isTrue();
        assertThat(keys.pending()).isEmpty();
        assertThat(ZkAuditTrail.read(client))
                .anyMatch(line -> line.contains("\"master-key-rotation-prepared\""))
                .anyMatch(line -> line.contains("\"master-key-rotated\""));
        // An unsigned one-step rotation leaves no pub_sig of an older key behind.
        rotate(5);
        assertThat(inForce().saltSignature()).isEmpty();
    }

    /** Stale: the signature of an earlier request of a dropped rotation, and a request whose grace ran out. */
    @Test
    void aSignatureOfAnotherRequestOrPastTheGraceIsRefusedAndCancelDropsThePendingKey() throws Exception {
        OfflineMasterSigning.Request first =
                store.prepareMasterKeyRotation(INSTALLED, 2048, GRACE, "brine-key:test", clock);
        OfflineMasterSigning.Signature firstSigned = signed(first, SIGNING);
        assertThat(store.cancelPreparedMasterKeyRotation("brine-key:test")).contains(first);
        assertThat(keys.pending()).isEmpty();
        assertThatThrownBy(() -> store.cancelPreparedMasterKeyRotation("brine-key:test"))
                .hasMessageContaining("no prepared rotation");
        assertThatThrownBy(() -> store.completeMasterKeyRotation(
                        INSTALLED, firstSigned, (RSAPublicKey) SIGNING.getPublic(), 5, "brine-key:test", clock))
                .hasMessageContaining("no prepared rotation");

        OfflineMasterSigning.Request second =
                store.prepareMasterKeyRotation(INSTALLED, 2048, GRACE, "brine-key:test", clock);
        assertThatThrownBy(() -> store.completeMasterKeyRotation(
                        INSTALLED, firstSigned, (RSAPublicKey) SIGNING.getPublic(), 5, "brine-key:test", clock))
                .hasMessageContaining("for another key");
        Clock late = Clock.offset(clock, GRACE);
        assertThatThrownBy(() -> store.completeMasterKeyRotation(
                        INSTALLED, signed(second, SIGNING), (RSAPublicKey) SIGNING.getPublic(), 5, "t", late))
                .hasMessageContaining("stale request");
        assertThat(inForce().keys().current()).isSameAs(INSTALLED);
    }

    /**
     * Issue 25, signing the key in force without a rotation: the pub_sig of the cluster's newest key is kept in
     * ZooKeeper once it verifies against master_sign.pub; one by another signing key, or of a key no longer in force,
     * is refused with nothing changed.
     */
    @Test
    void thePubSigOfTheKeyInForceIsKeptWithoutARotationAndAForeignOrStaleOneIsRefused() throws Exception {
        Rotated rotated = rotate(5);
        RSAPublicKey signingPub = (RSAPublicKey) SIGNING.getPublic();
        RSAPublicKey installedPub = (RSAPublicKey) INSTALLED.getPublic();
        OfflineMasterSigning.KeyRequest request = new OfflineMasterSigning.KeyRequest(rotated.next(), clock.millis());
        byte[] before = client.getData().forPath(ZkMasterKeys.PATH);
        assertThatThrownBy(() -> store.installMasterKeySignature(
                        installedPub, signed(request, TestKeys.pair(252)), signingPub, "brine-key:test"))
                .hasMessageContaining("not made by the master signing key");
        OfflineMasterSigning.KeyRequest ofInstalled = new OfflineMasterSigning.KeyRequest(installedPub, clock.millis());
        assertThatThrownBy(() -> store.installMasterKeySignature(
                        installedPub, signed(ofInstalled, SIGNING), signingPub, "brine-key:test"))
                .hasMessageContaining("not the key in force");
        assertThat(client.getData().forPath(ZkMasterKeys.PATH)).isEqualTo(before);

        assertThat(store.installMasterKeySignature(
                        installedPub, signed(request, SIGNING), signingPub, "brine-key:test"))
                .isEqualTo(rotated.next());
        ZkMasterKeys.InForce now = inForce();
        assertThat(now.keys().current().getPublic()).isEqualTo(rotated.next());
        assertThat(SaltPubkeySignature.parse(now.saltSignature().orElseThrow()).verifies(rotated.next(), signingPub))
                .isTrue();
        assertThat(ZkAuditTrail.read(client)).anyMatch(line -> line.contains("\"master-key-signature-installed\""));
    }

    /** A pending rotation written by someone without the master key (sealing needs only its public half). */
    @Test
    void aPendingRotationNotSignedByTheKeyInForceIsNeverPutInForce() throws Exception {
        KeyPair stranger = TestKeys.pair(201);
        KeyPair planted = TestKeys.pair(202);
        long now = clock.millis();
        OfflineMasterSigning.Request request = new OfflineMasterSigning.Request(
                (RSAPublicKey) INSTALLED.getPublic(), (RSAPublicKey) planted.getPublic(), now, now + GRACE.toMillis());
        byte[] previous = INSTALLED.getPublic().getEncoded();
        byte[] next = planted.getPublic().getEncoded();
        MasterSuccession forged = new MasterSuccession(
                previous,
                next,
                now,
                now + GRACE.toMillis(),
                Rsa.sign(
                        stranger.getPrivate(),
                        MasterSuccessions.signedBytes(previous, next, now, now + GRACE.toMillis())),
                null);
        // The planted key sealed for the installed key as a real pending one is: taken from an honest append.
        ZkMasterKeys.Stored honest =
                ZkMasterKeys.append(ZkMasterKeys.Stored.NONE, forged, planted, INSTALLED, stranger, 5);
        client.create()
                .forPath(
                        ZkMasterKeys.PATH,
                        ZkMasterKeys.encode(ZkMasterKeys.Stored.NONE.with(
                                new ZkMasterKeys.Pending(forged, honest.sealed().get(0)), null)));
        assertThatThrownBy(() -> store.completeMasterKeyRotation(
                        INSTALLED, signed(request, SIGNING), (RSAPublicKey) SIGNING.getPublic(), 5, "t", clock))
                .hasMessageContaining("not signed by the key in force");
        assertThat(inForce().keys().current()).isSameAs(INSTALLED);
    }

    /** Salt's pub_sig in /master_key is read at its bound (16 KiB) and refused one character past it. */
    @Test
    void aPubSigInZooKeeperIsReadAtItsBoundAndRefusedOnePast() throws Exception {
        String line = "PKCS1v15-SHA1 AAAA\n";
        String atBound = line + "\n".repeat(SaltPubkeySignature.MAX_BYTES - line.length());
        client.create().forPath(ZkMasterKeys.PATH, ZkMasterKeys.encode(ZkMasterKeys.Stored.NONE.with(null, atBound)));
        assertThat(SaltPubkeySignature.parse(inForce().saltSignature().orElseThrow())
                        .forAlgorithm(SaltRsa.Signing.PKCS1V15_SHA1))
                .contains("AAAA");
        client.setData()
                .forPath(ZkMasterKeys.PATH, ZkMasterKeys.encode(ZkMasterKeys.Stored.NONE.with(null, atBound + "\n")));
        String past = inForce().saltSignature().orElseThrow();
        assertThatThrownBy(() -> SaltPubkeySignature.parse(past))
                .hasMessageContaining("over " + SaltPubkeySignature.MAX_BYTES);
        // The chain is still read: a bad pub_sig is the master's to refuse, not a reason to stop using the keys.
        assertThat(inForce().keys().current()).isSameAs(INSTALLED);
    }
}
