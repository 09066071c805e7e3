package io.brine.store.policy;

import static io.brine.store.policy.Attempts.attempt;
import static io.brine.store.policy.Attempts.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.daemon.config.MasterConfig.AutosignToken;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.MovableClock;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.Offer;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.RecordingKeyStore;
import io.brine.store.keys.StoredKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one admission path: one store read, policies asked only where they matter, a spend given back in one place. */
class AdmissionTest {

    static final String TOKEN = "correct-horse-battery-staple";

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(Attempts.T0);
    final AtomicInteger asked = new AtomicInteger();
    final AutosignToken token = TokenHashes.entry("web*", TOKEN, true);
    RecordingKeyStore store;
    SpentStore spent;

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    /** A store behind a recorder, and a single-use token for web* whose evaluations are counted. */
    private Admission admission(int maxMinions) throws Exception {
        store = new RecordingKeyStore(FileKeyStore.open(KeyStoreOptions.builder(dir.resolve("pki"))
                .masterKey(false)
                .maxMinions(maxMinions)
                .pollInterval(Duration.ZERO)
                .build()));
        return admission(store);
    }

    private Admission admission(KeyStore keys) {
        spent = new SpentStore(dir.resolve("spent_tokens"), clock);
        TokenPolicy tokens = new TokenPolicy(List.of(token), spent);
        AcceptancePolicy counted = attempt -> {
            asked.incrementAndGet();
            return tokens.evaluate(attempt);
        };
        return new Admission(keys, AcceptancePolicies.of(List.of(), List.of(counted)));
    }

    private static AuthAttempt withToken(String id, int keyIndex) {
        return attempt(id, keyIndex, Map.of(), null, TOKEN, "10.0.0.5");
    }

    private boolean tokenSpent() throws IOException {
        return spent.isSpent(token.sha256());
    }

    @Test
    void aTokenBackedRequestWinsOverAPendingSquatterButNeverOverAnAcceptedKey() throws Exception {
        store = new RecordingKeyStore(FileKeyStore.open(KeyStoreOptions.builder(dir.resolve("pki"))
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build()));
        spent = new SpentStore(dir.resolve("spent_tokens"), clock);
        Admission admission = new Admission(
                store,
                AcceptancePolicies.of(
                        List.of(),
                        List.of(
                                attempt -> new PolicyDecision(PolicyVerdict.ACCEPT, "autosign_file", "web* matches"),
                                new TokenPolicy(List.of(token), spent))));
        store.offer("web1", Attempts.key(9), PolicyVerdict.NONE); // the squatter

        // A policy that only matches the id proves nothing over a pending key.
        assertThat(admission.admit(attempt("web1", 1)).decision()).isInstanceOf(KeyDecision.Denied.class);
        assertThat(store.lookup("web1", Attempts.key(9))).isEqualTo(KeyLookup.PENDING_SAME);

        Admission.Admitted real = admission.admit(withToken("web1", 1));
        assertThat(real.decision()).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(real.decision().reason()).contains("over a pending key");
        assertThat(store.lookup("web1", Attempts.key(1))).isEqualTo(KeyLookup.ACCEPTED_SAME);
        assertThat(store.list().find("web1", KeyState.DENIED).orElseThrow().fingerprint())
                .isEqualTo(Attempts.fingerprint(9));
        assertThat(tokenSpent()).isTrue();

        // Never over an accepted key; the token (single-use, spent) would not help anyway: a fresh one.
        AutosignToken again = TokenHashes.entry("web*", TOKEN + "-2", false);
        Admission second =
                new Admission(store, AcceptancePolicies.of(List.of(), List.of(new TokenPolicy(List.of(again), spent))));
        assertThat(second.admit(attempt("web1", 2, Map.of(), null, TOKEN + "-2", "10.0.0.6"))
                        .decision())
                .isInstanceOf(KeyDecision.Denied.class);
        assertThat(store.lookup("web1", Attempts.key(1))).isEqualTo(KeyLookup.ACCEPTED_SAME);
    }

    @Test
    void aNewKeyAcceptedByAPolicyReadsTheStoreOnceAndSaysWhatItStored() throws Exception {
        Admission admission = admission(0);

        Admission.Admitted admitted = admission.admit(withToken("web1", 1));

        assertThat(store.calls()).containsExactly("offer");
        assertThat(admitted.decision()).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(admitted.policy().rule()).startsWith(TokenPolicy.RULE);
        Offer offer = admitted.offer();
        StoredKey stored = offer.stored().orElseThrow();
        assertThat(stored.state()).isEqualTo(KeyState.ACCEPTED);
        assertThat(offer.sameKey()).isTrue();
        assertThat(offer.current()).isTrue();
        assertThat(stored.key()).isSameAs(store.delegate().acceptedKey("web1").orElseThrow());
    }

