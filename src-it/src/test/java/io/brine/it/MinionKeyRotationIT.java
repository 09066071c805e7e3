package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.daemon.config.MinionConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.minion.KeyRotation;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.minion.auth.MinionKeyring;
import io.brine.minion.auth.MinionKeys;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.RotationDecision;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A minion's key rotation end to end (issue 25): over its live session on each transport, switching keys only on the
 * master's signed answer, and an unanswered rotation settled at the next auth whichever way the master went.
 */
class MinionKeyRotationIT {

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    private static <T> T done(CompletableFuture<T> future) {
        await().until(future::isDone);
        return future.join();
    }

    private static PublicKey publicKeyIn(Path pki) throws Exception {
        return Pem.readPublicKey(Files.readString(pki.resolve(MinionKeys.PUBLIC_FILE)));
    }

    @ParameterizedTest
    @EnumSource(TransportKind.class)
    void aMinionRotatesItsKeyOverItsSessionAndRunsJobsWithTheNewOneAfterARestart(TransportKind kind) throws Exception {
        fleet = new Fleet(dir).transport(kind);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        MinionDaemon web1 = fleet.startMinion("web1");
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        Path pki = fleet.configOf(web1).pkiDir();
        PublicKey old = publicKeyIn(pki);

        KeyRotation.Result result = done(web1.rotateKey());

        assertThat(result.rotated()).isTrue();
        RSAPublicKey accepted = fleet.master.keyStore().acceptedKey("web1").orElseThrow();
        assertThat(Fingerprints.of(accepted)).isEqualTo(result.fingerprint());
        assertThat(publicKeyIn(pki)).isEqualTo(accepted).isNotEqualTo(old);
        assertThat(pki.resolve(MinionKeyring.NEW_PRIVATE_FILE)).doesNotExist();
        assertThat(web1.minion().status().fingerprint()).isEqualTo(result.fingerprint());
        assertThat(fleet.master.keyStore().lookup("web1", (RSAPublicKey) old)).isEqualTo(KeyLookup.ACCEPTED_OTHER);

        MinionConfig config = fleet.configOf(web1);
        fleet.stopMinion(web1);
        MinionDaemon again = fleet.start(config);
        Fleet.awaitState(again, MinionState.ACCEPTED);
        String jid = fleet.publish("test.ping", List.of("web1")).jid();
        assertThat(fleet.awaitReturns(jid, List.of("web1"))).hasSize(1);
    }

    @Test
    void anUnansweredRotationEndsWithTheKeyTheMasterHoldsWhicheverWayItWent() throws Exception {
        fleet = new Fleet(dir);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
        MinionDaemon rotated = fleet.startMinion("web1");
        MinionDaemon unheard = fleet.startMinion("web2");
        fleet.awaitAll(MinionState.ACCEPTED);
        Path rotatedPki = fleet.configOf(rotated).pkiDir();
        Path unheardPki = fleet.configOf(unheard).pkiDir();
        RSAPublicKey web2Key = (RSAPublicKey) publicKeyIn(unheardPki);
        MinionConfig rotatedConfig = fleet.configOf(rotated);
        MinionConfig unheardConfig = fleet.configOf(unheard);
        fleet.stopMinion(rotated);
        fleet.stopMinion(unheard);
        // Both were stopped with a rotation's new key written beside the old: web1's request reached the master and
        // its answer was lost; web2's never arrived.
        Fleet.writeKeyFile(rotatedPki.resolve(MinionKeyring.NEW_PRIVATE_FILE), TestKeys.privatePem(60), "r--------");
        Fleet.writeKeyFile(unheardPki.resolve(MinionKeyring.NEW_PRIVATE_FILE), TestKeys.privatePem(61), "r--------");
        RSAPublicKey newKey = (RSAPublicKey) TestKeys.pair(60).getPublic();
        assertThat(fleet.master
                        .keyStore()
                        .rotate(
                                "web1",
                                (RSAPublicKey) publicKeyIn(rotatedPki),
                                newKey,
                                KeyRotationPolicy.ALLOW,
                                "minion web1"))
                .isInstanceOf(RotationDecision.Rotated.class);

        MinionDaemon web1 = fleet.start(rotatedConfig);
        MinionDaemon web2 = fleet.start(unheardConfig);
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        Fleet.awaitState(web2, MinionState.ACCEPTED);

        assertThat(publicKeyIn(rotatedPki)).isEqualTo(newKey);
        assertThat(rotatedPki.resolve(MinionKeyring.NEW_PRIVATE_FILE)).doesNotExist();
        assertThat(publicKeyIn(unheardPki)).isEqualTo(web2Key);
        assertThat(unheardPki.resolve(MinionKeyring.NEW_PRIVATE_FILE)).doesNotExist();
        assertThat(fleet.master.keyStore().acceptedKey("web2")).contains(web2Key);
        String jid = fleet.publish("test.ping", List.of("web1", "web2")).jid();
        assertThat(fleet.awaitReturns(jid, List.of("web1", "web2"))).hasSize(2);
    }
}
