package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.Secret;
import io.brine.daemon.files.AtomicFiles;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.grant.Grants;
import io.brine.protocol.grant.ProvisioningGrant;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.targeting.Targets;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.store.policy.TokenHashes;
import io.brine.transport.zmtp.ZmtpServerTransport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** Each acceptance policy end to end: a real master and real minions over loopback. */
class AcceptancePolicyIT {

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    @BeforeEach
    void setUp() {
        fleet = new Fleet(dir);
    }

    private void startMaster(UnaryOperator<MasterConfig.Acceptance.Builder> acceptance) throws Exception {
        startMaster(acceptance, b -> b);
    }

    private void startMaster(
            UnaryOperator<MasterConfig.Acceptance.Builder> acceptance, UnaryOperator<MasterConfig.Builder> more)
            throws Exception {
        fleet.startMaster(b -> more.apply(
                b.acceptance(acceptance.apply(MasterConfig.Acceptance.builder()).build())));
    }

    private final ListAppender<ILoggingEvent> policyLog = new ListAppender<>();

    @AfterEach
    void detachLog() {
        ((Logger) LoggerFactory.getLogger("io.brine.store.policy")).detachAppender(policyLog);
    }

    /**
     * Starts the master as brine-master does with {@code master.yaml} naming {@code option}: the file checks of
     * its start (loadChecked) pass whatever the file's owner and mode, which are the policies' ownership rule.
     */
    private void startMasterFromYaml(String yaml, UnaryOperator<MasterConfig.Acceptance.Builder> acceptance)
            throws Exception {
        Path configDir = Files.createDirectories(dir.resolve("etc"));
        Files.writeString(configDir.resolve(MasterConfig.FILE_NAME), yaml);
        MasterConfig checked = MasterConfig.loadChecked(configDir);
        assertThat(checked.acceptance()).isNotNull();
        policyLog.start();
        ((Logger) LoggerFactory.getLogger("io.brine.store.policy")).addAppender(policyLog);
        startMaster(acceptance);
    }

    private List<String> loud(String containing) {
        return policyLog.list.stream()
                .filter(event -> event.getLevel().isGreaterOrEqual(Level.WARN))
                .map(ILoggingEvent::getFormattedMessage)
                .filter(line -> line.contains(containing))
                .toList();
    }

    private static void awaitState(MinionDaemon minion, MinionState state) {
        await().until(() -> minion.minion().state() == state);
    }

    private Path pki(String state, String id) {
        return fleet.masterConfig.pkiDir().resolve(state).resolve(id);
    }

    @Test
    void autosignFileAcceptsMatchingIdsOnly() throws Exception {
        Path file = fleet.masterFile("autosign.conf", "# web fleet\n*.web.example.com\n", "rw-------");
        startMaster(a -> a.autosignFile(file));
        MinionDaemon web = fleet.startMinion("a.web.example.com");
        MinionDaemon other = fleet.startMinion("web.example.com");
        awaitState(web, MinionState.ACCEPTED);
        awaitState(other, MinionState.PENDING);
        assertThat(pki("minions", "a.web.example.com")).exists();
        assertThat(Files.readString(fleet.masterConfig.auditLog()))
                .contains("autosign_file " + file + ":2 *.web.example.com");
    }

    @Test
    void autorejectWinsAndFilesTheKeyAsRejected() throws Exception {
        Path autosign = fleet.masterFile("autosign.conf", "*.example.com\n", "rw-------");
        Path autoreject = fleet.masterFile("autoreject.conf", "bad.example.com\n", "rw-------");
        startMaster(a -> a.autosignFile(autosign).autorejectFile(autoreject));
        MinionDaemon bad = fleet.startMinion("bad.example.com");
        await().until(() -> Files.exists(pki("minions_rejected", "bad.example.com")));
        // The key is filed before the reply reaches the minion: wait for the minion to hear it.
        await().until(() -> bad.minion().state() == MinionState.REJECTED);
        assertThat(pki("minions", "bad.example.com")).doesNotExist();
    }

