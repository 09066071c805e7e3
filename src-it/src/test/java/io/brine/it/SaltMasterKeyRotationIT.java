package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.TransportKind;
import io.brine.keytool.BrineKey;
import io.brine.protocol.salt.SaltPem;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.OfflineMasterSigning;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stock salt-minions of each release through a brine master key rotation, by Salt's own mechanism (issue 25, SALT.md
 * 4.1): the master has {@code master_sign_pubkey} and sends the {@code pub_sig} brine-key made with the offline
 * signing key, first for the key it started with (signed without a rotation, so verifying minions accept it), then
 * for a rotation's new key; a minion with {@code verify_master_pubkey_sign} and that key's {@code master_sign.pub}
 * takes the new master key and runs jobs on; one whose {@code master_sign.pub} is another key refuses it as stock Salt
 * does.
 */
class SaltMasterKeyRotationIT {

    private static final String READY = "Minion is ready to receive requests!";
    /** Each release verifies the signing key; salt4 (3008) holds another key's public half. */
    private static final Map<String, String> VERIFYING = Map.of(
            "salt1",
            SaltMinionProcess.SALT_3006,
            "salt2",
            SaltMinionProcess.SALT_3007,
            "salt3",
            SaltMinionProcess.SALT_3008);

    @TempDir
    Path dir;

    private Fleet fleet;
    private final List<SaltMinionProcess> salts = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        try {
            SaltMinionProcess.closeAll(salts);
        } finally {
            if (fleet != null) {
                fleet.close();
            }
        }
    }

    private int brineKey(String... args) {
        List<String> all = new ArrayList<>(List.of(
                "--pki-dir",
                fleet.masterConfig.pkiDir().toString(),
                "--cachedir",
                dir.resolve("admin-cache").toString(),
                "-c",
                dir.resolve("etc").toString()));
        all.addAll(List.of(args));
        return BrineKey.commandLine(new BrineKey()).execute(all.toArray(String[]::new));
    }

    private String masterPub() throws Exception {
        return Files.readString(fleet.masterConfig.pkiDir().resolve("master.pub"));
    }

    private void awaitRotationsLoaded(int count) {
        await().atMost(WAIT)
                .until(() ->
                        fleet.master.metrics().scrape().contains("brine_master_key_rotations_total " + count + ".0"));
    }

    private SaltMinionProcess startSalt(String id, String version, String... extra) throws Exception {
        var addresses = fleet.master.master().addresses();
        SaltMinionProcess salt = SaltMinionProcess.start(
                id,
                version,
                dir.resolve("salt-" + id),
                "zeromq",
                addresses.request().getPort(),
                addresses.publish().getPort(),
                extra);
        salts.add(salt);
        return salt;
    }

    @Test
    void minionsThatVerifyTheSigningKeyFollowARotationAndOneWithAnotherKeyRefusesIt() throws Exception {
        Path offline = Files.createDirectories(dir.resolve("offline"));
        Path signingKey = Files.writeString(offline.resolve("master_sign.pem"), TestKeys.privatePem(210));
        Files.setPosixFilePermissions(signingKey, PosixFilePermissions.fromString("r--------"));
        Files.createDirectories(dir.resolve("etc"));
        Files.writeString(dir.resolve("etc/master.yaml"), "master_sign_pubkey: true\n");
        fleet = new Fleet(dir).transport(TransportKind.ZEROMQ);
        Path pki = Files.createDirectories(fleet.masterConfig().build().pkiDir());
        Files.setPosixFilePermissions(pki, PosixFilePermissions.fromString("rwx------"));
        Files.writeString(pki.resolve("master_sign.pub"), TestKeys.publicPem(210));
        fleet.startMaster(
                b -> b.saltMinions(true).masterSignKeyName("master_sign").acceptance(Fleet.autoAccept()));

        // The key the master made at its start has no pub_sig, so a verifying minion would refuse it: it is signed
        // without a rotation, where the signing key is kept (the request carried to it, the signature brought back).
        // The running master sends it from its next look.
        assertThat(brineKey("--master-pubkey-signature", "--prepare")).isZero();
        Path request = Files.copy(pki.resolve(OfflineMasterSigning.KEY_REQUEST_FILE), offline.resolve("request"));
        assertThat(BrineKey.commandLine(new BrineKey())
                        .execute("--sign-master-key", request.toString(), "--master-sign-key", signingKey.toString()))
                .isZero();
        assertThat(brineKey(
                        "--master-pubkey-signature",
                        "--signature",
                        offline.resolve("request.sig").toString()))
                .isZero();
        await().atMost(WAIT)
                .until(() -> fleet.master.master().masterKeys().saltSignature().isPresent());
        String signedFirst = masterPub();

        for (Map.Entry<String, String> minion : VERIFYING.entrySet()) {
            Path minionPki = Files.createDirectories(dir.resolve("salt-" + minion.getKey() + "/pki"));
            Files.writeString(minionPki.resolve("master_sign.pub"), TestKeys.publicPem(210));
            startSalt(minion.getKey(), minion.getValue(), "verify_master_pubkey_sign: True");
        }
        // salt4 has the master's key cached and another key as master_sign.pub: a key it already holds is not
        // checked (always_verify_signature is off), a new one is.
        Path strayPki = Files.createDirectories(dir.resolve("salt-salt4/pki"));
        Files.writeString(strayPki.resolve("master_sign.pub"), TestKeys.publicPem(211));
        Files.writeString(strayPki.resolve("minion_master.pub"), signedFirst);
        SaltMinionProcess stray = startSalt("salt4", SaltMinionProcess.SALT_3008, "verify_master_pubkey_sign: True");
        // A stock minion's start has slow steps (Python's imports, its grains, its key): each waited for apart.
        for (String step : List.of("Setting up the Salt Minion", "Connecting to master", READY)) {
            for (SaltMinionProcess salt : salts) {
                salt.awaitLog(step);
            }
        }
        fleet.awaitSubscribed("salt1", "salt2", "salt3", "salt4");
        for (SaltMinionProcess salt : salts) {
            assertThat(SaltPem.sameKey(Files.readString(salt.dir.resolve("pki/minion_master.pub")), signedFirst))
                    .as(salt.id)
                    .isTrue();
        }
        FleetJobs jobs = new FleetJobs(fleet);
        var before = jobs.publish("glob", "salt*", "test.ping");
        jobs.awaitReturns(before.jid(), "salt1", "salt2", "salt3", "salt4");

        // On the master's machine with the signing key brought to it (the one-step form).
        assertThat(brineKey("--rotate-master-key", "--master-sign-key", signingKey.toString()))
                .isZero();
        awaitRotationsLoaded(1);
        String rotated = masterPub();
        var after = jobs.publish("glob", "salt*", "test.ping");
        var returns = jobs.awaitReturns(after.jid(), "salt1", "salt2", "salt3");
        for (String id : VERIFYING.keySet()) {
            assertThat(returns.get(id).returnValue()).as(id).isEqualTo(true);
            SaltMinionProcess salt =
                    salts.stream().filter(s -> s.id.equals(id)).findFirst().orElseThrow();
            assertThat(SaltPem.sameKey(Files.readString(salt.dir.resolve("pki/minion_master.pub")), rotated))
                    .as(id)
                    .isTrue();
        }
        stray.awaitLog("signature verification failed");
        assertThat(SaltPem.sameKey(Files.readString(strayPki.resolve("minion_master.pub")), signedFirst))
                .isTrue();
        assertThat(jobs.returners(after.jid())).doesNotContain("salt4");
    }
}