    @Test
    void anAcceptedKeyReadsTheStoreOnceAndAsksNoPolicy() throws Exception {
        Admission admission = admission(0);
        admission.admit(withToken("web1", 1));
        store.forget();
        asked.set(0);

        Admission.Admitted again = admission.admit(attempt("web1", 1));

        assertThat(store.calls()).containsExactly("offer");
        assertThat(asked).hasValue(0);
        assertThat(again.decision()).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(again.policy()).isSameAs(Admission.NOT_ASKED);
        assertThat(again.offer().stored().orElseThrow().key())
                .isSameAs(store.delegate().acceptedKey("web1").orElseThrow());
    }

    @Test
    void aRefusedStoreTransitionUnspendsTheToken() throws Exception {
        Admission admission = admission(1);
        store.offer("db1", key(9), PolicyVerdict.ACCEPT);

        Admission.Admitted full = admission.admit(withToken("web1", 1));

        assertThat(full.decision()).isInstanceOf(KeyDecision.Full.class);
        assertThat(asked).as("the policy spent the token").hasValue(1);
        assertThat(tokenSpent()).as("given back").isFalse();
        store.delete("db1", "test");
        assertThat(admission.admit(withToken("web1", 1)).decision()).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(tokenSpent()).isTrue();
    }

    @Test
    void aStoreThatFailsAfterAskingThePoliciesUnspendsTheToken() throws Exception {
        KeyStore real = FileKeyStore.open(KeyStoreOptions.builder(dir.resolve("pki"))
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build());
        store = new RecordingKeyStore(real) {
            @Override
            public Offer offer(String id, RSAPublicKey offered, MinionKind kind, Policies policies) {
                policies.decide(KeyLookup.UNKNOWN);
                throw new UncheckedIOException(new IOException("disk full"));
            }
        };
        Admission admission = admission(store);

        assertThatThrownBy(() -> admission.admit(withToken("web1", 1))).hasMessageContaining("disk full");

        assertThat(asked).hasValue(1);
        assertThat(tokenSpent()).isFalse();
    }

    @Test
    void policiesAreNotAskedForARejectedIdNorAboutAnotherKeyThanTheStoredOne() throws Exception {
        Admission admission = admission(0);
        store.offer("web1", key(1), PolicyVerdict.REJECT);
        store.offer("web2", key(2), PolicyVerdict.ACCEPT);

        Admission.Admitted rejected = admission.admit(withToken("web1", 1));
        Admission.Admitted denied = admission.admit(withToken("web2", 3));

        assertThat(asked).hasValue(0);
        assertThat(tokenSpent()).isFalse();
        assertThat(rejected.decision()).isInstanceOf(KeyDecision.Rejected.class);
        assertThat(rejected.offer().stored().orElseThrow().state()).isEqualTo(KeyState.REJECTED);
        assertThat(denied.decision()).isInstanceOf(KeyDecision.Denied.class);
        assertThat(denied.policy()).isSameAs(Admission.NOT_ASKED);
        // A denied offer names the key the id keeps, which is not the offered one.
        assertThat(denied.offer().sameKey()).isFalse();
        assertThat(denied.offer().stored().orElseThrow().key()).isEqualTo(key(2));
    }

    @Test
    void anOfferStopsBeingCurrentWhenItsKeyIsRemovedHereOrElsewhere() throws Exception {
        Admission admission = admission(0);
        Offer first = admission.admit(withToken("web1", 1)).offer();
        store.delete("web1", "admin");
        assertThat(first.current()).isFalse();

        store.offer("web2", key(2), PolicyVerdict.ACCEPT);
        Offer second = admission.admit(attempt("web2", 2)).offer();
        FileKeyStore master = (FileKeyStore) store.delegate();
        try (KeyStore admin = FileKeyStore.open(KeyStoreOptions.builder(dir.resolve("pki"))
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build())) {
            admin.reject("web2", KeyState.ACCEPTED, null, "admin");
        }
        assertThat(second.current()).as("not seen yet").isTrue();
        master.poll();
        assertThat(second.current()).isFalse();
    }

    @Test
    void anOfferStaysCurrentWhenAFullRescanFindsTheSameKeyAgain() throws Exception {
        Admission admission = admission(0);
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        Offer offer = admission.admit(attempt("web1", 1)).offer();
        // Rewritten in place with the same key: a new version of the file, parsed again by the rescan.
        Path file = dir.resolve("pki").resolve(KeyState.ACCEPTED.dirName()).resolve("web1");
        Files.write(file, Pem.bytes(Pem.publicKeySpki(key(1))));

        store.refresh();

        assertThat(offer.current()).isTrue();
        assertThat(store.delegate().acceptedKey("web1").orElseThrow())
                .as("parsed again")
                .isNotSameAs(offer.stored().orElseThrow().key());
    }
}