    @Test
    void aPolicyExecutableAcceptsInTheBackground() throws Exception {
        Path exe = fleet.masterFile("policy", "#!/bin/sh\ncat > /dev/null\n[ \"$1\" = web1 ]\n", "rwx------");
        startMaster(a -> a.autosignPolicy(exe).autosignPolicyTimeout(Duration.ofSeconds(5)));
        MinionDaemon web1 = fleet.startMinion("web1");
        MinionDaemon db1 = fleet.startMinion("db1");
        awaitState(web1, MinionState.ACCEPTED);
        awaitState(db1, MinionState.PENDING);
        assertThat(Files.readString(fleet.masterConfig.auditLog())).contains("autosign_policy " + exe);
    }

    @Test
    void claimsThatMatchAreAccepted() throws Exception {
        startMaster(a -> a.autosignClaims(Map.of("role", List.of("web", "db"), "datacenter", List.of("eu-*"))));
        MinionDaemon web1 = fleet.startMinion(
                "web1", b -> b.grains(Map.of("role", List.of("web"), "datacenter", List.of("eu-west"))));
        MinionDaemon mail1 = fleet.startMinion(
                "mail1", b -> b.grains(Map.of("role", List.of("mail"), "datacenter", List.of("eu-west"))));
        awaitState(web1, MinionState.ACCEPTED);
        awaitState(mail1, MinionState.PENDING);
    }

    @Test
    void aSignedGrantAcceptsOnceAndItsClassificationIsTargetable() throws Exception {
        startMaster(a -> a);
        Path provisioners = fleet.masterConfig.pkiDir().resolve("provisioners");
        Files.createDirectories(provisioners);
        AtomicFiles.write(
                provisioners.resolve("cloud.pub"), Pem.bytes(TestKeys.publicPem(200)), AtomicFiles.PUBLIC_READ);
        Instant now = Instant.ofEpochSecond(Instant.now().getEpochSecond());
        byte[] grant = Grants.sign(
                new ProvisioningGrant(
                        "web1",
                        Fingerprints.of(TestKeys.pair(101).getPublic()),
                        now,
                        now.plusSeconds(600),
                        Map.of("role", "web"),
                        Grants.newNonce()),
                TestKeys.pair(200));
        Path grantFile = dir.resolve("web1.grant");
        Files.write(grantFile, grant);

        MinionDaemon web1 = fleet.startMinion("web1", 101, b -> b.autosignGrant(grantFile));
        MinionDaemon db1 = fleet.startMinion("db1", 102, b -> b.autosignGrant(grantFile)); // not its grant
        awaitState(web1, MinionState.ACCEPTED);
        awaitState(db1, MinionState.PENDING);

        var jobs = fleet.master.master().jobs();
        await().until(() ->
                jobs.resolve(Targets.parse("compound", "G@class:role:web")).equals(List.of("web1")));
        ZmtpServerTransport transport =
                (ZmtpServerTransport) fleet.master.master().transport();
        await().until(() -> transport.subscribedMinions().contains("web1"));
        List<SessionMessage.ReturnEvent> returns = new CopyOnWriteArrayList<>();
        jobs.publish(
                "it",
                "compound",
                "G@class:role:web",
                List.of("web1"),
                "test.ping",
                List.of(),
                Map.of(),
                10,
                returns::add);
        await().until(() -> !returns.isEmpty());
        assertThat(returns.get(0).returnValue()).isEqualTo(true);

        // Single use: once the key is deleted, the same grant no longer lets it in.
        fleet.minions.remove(web1);
        web1.close();
        fleet.master.keyStore().delete("web1", "it");
        MinionDaemon again = fleet.startMinion("web1", b -> b.autosignGrant(grantFile));
        awaitState(again, MinionState.PENDING);
    }

