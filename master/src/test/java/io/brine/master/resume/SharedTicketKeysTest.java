package io.brine.master.resume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.brine.cluster.ClusterConnection;
import io.brine.cluster.ZkTicketKeys;
import io.brine.daemon.config.ClusterConfig;
import io.brine.daemon.testing.LogCapture;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.message.Resumption;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ticket keys of a cluster's masters, shared through a real ZooKeeper server: a ticket one master seals opens on
 * another and on a restarted one, a rotation by one is every master's, and keys nobody with the master key wrote are
 * not used.
 */
class SharedTicketKeysTest {

    private static final KeyPair MASTER_KEY = TestKeys.pair(200);

    private final MovableClock clock = new MovableClock(Instant.parse("2026-11-28T12:00:00Z"));
    private final List<AutoCloseable> open = new ArrayList<>();
    private TestingServer server;

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        server.close();
    }

    private ZkTicketKeys zk(KeyPair keys) throws Exception {
        CuratorFramework client = ClusterConnection.open(ClusterConfig.of(server.getConnectString()));
        open.add(client);
        return new ZkTicketKeys(client, keys);
    }

    private TicketKeys master() throws Exception {
        TicketKeys keys = TicketKeys.shared(zk(MASTER_KEY), clock);
        open.add(keys);
        return keys;
    }

    private static byte[] ticket(TicketKeys.Key key) {
        return Resumptions.sealContents(
                key.key(),
                key.id(),
                new Resumption.Contents(
                        "web1", "SHA256:fp", 1, 0, Resumptions.MAX_LIFETIME_MS, new byte[Resumptions.SECRET_LENGTH]));
    }

    private static boolean opens(TicketKeys keys, byte[] ticket) {
        return keys.find(Resumptions.keyId(ticket))
                .map(key -> {
                    try {
                        return Resumptions.openContents(key, ticket).id().equals("web1");
                    } catch (Exception e) {
                        return false;
                    }
                })
                .orElse(false);
    }

    @Test
    void aTicketSealedByOneMasterOpensOnAnotherAndOnARestartedOne() throws Exception {
        TicketKeys a = master();
        TicketKeys b = master();
        byte[] ticket = ticket(a.current());
        assertThat(opens(b, ticket)).isTrue();
        a.close();
        assertThat(opens(master(), ticket)).isTrue();
    }

    @Test
    void oneMasterRotatesForAllAndTheReplacedKeyIsRetiredAPeriodLater() throws Exception {
        TicketKeys a = master();
        TicketKeys b = master();
        TicketKeys.Key first = a.current();
        byte[] old = ticket(first);
        clock.advance(Duration.ofMillis(TicketKeys.PERIOD_MS));
        TicketKeys.Key second = a.current();
        assertThat(second.id()).isNotEqualTo(first.id());
        byte[] fresh = ticket(second);
        await().until(() -> opens(b, fresh));
        // b's own key was due too: it takes a's rotation instead of making another.
        assertThat(b.current().id()).isEqualTo(second.id());
        assertThat(opens(b, old)).isTrue();
        clock.advance(Duration.ofMillis(TicketKeys.PERIOD_MS));
        assertThat(opens(a, old)).isFalse();
        assertThat(opens(b, old)).isFalse();
        assertThat(opens(master(), old)).isFalse();
    }

    @Test
    void aRotationZooKeeperCannotTakeLeavesTheDueKeySealingAndIsTriedAgain() throws Exception {
        CuratorFramework client = ClusterConnection.open(ClusterConfig.of(server.getConnectString()));
        TicketKeys a = TicketKeys.shared(new ZkTicketKeys(client, MASTER_KEY), clock);
        open.add(a);
        TicketKeys.Key first = a.current();
        client.close();
        clock.advance(Duration.ofMillis(TicketKeys.PERIOD_MS));
        try (LogCapture log = LogCapture.of(TicketKeys.class)) {
            assertThat(a.current().id()).isEqualTo(first.id());
            assertThat(a.current().id()).isEqualTo(first.id());
            clock.advance(Duration.ofMinutes(1));
            assertThat(a.current().id()).isEqualTo(first.id());
            assertThat(log.at(Level.WARN)).hasSize(2).allMatch(line -> line.contains("tried again in 60 s"));
        }
        assertThat(opens(a, ticket(first))).isTrue();
    }

    @Test
    void whileAWorkerWaitsOnZooKeeperToRotateTheOthersOpenAndSealWithTheDueKey() throws Exception {
        TicketKeys a = master();
        TicketKeys.Key due = a.current();
        byte[] ticket = ticket(due);
        clock.advance(Duration.ofMillis(TicketKeys.PERIOD_MS));
        server.stop(); // out of reach: Curator retries the rotation's write for up to a minute
        Thread rotating = new Thread(() -> {
            try {
                a.current();
            } catch (IOException e) {
                // tried again in a minute
            }
        });
        rotating.setDaemon(true);
        rotating.start();
        await().until(() -> inZooKeeper(rotating));

        // The other auth workers: a resumption's ticket opens, and a new ticket is sealed, without waiting.
        CompletableFuture<Boolean> opened = CompletableFuture.supplyAsync(() -> opens(a, ticket));
        CompletableFuture<TicketKeys.Key> sealing = CompletableFuture.supplyAsync(() -> {
            try {
                return a.current();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        await().until(() -> opened.isDone() && sealing.isDone());
        assertThat(inZooKeeper(rotating))
                .as("answered while the rotation still waits on ZooKeeper")
                .isTrue();
        assertThat(opened.get()).isTrue();
        assertThat(sealing.get().id()).isEqualTo(due.id());
    }

    private static boolean inZooKeeper(Thread thread) {
        return Arrays.stream(thread.getStackTrace())
                .anyMatch(frame -> frame.getClassName().equals(ZkTicketKeys.class.getName()));
    }

    @Test
    void keysNotSignedWithTheMasterKeyAreNotUsed() throws Exception {
        TicketKeys a = master();
        byte[] ticket = ticket(a.current());
        // Someone who may write the znode but holds no master private key: a key wrapped for the master key, so
        // that it would unwrap, signed with a key of their own.
        ZkTicketKeys forger =
                zk(new KeyPair(MASTER_KEY.getPublic(), TestKeys.pair(201).getPrivate()));
        TicketKeys.Key planted = TicketKeys.inMemory(clock).current();
        try (LogCapture log = LogCapture.of(TicketKeys.class)) {
            forger.replace(null, List.of(new ZkTicketKeys.Stored(planted.id(), planted.key(), clock.millis() + 1)));
            await().until(() -> log.at(Level.ERROR).stream()
                    .anyMatch(line -> line.startsWith(
                            "Cluster ticket keys not used: /ticket_keys is not signed by this master key")));
            assertThat(opens(a, ticket(planted))).isFalse();
            assertThat(opens(a, ticket)).isTrue();

            TicketKeys restarted = master();
            assertThat(opens(restarted, ticket(planted))).isFalse();
            assertThat(restarted.current().id()).isNotEqualTo(planted.id());
            // Its fresh keys replaced the planted ones for every master.
            byte[] fresh = ticket(restarted.current());
            await().until(() -> opens(a, fresh));
        }
    }
}
