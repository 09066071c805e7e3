package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.MinionConfig;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.KeyState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What an admin and a minion see of the key exchange: pending, accepted, rejected, denied, a wrong master. */
class KeyExchangeIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    @BeforeEach
    void setUp() {
        fleet = new Fleet(dir);
    }

    private JsonNode status(MinionDaemon minion) throws IOException {
        Path file = fleet.configOf(minion).statusFile();
        return Files.exists(file)
                ? JSON.readTree(file.toFile())
                : JSON.createObjectNode().put("state", "none");
    }

    /** The status file once it shows {@code state} (it is written just after the state changes in memory). */
    private JsonNode awaitStatus(MinionDaemon minion, String state) {
        return await().until(() -> status(minion), s -> s.get("state").asText().equals(state));
    }

    private Path masterPki() {
        return fleet.masterConfig.pkiDir();
    }

    private Path minionPki(MinionDaemon minion) {
        return fleet.configOf(minion).pkiDir();
    }

    private static String fingerprint(int testKey) {
        return Fingerprints.of(TestKeys.pair(testKey).getPublic());
    }

    /** An impostor: {@code id} with the test key {@code testKey}, in a pki dir of its own. */
    private MinionDaemon startImpostor(String id, int testKey) throws Exception {
        Path pki = dir.resolve("impostor").resolve("pki");
        Fleet.seedKey(pki, testKey);
        return fleet.startMinion(
                id,
                b -> b.pkiDir(pki)
                        .cachedir(dir.resolve("impostor/cache"))
                        .statusFile(dir.resolve("impostor/cache/status.json")));
    }

    @Test
    void aNewMinionWaitsPendingUntilAnAdminAcceptsIt() throws Exception {
        fleet.startMaster(b -> b);
        MinionDaemon web1 = fleet.startMinion("web1");
        Fleet.awaitState(web1, MinionState.PENDING);
        assertThat(masterPki().resolve("minions_pre/web1")).exists();
        JsonNode pending = awaitStatus(web1, "pending");
        assertThat(pending.get("id").asText()).isEqualTo("web1");
        assertThat(pending.get("fingerprint").asText()).isEqualTo(fingerprint(0));
        assertThat(Instant.parse(pending.get("next_attempt").asText()))
                .isAfter(Instant.parse(pending.get("since").asText()));
        assertThat(minionPki(web1).resolve("minion_master.pub"))
                .as("pinned only once accepted")
                .doesNotExist();

        AdminResult result = fleet.master.keyStore().accept("web1", fingerprint(0), "test-admin");
        assertThat(result.status()).isEqualTo(AdminResult.Status.DONE);
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        assertThat(Files.readString(minionPki(web1).resolve("minion_master.pub")))
                .isEqualTo(Files.readString(masterPki().resolve("master.pub")));
        JsonNode accepted = awaitStatus(web1, "accepted");
        assertThat(accepted.get("next_attempt").isNull()).isTrue();
        assertThat(accepted.get("generation").asLong())
                .isEqualTo(fleet.master.master().keyring().current().number());
        assertThat(accepted.get("master_fingerprint").asText())
                .isEqualTo(
                        Fingerprints.of(fleet.master.keyStore().masterKeyPair().getPublic()));
        assertThat(Files.readString(fleet.masterConfig.cachedir().resolve("audit.log")))
                .contains("\"auth-pending\"", "\"auth-accepted\"", "\"key-accepted\"");
    }

    @Test
    void authDecisionsGoToTheConfiguredAuditLog() throws Exception {
        Path auditLog = dir.resolve("logs/brine-audit.log");
        fleet.startMaster(b -> b.auditLog(auditLog));
        MinionDaemon web1 = fleet.startMinion("web1");
        Fleet.awaitState(web1, MinionState.PENDING);

        assertThat(Files.readString(auditLog)).contains("\"auth-pending\"", "\"key-pending\"", "\"web1\"");
        assertThat(fleet.masterConfig.cachedir().resolve("audit.log")).doesNotExist();
    }

    @Test
    void aMinionRejectedByTheMasterItsMasterFingerNamesStopsAndSaysWhy() throws Exception {
        fleet.startMaster(b -> b);
        // Without master_finger nothing authenticates a rejection before the first acceptance (ForgedRepliesIT).
        String finger = Fingerprints.of(fleet.master.keyStore().masterKeyPair().getPublic());
        MinionDaemon web1 = fleet.startMinion("web1", b -> b.masterFinger(finger));
        Fleet.awaitState(web1, MinionState.PENDING);

        fleet.master.keyStore().reject("web1", null, "test-admin");

        assertThat(web1.terminated()).succeedsWithin(WAIT).isEqualTo(MinionState.REJECTED);
        JsonNode status = status(web1);
        assertThat(status.get("state").asText()).isEqualTo("rejected");
        assertThat(status.get("reason").asText()).isNotBlank();
        assertThat(status.get("next_attempt").isNull()).isTrue();
    }

    @Test
    void withRejectedRetryARejectedMinionKeepsAskingAndIsAcceptedOnceAnAdminChangesTheirMind() throws Exception {
        fleet.startMaster(b -> b);
        MinionDaemon web1 = fleet.startMinion(
                "web1",
                b -> b.auth(new MinionConfig.Auth(
                        Duration.ofSeconds(1), Duration.ofSeconds(2), true, Duration.ofSeconds(5))));
        Fleet.awaitState(web1, MinionState.PENDING);
        fleet.master.keyStore().reject("web1", null, "test-admin");
        assertThat(awaitStatus(web1, "rejected").get("next_attempt").isNull()).isFalse();
        assertThat(web1.terminated()).isNotDone();

        fleet.master.keyStore().accept("web1", KeyState.REJECTED, null, "test-admin");

        Fleet.awaitState(web1, MinionState.ACCEPTED);
    }

    @Test
    void anImpostorOfAnAcceptedMinionIsDeniedAndTheAcceptedKeyStaysUntouched() throws Exception {
        fleet.startMaster(b ->
                b.acceptance(MasterConfig.Acceptance.builder().autoAccept(true).build()));
        MinionDaemon web1 = fleet.startMinion("web1");
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        fleet.awaitSubscribed("web1");
        String accepted = Files.readString(masterPki().resolve("minions/web1"));
        Object session =
                fleet.master.master().sessions().byMinion("web1").orElseThrow().sessionId();

        // Even auto_accept does not let another key take an id that has one.
        MinionDaemon impostor = startImpostor("web1", 150);

        Fleet.awaitState(impostor, MinionState.DENIED);
        assertThat(Files.readString(masterPki().resolve("minions/web1"))).isEqualTo(accepted);
        assertThat(Fingerprints.of(
                        Pem.readPublicKey(Files.readString(masterPki().resolve("minions_denied/web1")))))
                .isEqualTo(fingerprint(150));
        awaitStatus(impostor, "denied");
        assertThat(impostor.minion().status().nextAttempt())
                .as("denied keeps asking")
                .isNotNull();
        // The real one keeps its session and keeps working.
        assertThat(fleet.master
                        .master()
                        .sessions()
                        .byMinion("web1")
                        .orElseThrow()
                        .sessionId())
                .isEqualTo(session);
        assertThat(web1.minion().state()).isEqualTo(MinionState.ACCEPTED);
        JobPublisher.Published job = fleet.publish("test.ping", List.of("web1"));
        fleet.awaitReturns(job.jid(), List.of("web1"));
    }

    @Test
    void anImpostorOfAPendingMinionIsDeniedAndThePendingKeyStaysUntouched() throws Exception {
        fleet.startMaster(b -> b);
        MinionDaemon web1 = fleet.startMinion("web1");
        Fleet.awaitState(web1, MinionState.PENDING);
        String pending = Files.readString(masterPki().resolve("minions_pre/web1"));

        MinionDaemon impostor = startImpostor("web1", 151);

        Fleet.awaitState(impostor, MinionState.DENIED);
        assertThat(Files.readString(masterPki().resolve("minions_pre/web1"))).isEqualTo(pending);
        assertThat(masterPki().resolve("minions_denied/web1")).exists();
        assertThat(web1.minion().state()).isEqualTo(MinionState.PENDING);
        // The admin accepts the key they expect; the impostor stays denied.
        fleet.master.keyStore().accept("web1", fingerprint(0), "test-admin");
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        assertThat(impostor.minion().state()).isEqualTo(MinionState.DENIED);
    }

    @Test
    void aDeletedMinionThatIsAcceptedAgainIsReachedAgain() throws Exception {
        fleet.minionHeartbeat = Duration.ofSeconds(1);
        fleet.startMaster(b -> b);
        MinionDaemon web1 = fleet.startMinion("web1");
        Fleet.awaitState(web1, MinionState.PENDING);
        fleet.master.keyStore().accept("web1", null, "test-admin");
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        fleet.awaitSubscribed("web1");

        fleet.master.keyStore().delete("web1", "test-admin");
        // Its next heartbeat is answered SessionUnknown; it offers its key again and waits.
        await().until(() -> Files.exists(masterPki().resolve("minions_pre/web1")));
        Fleet.awaitState(web1, MinionState.PENDING);
        fleet.master.keyStore().accept("web1", fingerprint(0), "test-admin");
        Fleet.awaitState(web1, MinionState.ACCEPTED);

        // Its subscription never went away; the master must route to it again.
        fleet.awaitSubscribed("web1");
        JobPublisher.Published job = fleet.publish("test.ping", List.of("web1"));
        assertThat(job.unreachable()).isEmpty();
        fleet.awaitReturns(job.jid(), List.of("web1"));
    }

    @Test
    void aMasterFingerThatDoesNotMatchIsShownAndTheMinionTrustsNothing() throws Exception {
        fleet.startMaster(b ->
                b.acceptance(MasterConfig.Acceptance.builder().autoAccept(true).build()));
        MinionDaemon web1 = fleet.startMinion("web1", b -> b.masterFinger(fingerprint(99)));

        // Such a reply is no more authentic than a forger's: shown, never obeyed, and the minion keeps asking.
        Fleet.awaitState(web1, MinionState.MASTER_KEY_MISMATCH);
        assertThat(web1.terminated()).isNotDone();
        assertThat(web1.minion().status().reason()).contains("master_finger");
        assertThat(minionPki(web1).resolve("minion_master.pub")).doesNotExist();
        awaitStatus(web1, "master_key_mismatch");
    }

    @Test
    void aMasterFingerThatMatchesIsTrusted() throws Exception {
        fleet.startMaster(b ->
                b.acceptance(MasterConfig.Acceptance.builder().autoAccept(true).build()));
        String finger = Fingerprints.of(fleet.master.keyStore().masterKeyPair().getPublic());

        MinionDaemon web1 = fleet.startMinion(
                "web1", b -> b.masterFinger(finger.toUpperCase().replace(":", "")));

        Fleet.awaitState(web1, MinionState.ACCEPTED);
        assertThat(minionPki(web1).resolve("minion_master.pub")).exists();
    }
}
