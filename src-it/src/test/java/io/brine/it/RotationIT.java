package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.keytool.BrineKey;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.codec.Publications;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionUnknown;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Publish key rotation: after a removal, daily by the clock, and when an admin asks. */
class RotationIT {

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    /** A master that accepts every key, and its minions m1 and m2, accepted. */
    private List<MinionDaemon> autoAcceptedPair() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        List<MinionDaemon> minions = List.of(fleet.startMinion("m1"), fleet.startMinion("m2"));
        fleet.awaitAll(MinionState.ACCEPTED);
        return minions;
    }

    private long generation() {
        return fleet.master.master().keyring().current().number();
    }

    private static Long minionGeneration(MinionDaemon minion) {
        return minion.minion().status().generation();
    }

    @Test
    void aDeletedMinionCannotOpenWhatIsPublishedAfterItsDeletionWhileTheOthersRunIt() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b);
        KeyStore keys = fleet.master.keyStore();
        MinionDaemon m1 = fleet.startMinion("m1");
        MinionDaemon m2 = fleet.startMinion("m2");
        Fleet.awaitState(m1, MinionState.PENDING);
        Fleet.awaitState(m2, MinionState.PENDING);
        keys.accept("m1", null, "it");
        keys.accept("m2", null, "it");
        fleet.awaitAll(MinionState.ACCEPTED);
        fleet.awaitSubscribed("m1", "m2");

        // A minion that keeps every key it is ever given and listens on the others' topics. The master honours
        // m/ID/ only from the address of ID's session; on loopback that is everyone's (the NAT case of
        // transport/ZMTP.md), so it gets a copy of theirs.
        try (RawMinion evil = new RawMinion(fleet.retPort(), "evil", TestKeys.pair(100))) {
            assertThat(evil.authenticate(WAIT).status()).isEqualTo(AuthStatus.PENDING);
            assertThat(keys.accept("evil", null, "it").status()).isEqualTo(AdminResult.Status.DONE);
            assertThat(evil.authenticate(WAIT).status()).isEqualTo(AuthStatus.ACCEPTED);
            evil.snoop(fleet.master.master().addresses().publish().getPort(), "m/m1/", "m/m2/");
            fleet.awaitSubscribed("evil");
            long before = generation();
            assertThat(evil.publishKeys).containsOnlyKeys(before);

            // Before the removal it can read what the others get: the snooping works.
            JobPublisher.Published early = fleet.publish("test.ping", List.of("m1", "m2"));
            fleet.awaitReturns(early.jid(), List.of("m1", "m2"));
            evil.listenFor(2, WAIT);
            assertThat(evil.captured)
                    .hasSize(2)
                    .allSatisfy(p -> assertThat(open(p, evil)).isTrue());
            evil.captured.clear();

            assertThat(keys.delete("evil", "it").status()).isEqualTo(AdminResult.Status.DONE);
            await().until(() -> generation() > before);
            assertThat(fleet.master.master().sessions().byMinion("evil")).isEmpty();
            long after = generation();
            await().until(() -> minionGeneration(m1) == after && minionGeneration(m2) == after);

            JobPublisher.Published job = fleet.publish("test.ping", List.of("m1", "m2"));
            assertThat(job.unreachable()).isEmpty();
            assertThat(fleet.awaitReturns(job.jid(), List.of("m1", "m2"))).allSatisfy(r -> {
                assertThat(r.success()).isTrue();
                assertThat(r.returnValue()).isEqualTo(true);
            });

            // It saw both copies of the publication, and holds no key that opens them.
            evil.listenFor(2, WAIT);
            assertThat(evil.captured).hasSize(2).allSatisfy(p -> {
                assertThat(p.jid()).isEqualTo(job.jid());
                assertThat(p.generation()).isEqualTo(after);
                assertThat(open(p, evil)).isFalse();
            });
            assertThat(evil.publishKeys).containsOnlyKeys(before);

            // Asking for the key gets it told to authenticate again, and authenticating gets it nothing.
            evil.sendSession(new SessionMessage.KeyRequest(after));
            assertThat(evil.next(SessionUnknown.class, WAIT)).isPresent();
            AuthReply again = evil.authenticate(WAIT);
            assertThat(again.status()).isEqualTo(AuthStatus.PENDING);
            assertThat(again.session()).isNull();
            assertThat(evil.publishKeys).containsOnlyKeys(before);
        }
    }

    @Test
    void theDailyRotationFollowsTheMastersClockAndReachesMinionsWithoutANewAuth() throws Exception {
        // The minions' clock moves with the master's: a minion refuses publications signed further in its future
        // than the clock skew (PROTOCOL.md 8.3 step 5).
        TestClock masterClock = new TestClock();
        fleet = new Fleet(dir, masterClock);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        MinionDaemon m1 = fleet.startMinion("m1");
        MinionDaemon m2 = fleet.startMinion("m2");
        fleet.awaitAll(MinionState.ACCEPTED);
        fleet.awaitSubscribed("m1", "m2");
        long before = generation();
        Map<String, Object> sessionsBefore = fleet.sessionIds();

        masterClock.advance(Duration.ofHours(23));
        JobPublisher.Published quiet = fleet.publish("test.ping", List.of("m1"));
        fleet.awaitReturns(quiet.jid(), List.of("m1"));
        assertThat(generation())
                .as("no rotation before publish_session has elapsed")
                .isEqualTo(before);

        masterClock.advance(Duration.ofHours(1));
        await().until(() -> generation() == before + 1);
        await().until(() -> minionGeneration(m1) == before + 1 && minionGeneration(m2) == before + 1);
        assertThat(fleet.sessionIds())
                .as("delivered in the sessions, not by authenticating again")
                .isEqualTo(sessionsBefore);
        JobPublisher.Published job = fleet.publish("test.ping", List.of("m1", "m2"));
        fleet.awaitReturns(job.jid(), List.of("m1", "m2"));
    }

    @Test
    void anAdminsRotateRequestFromBrineKeyIsCarriedOutAtTheMastersNextTick() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        MinionDaemon m1 = fleet.startMinion("m1");
        Fleet.awaitState(m1, MinionState.ACCEPTED);
        fleet.awaitSubscribed("m1");
        long before = generation();

        int exit = BrineKey.commandLine(new BrineKey())
                .execute(
                        "--pki-dir",
                        fleet.masterConfig.pkiDir().toString(),
                        "--cachedir",
                        dir.resolve("admin-cache").toString(),
                        "--rotate");
        assertThat(exit).isZero();

        // The master looks for requests every second.
        await().until(() -> generation() == before + 1);
        await().until(() -> minionGeneration(m1) == before + 1);
        assertThat(Files.readString(fleet.masterConfig.cachedir().resolve("audit.log")))
                .contains("\"publish-key-rotated\"", "asked by an admin");
        assertThat(Files.readString(dir.resolve("admin-cache/audit.log"))).contains("\"rotation-requested\"");
        // A restarted master does not take an old request for a new one.
        fleet.restartMaster();
        long restarted = generation();
        await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(3)).until(() -> generation() == restarted);
    }

    @Test
    void aKeyDeletedByAnotherProcessClosesTheSessionAndRotates() throws Exception {
        List<MinionDaemon> minions = autoAcceptedPair();
        MinionDaemon m1 = minions.get(0);
        MinionDaemon m2 = minions.get(1);
        long before = generation();

        // What brine-key does: its own store over the same pki dir, no polling, no master key.
        try (KeyStore other = FileKeyStore.open(KeyStoreOptions.builder(fleet.masterConfig.pkiDir())
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build())) {
            long started = System.nanoTime();
            assertThat(other.delete("m2", KeyState.ACCEPTED, null, "brine-key:it")
                            .status())
                    .isEqualTo(AdminResult.Status.DONE);
            await().pollInterval(Duration.ofMillis(20))
                    .until(() -> fleet.master.master().sessions().byMinion("m2").isEmpty() && generation() > before);
            System.out.printf(
                    "RotationIT: a delete in another store closed the session and rotated in %d ms%n",
                    (System.nanoTime() - started) / 1_000_000);
        }
        await().until(() -> minionGeneration(m1) == before + 1);
        assertThat(minionGeneration(m2)).isEqualTo(before);
    }

    @Test
    void rejectingAnAcceptedMinionRotatesToo() throws Exception {
        List<MinionDaemon> minions = autoAcceptedPair();
        MinionDaemon m1 = minions.get(0);
        MinionDaemon m2 = minions.get(1);
        long before = generation();

        assertThat(fleet.master.keyStore().reject("m2", null, "it").status()).isEqualTo(AdminResult.Status.DONE);

        await().until(() -> generation() == before + 1);
        await().until(() -> minionGeneration(m1) == before + 1);
        assertThat(minionGeneration(m2)).isEqualTo(before);
        assertThat(fleet.master.master().sessions().byMinion("m2")).isEmpty();
    }

    /** Whether any key {@code minion} holds opens {@code publish}. */
    private static boolean open(Publish publish, RawMinion minion) {
        for (SessionKey key : minion.publishKeys.values()) {
            try {
                Publications.open(key, publish);
                return true;
            } catch (CryptoException e) {
                // this key does not open it
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
        assertThatThrownBy(
                        () -> Publications.open(minion.publishKeys.lastEntry().getValue(), publish))
                .isInstanceOf(CryptoException.class);
        return false;
    }
}
