package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.brine.daemon.config.ClusterConfig;
import io.brine.daemon.testing.LogCapture;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.AdminResult.Status;
import io.brine.store.keys.IncompleteBatchException;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.RotationAsks;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Admins' asks that minions rotate their keys ({@code brine-key --rotate-keys}) in a cluster's {@code /asked/<id>}
 * (issue 25), where the file store has no counterpart: a znode past the bound is no ask; a connection lost while an
 * ask is sent leaves an outcome nobody may call "nothing changed". What both stores do alike is {@code
 * KeyStoreContract}'s.
 */
class ZkRotationAsksTest {

    @RegisterExtension
    static final SharedZooKeeperServer ZOOKEEPER = new SharedZooKeeperServer();

    @TempDir
    Path pki;

    private final List<AutoCloseable> open = new ArrayList<>();
    private ClusterConfig root;
    private ZkKeyStore a;
    private ZkKeyStore b;

    @BeforeEach
    void twoMasters() throws Exception {
        root = ZOOKEEPER.freshRoot();
        a = store(root);
        b = store(root);
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private ZkKeyStore store(ClusterConfig config) throws Exception {
        CuratorFramework client = ClusterConnection.open(config);
        open.add(client);
        ZkKeyStore store = ZkKeyStore.open(
                client,
                ZkKeyStoreOptions.of(pki.resolve("m" + open.size()), null, AuditLog.none(), Clock.systemUTC()),
                Duration.ofSeconds(30));
        open.add(store);
        return store;
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    private static String fp(int i) {
        return Fingerprints.of(key(i));
    }

    private List<Status> ask(ZkKeyStore store, String... ids) {
        return store.askRotation(List.of(ids), "brine-key:root").stream()
                .map(AdminResult::status)
                .toList();
    }

    private long askedEvents() throws Exception {
        return ZkAuditTrail.read(a.client()).stream()
                .filter(line -> line.contains("\"event\":\"key-rotation-asked\""))
                .count();
    }

    private boolean znode(String path) throws Exception {
        return a.client().checkExists().forPath(path) != null;
    }

    @Test
    void aZnodeOneBytePastTheBoundIsNoAsk_LoggedOnceAMinute_AndAnAskReplacesIt() throws Exception {
        a.offer("web1", key(21), PolicyVerdict.ACCEPT);
        await().until(() -> b.acceptedKey("web1").isPresent());
        String record = fp(21) + " 1764388800000";
        byte[] atBound = (record + " ".repeat(RotationAsks.MAX_RECORD_BYTES - record.length()))
                .getBytes(StandardCharsets.US_ASCII);
        byte[] pastBound = (record + " ".repeat(RotationAsks.MAX_RECORD_BYTES + 1 - record.length()))
                .getBytes(StandardCharsets.US_ASCII);
        CuratorFramework writer = a.client(); // as anyone holding the cluster's credentials could
        try (LogCapture logs = LogCapture.of(ZkRotationAsks.class)) {
            writer.create().forPath(ZkRecords.askedPath("web1"), atBound);
            await().until(() -> a.rotationAsked("web1").isPresent()
                    && b.rotationAsked("web1").isPresent());

            writer.setData().forPath(ZkRecords.askedPath("web1"), pastBound);
            await().until(() ->
                    a.rotationAsked("web1").isEmpty() && b.rotationAsked("web1").isEmpty());
            writer.setData().forPath(ZkRecords.askedPath("web1"), new byte[] {'x', '\n'});
            writer.create().forPath(ZkRecords.ASKED + "/Bad'id", atBound);
            await().until(() ->
                    b.rotationAsks().isEmpty() && logs.at(Level.WARN).size() >= 4);

            assertThat(logs.at(Level.WARN))
                    .filteredOn(line -> line.contains("/asked/web1 is not a key rotation ask"))
                    .as("once a minute per master (a's and b's), whatever comes since")
                    .hasSize(2)
                    .allMatch(line -> line.contains("larger than 128 bytes"));
            assertThat(logs.at(Level.WARN))
                    .filteredOn(line -> line.contains("is not a minion id"))
                    .hasSize(2)
                    .allMatch(line -> line.contains("/asked/'Bad\\u0027id'"));
        }

        assertThat(ask(a, "web1")).containsExactly(Status.DONE);
        await().until(() -> b.rotationAsked("web1").equals(Optional.of(fp(21))));
    }

    @Test
    void aDeleteDecidedBeforeAnAskWasMadeIsDecidedAgain_SoNoAskOutlivesItsKey() throws Exception {
        a.offer("web1", key(25), PolicyVerdict.ACCEPT);
        // What a delete through b reads first: the key's znode, and no ask yet.
        ZkWrites.Read decidedOn = b.read(ZkRecords.keyPath("web1"));
        assertThat(b.read(ZkRecords.askedPath("web1")).exists()).isFalse();

        assertThat(ask(a, "web1")).containsExactly(Status.DONE);

        // Its transaction, as decided then, loses: it is read and decided again, and then it sees the ask.
        ZkWrites.Transaction stale = b.writes().begin().delete(ZkRecords.keyPath("web1"), decidedOn.version());
        assertThat(stale.commit()).isEmpty();
        assertThat(b.delete("web1", "admin").done()).isTrue();
        assertThat(znode(ZkRecords.askedPath("web1"))).isFalse();
    }

    @Test
    void aConnectionLostWhileAnAskIsSentIsAnUnknownOutcome_AndTheAskIsThereExactlyWhenItsAuditEventIs()
            throws Exception {
        a.offer("web1", key(31), PolicyVerdict.ACCEPT);
        a.offer("web2", key(32), PolicyVerdict.ACCEPT);
        a.offer("web3", key(33), PolicyVerdict.ACCEPT);
        CuttableProxy proxy = new CuttableProxy(root.connect());
        open.add(proxy);
        ZkKeyStore cut =
                store(new ClusterConfig(proxy.connectString(), root.root(), Duration.ofSeconds(2), root.auth()));
        await().until(() -> cut.acceptedKey("web3").isPresent());
        assertThat(ask(cut, "web1")).containsExactly(Status.DONE);
        proxy.cutAfter("\"id\":\"web2\"");

        assertThatThrownBy(() -> cut.askRotation(List.of("web2", "web3"), "brine-key:root"))
                .isInstanceOf(UncheckedIOException.class)
                .cause()
                .isInstanceOfSatisfying(IncompleteBatchException.class, stopped -> {
                    assertThat(stopped.unknown()).containsExactly("web2", "web3");
                    assertThat(stopped.notAsked()).isEmpty();
                    assertThat(stopped.results()).isEmpty();
                })
                .hasMessageContaining("the connection to ZooKeeper was lost")
                .hasMessageContaining("while the asks of 2 ids were sent: they may or may not have been recorded");

        // Whatever happened, it happened whole, for the batch: both asks with their audit events, or none of them.
        long events = askedEvents();
        assertThat(events).isIn(1L, 3L);
        assertThat(znode(ZkRecords.askedPath("web2"))).isEqualTo(events == 3);
        assertThat(znode(ZkRecords.askedPath("web3"))).isEqualTo(events == 3);
    }

    private int transactions() throws Exception {
        return a.client().checkExists().forPath(ZkRecords.SEQ).getVersion();
    }

    /**
     * {@code --rotate-keys} on many ids commits one transaction per batch, not one per id (each bumps {@code /seq}
     * once); one id past a batch's bound of ids, or past its bound of bytes, starts another batch, and nothing fails.
     */
    @Test
    void theAsksOfManyIdsAreOneTransactionAndOnePastABatchBoundSplitsIt() throws Exception {
        for (int i = 1; i <= 9; i++) {
            a.offer("web" + i, key(40 + i), PolicyVerdict.ACCEPT);
        }
        int before = transactions();
        assertThat(ask(a, "web1", "web2", "web3")).containsOnly(Status.DONE);
        assertThat(transactions() - before).as("three asks, one transaction").isEqualTo(1);

        a.asks().batchBounds(2, ZkRotationAsks.MAX_BATCH_BYTES);
        before = transactions();
        assertThat(ask(a, "web4", "web5", "web6")).containsOnly(Status.DONE);
        assertThat(transactions() - before).as("a bound of 2 ids, 3 ids").isEqualTo(2);

        a.asks().batchBounds(ZkRotationAsks.MAX_BATCH_IDS, 1);
        before = transactions();
        assertThat(ask(a, "web7", "web8", "web9")).containsOnly(Status.DONE);
        assertThat(transactions() - before)
                .as("every id past a bound of 1 byte: one each")
                .isEqualTo(3);

        assertThat(askedEvents()).isEqualTo(9);
        await().until(() -> b.rotationAsks().size() == 9);
    }

    /**
     * An id whose key is deleted between the batch's reads and its commit fails the batch's version check: it is read
     * again and not asked (no accepted key), and the rest of the batch is committed without it.
     */
    @Test
    void aKeyDeletedBeforeItsBatchIsCommittedIsNotAskedAndTheRestOfTheBatchIs() throws Exception {
        for (int i = 1; i <= 3; i++) {
            a.offer("web" + i, key(50 + i), PolicyVerdict.ACCEPT);
        }
        await().until(() -> b.acceptedKey("web2").isPresent());
        AtomicBoolean deleted = new AtomicBoolean();
        a.asks().beforeCommit(() -> {
            if (deleted.compareAndSet(false, true)) {
                assertThat(b.delete("web2", "admin").done()).isTrue();
            }
        });

        assertThat(ask(a, "web1", "web2", "web3")).containsExactly(Status.DONE, Status.NOT_FOUND, Status.DONE);

        assertThat(znode(ZkRecords.askedPath("web1"))).isTrue();
        assertThat(znode(ZkRecords.askedPath("web2"))).isFalse();
        assertThat(znode(ZkRecords.askedPath("web3"))).isTrue();
        assertThat(askedEvents()).isEqualTo(2);
    }
}
