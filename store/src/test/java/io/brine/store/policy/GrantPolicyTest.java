package io.brine.store.policy;

import static io.brine.store.policy.Attempts.T0;
import static io.brine.store.policy.Attempts.attempt;
import static io.brine.store.policy.Attempts.fingerprint;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.brine.daemon.files.AtomicFiles;
import io.brine.daemon.testing.LogCapture;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.grant.Grants;
import io.brine.protocol.grant.ProvisioningGrant;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.PolicyVerdict;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Grants: trust, signature, binding to id and key, expiry, single use, classification. */
class GrantPolicyTest {

    static final int PROVISIONER = 200;
    static final int STRANGER = 201;

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(T0.plusSeconds(60));
    Path provisioners;
    Map<String, RSAPublicKey> accepted = new HashMap<>();
    Classifications classifications;
    GrantPolicy policy;

    @BeforeEach
    void setUp() throws Exception {
        provisioners = dir.resolve("pki/provisioners");
        Files.createDirectories(provisioners);
        Files.setPosixFilePermissions(provisioners, PosixFilePermissions.fromString("rwx------"));
        AtomicFiles.write(
                provisioners.resolve("cloud.pub"), Pem.bytes(TestKeys.publicPem(PROVISIONER)), AtomicFiles.PUBLIC_READ);
        policy = newPolicy();
    }

    private GrantPolicy newPolicy() {
        classifications =
                new Classifications(dir.resolve("cache/classes"), id -> Optional.ofNullable(accepted.get(id)));
        return new GrantPolicy(
                new ProvisionerKeys(provisioners, clock),
                new SpentStore(dir.resolve("cache/spent_grants"), clock),
                classifications,
                clock);
    }

    static byte[] grant(String id, int hostKey, Instant notBefore, Instant notAfter, int signer) {
        return Grants.sign(
                new ProvisioningGrant(
                        id,
                        fingerprint(hostKey),
                        notBefore,
                        notAfter,
                        Map.of("role", "web", "env", "prod"),
                        Grants.newNonce()),
                TestKeys.pair(signer));
    }

    static byte[] grant(String id, int hostKey) {
        return grant(id, hostKey, T0, T0.plusSeconds(3600), PROVISIONER);
    }

    private PolicyDecision present(String id, int hostKey, byte[] grant) {
        return policy.evaluate(attempt(id, hostKey, Map.of(), grant, null, "10.0.0.5"));
    }

    @Test
    void aValidGrantAcceptsNamesTheProvisionerAndStoresTheClassification() {
        PolicyDecision decision = present("web1", 1, grant("web1", 1));
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(decision.rule()).isEqualTo("grant by provisioner cloud");
        assertThat(decision.reason()).contains("valid until " + T0.plusSeconds(3600), "role=web");

        assertThat(classifications.of("web1")).isEmpty(); // not accepted yet
        accepted.put("web1", Attempts.key(1));
        assertThat(classifications.of("web1")).containsExactlyInAnyOrderEntriesOf(Map.of("role", "web", "env", "prod"));
        accepted.put("web1", Attempts.key(2)); // another key under the id: not what the grant vouched for
        assertThat(classifications.of("web1")).isEmpty();
    }

