package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.MasterKeyRotation.MasterKeySet;
import io.brine.store.keys.MasterKeyRotation.Rotated;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
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
}