    @Test
    void anInventoryAcceptsAnExpectedMachineFromItsAddress() throws Exception {
        Path inventory = fleet.masterFile(
                "inventory.yaml",
                "- id: web1\n  created_at: " + Instant.now() + "\n  addresses: [127.0.0.1, 10.9.8.7]\n",
                "rw-------");
        startMaster(a -> a.inventoryFile(inventory));
        Map<String, List<String>> addresses = Map.of("ipv4", List.of("127.0.0.1", "10.9.8.7"), "ipv6", List.of());
        MinionDaemon web1 = fleet.startMinion("web1", b -> b.grains(addresses));
        MinionDaemon web2 = fleet.startMinion("web2", b -> b.grains(addresses));
        awaitState(web1, MinionState.ACCEPTED);
        awaitState(web2, MinionState.PENDING);
    }

    @Test
    void aSingleUseTokenAcceptsOneMinion() throws Exception {
        String token = TokenHashes.generate();
        startMaster(a -> a.autosignTokens(List.of(TokenHashes.entry("web*", token, true))));
        MinionDaemon web1 = fleet.startMinion("web1", b -> b.autosignToken(new Secret(token)));
        awaitState(web1, MinionState.ACCEPTED);
        MinionDaemon web2 = fleet.startMinion("web2", b -> b.autosignToken(new Secret(token)));
        awaitState(web2, MinionState.PENDING);
        assertThat(Files.readString(fleet.masterConfig.cachedir().resolve("spent_tokens")))
                .hasLineCount(1);
    }

    @Test
    void aFloodOfPendingKeysNeverStopsAPolicyFromAccepting() throws Exception {
        Path file = fleet.masterFile("autosign.conf", "web1\n", "rw-------");
        startMaster(a -> a.autosignFile(file), b -> b.maxPending(1));
        MinionDaemon bogus1 = fleet.startMinion("bogus1");
        awaitState(bogus1, MinionState.PENDING);
        MinionDaemon web1 = fleet.startMinion("web1");
        awaitState(web1, MinionState.ACCEPTED);
        assertThat(pki("minions_pre", "web1")).doesNotExist();
    }

    @Test
    void anUntrustedAutosignFileAtStartDisablesThatPolicyAndTheMasterServesUntilItIsFixed() throws Exception {
        Path file = fleet.masterFile("autosign.conf", "web1\n", "rw-rw----");
        startMasterFromYaml("autosign_file: " + file + "\n", a -> a.autosignFile(file));
        // --check-config names it (exit 2); the master serves, that policy accepting nothing.
        assertThat(AcceptancePolicies.untrustedInputs(fleet.masterConfig, fleet.masterConfig.pkiDir()))
                .singleElement()
                .asString()
                .startsWith("autosign_file " + file + " is not trusted");
        MinionDaemon web1 = fleet.startMinion("web1");
        awaitState(web1, MinionState.PENDING);
        assertThat(pki("minions_pre", "web1")).exists();

        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        awaitState(web1, MinionState.ACCEPTED);
        assertThat(loud(file.toString())).singleElement().asString().contains("is not trusted", "its group");
    }

    @Test
    void anUntrustedAutorejectFileHoldsEveryNewKeyPendingEvenOneAnotherPolicyAccepts() throws Exception {
        Path autosign = fleet.masterFile("autosign.conf", "*\n", "rw-------");
        Path autoreject = fleet.masterFile("autoreject.conf", "evil1\n", "rw-rw-rw-");
        startMasterFromYaml(
                "autosign_file: " + autosign + "\nautoreject_file: " + autoreject + "\n",
                a -> a.autosignFile(autosign).autorejectFile(autoreject));
        MinionDaemon web1 = fleet.startMinion("web1");
        MinionDaemon evil = fleet.startMinion("evil1");
        awaitState(web1, MinionState.PENDING);
        awaitState(evil, MinionState.PENDING);

        Files.setPosixFilePermissions(autoreject, PosixFilePermissions.fromString("rw-------"));
        awaitState(web1, MinionState.ACCEPTED);
        await().until(() -> Files.exists(pki("minions_rejected", "evil1")));
        assertThat(pki("minions", "evil1")).doesNotExist();
        assertThat(loud(autoreject.toString())).singleElement().asString().contains("is not trusted", "its group");
    }
}
