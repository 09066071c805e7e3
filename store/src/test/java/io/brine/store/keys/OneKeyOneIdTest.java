package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.audit.FileAuditLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** One key, one id: no policy accepts a key that is stored under another id, in any state. */
class OneKeyOneIdTest {

    @TempDir
    Path tmp;

    FileAuditLog audit;
    KeyStore store;

    @BeforeEach
    void open() throws Exception {
        audit = AuditLog.open(tmp.resolve("cache"), Clock.systemUTC());
        store = FileKeyStore.open(KeyStoreOptions.builder(tmp.resolve("pki"))
                .auditLog(audit)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build());
    }

    @AfterEach
    void close() throws Exception {
        store.close();
        audit.close();
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    @ParameterizedTest
    @EnumSource(KeyState.class)
    void aPolicyDoesNotAcceptAKeyStoredUnderAnotherIdInAnyState(KeyState state) throws Exception {
        switch (state) {
            case ACCEPTED -> store.offer("web1", key(1), PolicyVerdict.ACCEPT);
            case PENDING -> store.offer("web1", key(1), PolicyVerdict.NONE);
            case REJECTED -> store.offer("web1", key(1), PolicyVerdict.REJECT);
            case DENIED -> {
                store.offer("web1", key(2), PolicyVerdict.ACCEPT);
                store.offer("web1", key(1), PolicyVerdict.NONE);
            }
        }

        KeyDecision decision = store.offer("x1.prov.example.com", key(1), PolicyVerdict.ACCEPT);

        assertThat(decision).isInstanceOf(KeyDecision.Pending.class);
        assertThat(decision.reason()).contains("same key as web1", "not accepted by policy");
        assertThat(store.lookup("x1.prov.example.com", key(1))).isEqualTo(KeyLookup.PENDING_SAME);
        assertThat(Files.readString(audit.file())).contains("same key as web1");
        // A pending key with the same key is not promoted either.
        assertThat(store.offer("x1.prov.example.com", key(1), PolicyVerdict.ACCEPT))
                .isInstanceOf(KeyDecision.Pending.class);
    }

    @Test
    void aKeyOfItsOwnIsAcceptedAndAnAdminsAcceptIsAuditedAsShared() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.NONE);
        assertThat(store.offer("web2", key(2), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        store.offer("web3", key(1), PolicyVerdict.NONE);

        assertThat(store.accept("web3", KeyState.PENDING, Fingerprints.of(key(1)), "admin")
                        .done())
                .isTrue();

        assertThat(Files.readAllLines(audit.file()))
                .last()
                .asString()
                .contains("\"web3\"")
                .contains("same key as web1");
        assertThat(store.list().sharedKeys()).containsEntry(Fingerprints.of(key(1)), List.of("web1", "web3"));
    }
}
