package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.daemon.files.AtomicFiles;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.AdminResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/** One master and five accepted minions on loopback, shared by the tests of this class. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@SuppressWarnings("unchecked")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PublishIT {

    private static final List<String> ALL = List.of("m1", "m2", "m3", "m4", "m5");

    Fleet fleet;

    @BeforeAll
    void startFleet(@TempDir Path dir) throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.acceptance(
                        MasterConfig.Acceptance.builder().autoAccept(true).build())
                .publisherAcl(Map.of("ci", new MasterConfig.PublisherAcl(List.of("m1", "m2"), List.of("test.*")))));
        AtomicFiles.ensureDirectory(fleet.masterConfig.pkiDir().resolve("publishers"));
        AtomicFiles.write(
                fleet.masterConfig.pkiDir().resolve("publishers/ci"),
                Pem.bytes(TestKeys.publicPem(200)),
                AtomicFiles.PUBLIC_READ);
        for (String id : ALL) {
            String role = id.equals("m1") || id.equals("m2") ? "web" : "db";
            fleet.startMinion(id, b -> b.grains(Map.of("role", List.of(role))));
        }
        await().until(() -> fleet.minions.stream().allMatch(m -> m.minion().state() == MinionState.ACCEPTED));
        // Grains reach the master right after auth.
        await().until(() -> ALL.stream()
                .allMatch(id -> fleet.master.master().grains().get(id).containsKey("role")));
    }

    @AfterAll
    void stopFleet() {
        fleet.close();
    }

    private BrineClient root() throws ClientException {
        return fleet.rootClient();
    }

    private Map<String, SessionMessage.ReturnEvent> run(BrineClient client, BrineClient.Job job)
            throws ClientException {
        BrineClient.Published published = client.publish(job);
        return client.awaitReturns(published.jid(), published.minions(), WAIT, r -> {});
    }

    @Test
    void pingReachesEveryAcceptedMinion() throws Exception {
        try (BrineClient client = root()) {
            Map<String, SessionMessage.ReturnEvent> returns = run(client, BrineClient.Job.of("glob", "*", "test.ping"));
            assertThat(returns.keySet()).containsExactlyInAnyOrderElementsOf(ALL);
            assertThat(returns.values()).allMatch(r -> Boolean.TRUE.equals(r.returnValue()) && r.success());
        }
    }

    @Test
    void eachTargetTypeSelectsWhatItSays() throws Exception {
        try (BrineClient client = root()) {
            assertThat(client.publish(BrineClient.Job.of("list", "m1,m3", "test.ping"))
                            .minions())
                    .containsExactly("m1", "m3");
            assertThat(client.publish(BrineClient.Job.of("glob", "m[45]", "test.ping"))
                            .minions())
                    .containsExactly("m4", "m5");
            assertThat(client.publish(BrineClient.Job.of("pcre", "m[1-2]", "test.ping"))
                            .minions())
                    .containsExactly("m1", "m2");
            assertThat(client.publish(BrineClient.Job.of("grain", "role:db", "test.ping"))
                            .minions())
                    .containsExactly("m3", "m4", "m5");
            assertThat(client.publish(BrineClient.Job.of("compound", "G@role:web and not m1", "test.ping"))
                            .minions())
                    .containsExactly("m2");
        }
    }

    @Test
    void aListTargetRunsOnlyOnThoseMinions() throws Exception {
        try (BrineClient client = root()) {
            BrineClient.Published published = client.publish(BrineClient.Job.of("list", "m1,m2", "test.echo", "hello"));
            Map<String, SessionMessage.ReturnEvent> returns =
                    client.awaitReturns(published.jid(), published.minions(), WAIT, r -> {});
            assertThat(returns.keySet()).containsExactlyInAnyOrder("m1", "m2");
            assertThat(returns.values()).allMatch(r -> "hello".equals(r.returnValue()));
            // The others never got the job: nothing from them reaches the cache even after a while.
            Map<String, Object> job = client.job(published.jid());
            assertThat(((Map<String, ?>) job.get("returns")).keySet()).containsExactlyInAnyOrder("m1", "m2");
        }
    }

    @Test
    void cmdRunReturnsTheCommandsOutput() throws Exception {
        try (BrineClient client = root()) {
            Map<String, SessionMessage.ReturnEvent> returns =
                    run(client, BrineClient.Job.of("list", "m3", "cmd.run", "echo brine-was-here"));
            assertThat(returns.get("m3").returnValue()).isEqualTo("brine-was-here");
            assertThat(returns.get("m3").retcode()).isZero();
        }
    }

    @Test
    void anAsyncJobCanBeLookedUpLater() throws Exception {
        String jid;
        try (BrineClient client = root()) {
            jid = client.publish(BrineClient.Job.of("glob", "m*", "test.echo", "later"))
                    .jid();
        }
        try (BrineClient client = root()) {
            await().untilAsserted(() ->
                    assertThat((Map<?, ?>) client.job(jid).get("returns")).hasSize(ALL.size()));
            Map<String, Object> job = client.job(jid);
            assertThat(job.get("fun")).isEqualTo("test.echo");
            assertThat((List<?>) job.get("missing")).isEmpty();
            assertThat(client.jobs(0)).anyMatch(j -> jid.equals(j.get("jid")));
        }
    }

    @Test
    void publisherAclLimitsFunctionsAndTargets() throws Exception {
        try (BrineClient ci = BrineClient.connect(
                TransportKind.ZEROMQ,
                "127.0.0.1",
                fleet.retPort(),
                "ci",
                TestKeys.pair(200),
                (RSAPublicKey) fleet.master.keyStore().masterKeyPair().getPublic(),
                WAIT)) {
            assertThat(run(ci, BrineClient.Job.of("list", "m1,m2", "test.ping")).keySet())
                    .containsExactlyInAnyOrder("m1", "m2");
            assertThatThrownBy(() -> ci.publish(BrineClient.Job.of("list", "m1", "cmd.run", "id")))
                    .hasMessageContaining("may not run cmd.run");
            assertThatThrownBy(() -> ci.publish(BrineClient.Job.of("glob", "*", "test.ping")))
                    .hasMessageContaining("may not target");
        }
    }

    @Test
    void anUnregisteredPublisherIsRefused() {
        assertThatThrownBy(() -> BrineClient.connect(
                        TransportKind.ZEROMQ,
                        "127.0.0.1",
                        fleet.retPort(),
                        "intruder",
                        TestKeys.pair(201),
                        (RSAPublicKey) fleet.master.keyStore().masterKeyPair().getPublic(),
                        WAIT))
                .hasMessageContaining("not a registered publisher with this key");
        // The root name with another key is not root, and hears the same: names cannot be enumerated.
        assertThatThrownBy(() -> BrineClient.connect(
                        TransportKind.ZEROMQ,
                        "127.0.0.1",
                        fleet.retPort(),
                        "root",
                        TestKeys.pair(201),
                        (RSAPublicKey) fleet.master.keyStore().masterKeyPair().getPublic(),
                        WAIT))
                .hasMessageContaining("not a registered publisher with this key");
    }

    @Test
    void aReturnFromAMinionTheJobDidNotTargetIsDropped() throws Exception {
        try (BrineClient client = root()) {
            BrineClient.Published published = client.publish(BrineClient.Job.of("list", "m1", "test.ping"));
            client.awaitReturns(published.jid(), published.minions(), WAIT, r -> {});
            MinionDaemon m2 = fleet.minions.stream()
                    .filter(m -> m.minion().id().equals("m2"))
                    .findFirst()
                    .orElseThrow();
            m2.minion().submitReturn(new SessionMessage.Return(published.jid(), "test.ping", "forged", 0, true, 1));
            // The master acknowledges it (so m2 stops resending) but never stores it.
            await().until(() ->
                    fleet.masterConfig.cachedir().resolve("audit.log").toFile().exists()
                            && Files.readString(fleet.masterConfig.cachedir().resolve("audit.log"))
                                    .contains("return for job " + published.jid()));
            assertThat(((Map<String, ?>) client.job(published.jid()).get("returns")).keySet())
                    .containsExactly("m1");
        }
    }

    @Test
    @Order(Integer.MAX_VALUE) // it removes a minion from the shared fleet
    void aDeletedMinionIsNoLongerTargeted() throws Exception {
        try (BrineClient client = root()) {
            AdminResult deleted = fleet.master.keyStore().delete("m5", "test-admin");
            assertThat(deleted.status()).isEqualTo(AdminResult.Status.DONE);
            BrineClient.Published published = client.publish(BrineClient.Job.of("glob", "*", "test.ping"));
            assertThat(published.minions()).doesNotContain("m5");
            assertThat(client.awaitReturns(published.jid(), published.minions(), WAIT, r -> {})
                            .keySet())
                    .doesNotContain("m5")
                    .hasSize(ALL.size() - 1);
        }
    }
}