    @Test
    void aReplayIsRefusedEvenAfterARestart() {
        byte[] grant = grant("web1", 1);
        assertThat(present("web1", 1, grant).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        PolicyDecision again = present("web1", 1, grant);
        assertThat(again.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(again.reason()).isEqualTo("the grant was already used");

        policy = newPolicy();
        assertThat(present("web1", 1, grant).reason()).isEqualTo("the grant was already used");
        assertThat(classifications.of("web1")).isEmpty();
        accepted.put("web1", Attempts.key(1));
        policy = newPolicy();
        assertThat(classifications.of("web1")).containsEntry("role", "web"); // read back from disk
    }

    @Test
    void aRolledBackGrantCanBeUsedAgain() {
        byte[] grant = grant("web1", 1);
        PolicyDecision decision = present("web1", 1, grant);
        decision.rollback().run();
        assertThat(present("web1", 1, grant).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        policy = newPolicy();
        assertThat(present("web1", 1, grant).verdict()).isEqualTo(PolicyVerdict.NONE);
    }

    @Test
    void anExpiredGrantIsRefusedWithoutTolerance() {
        byte[] grant = grant("web1", 1, T0, T0.plusSeconds(120), PROVISIONER);
        clock.set(T0.plusSeconds(120));
        PolicyDecision decision = present("web1", 1, grant);
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(decision.reason()).isEqualTo("the grant expired at " + T0.plusSeconds(120));
        clock.set(T0.plusSeconds(119));
        assertThat(present("web1", 1, grant).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
    }

    @Test
    void anExpiredOrNotYetValidGrantIsOneWarnAMinuteNamingIdSourceAndReason() {
        byte[] expired = grant("web1", 1, T0, T0.plusSeconds(30), PROVISIONER);
        byte[] early = grant("web2", 2, T0.plusSeconds(3600), T0.plusSeconds(7200), PROVISIONER);
        try (LogCapture log = LogCapture.of(GrantPolicy.class)) {
            present("web1", 1, expired);
            present("web2", 2, early);
            present("web1", 1, expired);
            assertThat(log.at(Level.WARN))
                    .singleElement()
                    .asString()
                    .isEqualTo("Minion web1 (10.0.0.5): grant " + "refused: the grant expired at " + T0.plusSeconds(30)
                            + "; the key waits for an admin");
            clock.advance(Duration.ofMillis(GrantPolicy.WARN_INTERVAL_MS));
            present("web2", 2, early);
            assertThat(log.at(Level.WARN))
                    .hasSize(2)
                    .last()
                    .asString()
                    .startsWith("Minion web2 (10.0.0.5): grant refused: the grant is not valid before "
                            + T0.plusSeconds(3600))
                    .endsWith("(and 2 more since the last line)");
            policy.check(attempt("web1", 1, Map.of(), expired, null, "10.0.0.5")); // a dry run says nothing
            assertThat(log.at(Level.WARN)).hasSize(2);
        }
    }

    @Test
    void clockSkewIsToleratedOnNotBeforeOnly() {
        clock.set(T0);
        byte[] soon = grant("web1", 1, T0.plus(Duration.ofMinutes(4)), T0.plusSeconds(3600), PROVISIONER);
        assertThat(present("web1", 1, soon).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        byte[] later = grant("web2", 2, T0.plus(Duration.ofMinutes(6)), T0.plusSeconds(3600), PROVISIONER);
        assertThat(present("web2", 2, later).reason()).contains("not valid before");
    }

    @Test
    void aGrantFromAnUntrustedSignerIsRefused() {
        PolicyDecision decision = present("web1", 1, grant("web1", 1, T0, T0.plusSeconds(3600), STRANGER));
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(decision.reason()).contains("not a trusted provisioner");
    }

    @Test
    void aGrantForAnotherIdOrAnotherKeyIsRefused() {
        assertThat(present("web2", 1, grant("web1", 1)).reason()).isEqualTo("the grant is for id web1, not web2");
        assertThat(present("web1", 2, grant("web1", 1)).reason())
                .contains("the grant is for the key " + fingerprint(1));
    }

    @Test
    void aTamperedGrantIsRefused() throws Exception {
        byte[] bytes = grant("web1", 1);
        Grants.SignedGrant signed = Grants.parse(bytes);
        String payload = new String(signed.payload(), StandardCharsets.UTF_8).replace("\"web\"", "\"admin\"");
        String tampered = new String(bytes, StandardCharsets.UTF_8)
                .replace(
                        Base64.getEncoder().encodeToString(signed.payload()),
                        Base64.getEncoder().encodeToString(payload.getBytes(StandardCharsets.UTF_8)));
        PolicyDecision decision = present("web1", 1, tampered.getBytes(StandardCharsets.UTF_8));
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.NONE);
        assertThat(decision.reason()).contains("does not verify");
        assertThat(present("web1", 1, "garbage".getBytes(StandardCharsets.UTF_8))
                        .reason())
                .startsWith("the grant is malformed");
    }

    @Test
    void aProvisionerKeyOthersCanWriteIsNotTrusted() throws Exception {
        Files.setPosixFilePermissions(provisioners.resolve("cloud.pub"), PosixFilePermissions.fromString("rw-rw-rw-"));
        clock.advance(Duration.ofSeconds(1));
        assertThat(present("web1", 1, grant("web1", 1)).reason()).contains("not a trusted provisioner");
    }

    @Test
    void provisionerKeysAreReReadWhenTheyChange() throws Exception {
        byte[] grant = grant("web1", 1, T0, T0.plusSeconds(3600), STRANGER);
        assertThat(present("web1", 1, grant).verdict()).isEqualTo(PolicyVerdict.NONE);
        AtomicFiles.write(
                provisioners.resolve("other.pub"), Pem.bytes(TestKeys.publicPem(STRANGER)), AtomicFiles.PUBLIC_READ);
        clock.advance(Duration.ofSeconds(1));
        assertThat(present("web1", 1, grant).rule()).isEqualTo("grant by provisioner other");
    }

    @Test
    void aDryRunSpendsNothing() {
        byte[] grant = grant("web1", 1);
        AuthAttempt attempt = attempt("web1", 1, Map.of(), grant, null, "10.0.0.5");
        assertThat(policy.check(attempt).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(policy.check(attempt).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(dir.resolve("cache")).doesNotExist();
        assertThat(policy.evaluate(attempt).verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(policy.check(attempt).reason()).isEqualTo("the grant was already used");
    }

    @Test
    void noGrantNoDecision() {
        assertThat(present("web1", 1, null).reason()).isEqualTo("no grant presented");
    }
}
