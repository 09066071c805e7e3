package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.daemon.config.MasterConfig;
import io.brine.protocol.InvalidIdException;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.audit.FileAuditLog;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.store.policy.Classifications;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.time.Clock;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What every {@link KeyStore} backend does alike (issue 14's rules among them): one key, one id; a grant or token
 * displaces a pending squatter, never an accepted key; the offer's argument checks; a classification goes with its
 * key, whoever deleted it. A backend's test extends this and opens its stores; {@link #other} is a second store on
 * the same keys (another process, another master) whose changes the first hears by itself.
 */
public abstract class KeyStoreContract {

    @TempDir
    protected Path tmp;

    protected FileAuditLog audit;
    protected KeyStore store;
    private KeyStore other;

    /** A store on this test's keys, auditing to {@code audit}; a second call opens another on the same keys. */
    protected abstract KeyStore open(Path pkiDir, AuditLog audit) throws Exception;

    @BeforeEach
    void openStore() throws Exception {
        audit = AuditLog.open(tmp.resolve("cache"), Clock.systemUTC());
        store = open(tmp.resolve("pki"), audit);
    }

    @AfterEach
    void closeStores() throws Exception {
        if (other != null) {
            other.close();
        }
        store.close();
        audit.close();
        closed();
    }

    /** Called after every store of the test is closed: a backend closes what its stores stood on. */
    protected void closed() throws Exception {}

    protected KeyStore other() throws Exception {
        if (other == null) {
            other = open(tmp.resolve("pki"), AuditLog.none());
        }
        return other;
    }

    protected static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    private String auditText() throws Exception {
        return Files.readString(audit.file());
    }

    /** A grant or token: asked about the state the store found, it says yes. */
    private static KeyStore.Policies grant() {
        return current -> PolicyVerdict.ACCEPT;
    }

    // ------------------------------------------------------------ an admin's change bound to one key

    @Test
    void anAdminsChangeBoundToAKeyIsRefusedWhenTheIdNowHoldsAnotherKeyInTheTargetState() throws Exception {
        String listed = Fingerprints.of(key(1));
        store.offer("web1", key(1), PolicyVerdict.NONE); // what the admin was shown
        other().delete("web1", "another-admin");
        other().offer("web1", key(9), PolicyVerdict.ACCEPT); // someone else's key, accepted meanwhile

        AdminResult accept = store.accept("web1", KeyState.PENDING, listed, "admin");
        assertThat(accept.status()).isEqualTo(AdminResult.Status.REFUSED);
        assertThat(accept.message())
                .isEqualTo("web1: the id now holds an accepted key with fingerprint " + Fingerprints.of(key(9))
                        + ", not the pending key " + listed + "; nothing changed");

        other().reject("web1", KeyState.ACCEPTED, null, "another-admin");
        AdminResult reject = store.reject("web1", KeyState.PENDING, listed, "admin");
        assertThat(reject.status()).isEqualTo(AdminResult.Status.REFUSED);
        assertThat(reject.message()).contains("a rejected key with fingerprint " + Fingerprints.of(key(9)));
        assertThat(store.reject("web1", KeyState.PENDING, Fingerprints.of(key(9)), "admin")
                        .status())
                .isEqualTo(AdminResult.Status.UNCHANGED); // the very key: already where it was asked to go
    }

    // ------------------------------------------------------------ a minion's key rotation (issue 25)

    @Test
    void aRotationReplacesTheAcceptedKeyAtOnceAuditsBothKeysAndAnotherStoreSeesIt() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);

        RotationDecision decision = store.rotate("web1", key(1), key(2), KeyRotationPolicy.ALLOW, "minion web1");

        assertThat(decision)
                .isEqualTo(new RotationDecision.Rotated(
                        "web1", Fingerprints.of(key(1)), Fingerprints.of(key(2)), "key rotated by the minion"));
        assertThat(store.acceptedKey("web1")).contains(key(2));
        assertThat(store.lookup("web1", key(1))).isEqualTo(KeyLookup.ACCEPTED_OTHER);
        await().until(() -> other().acceptedKey("web1").equals(Optional.of(key(2))));
        assertThat(Files.readAllLines(audit.file()))
                .last()
                .asString()
                .contains(
                        "\"key-rotated\"",
                        "\"minion web1\"",
                        Fingerprints.of(key(2)),
                        "old key " + Fingerprints.of(key(1)) + " retired");
        // A retry after a lost answer is answered as done, and writes nothing.
        long lines = Files.readAllLines(audit.file()).size();
        assertThat(store.rotate("web1", key(1), key(2), KeyRotationPolicy.ALLOW, "minion web1"))
                .isInstanceOf(RotationDecision.Rotated.class);
        assertThat(Files.readAllLines(audit.file())).hasSize((int) lines);
    }

    @Test
    void aRetiredKeyOfferedAgainIsDeniedEvenAfterItsIdWasDeletedAndNeverComesBackByRotation() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        store.rotate("web1", key(1), key(2), KeyRotationPolicy.ALLOW, "minion web1");

        assertThat(store.offer("web1", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Denied.class);
        assertThat(store.rotate("web1", key(2), key(1), KeyRotationPolicy.ALLOW, "minion web1"))
                .isInstanceOf(RotationDecision.Refused.class)
                .extracting(RotationDecision::reason)
                .isEqualTo("the new key was retired by an earlier rotation of this id");
        store.delete("web1", "admin");
        KeyDecision again = store.offer("web1", key(1), PolicyVerdict.ACCEPT);

        assertThat(again).isInstanceOf(KeyDecision.Denied.class);
        assertThat(again.reason()).isEqualTo("key retired by a rotation of this id");
        assertThat(store.lookup("web1", key(1))).isEqualTo(KeyLookup.UNKNOWN);
        assertThat(store.list().find("web1", KeyState.DENIED))
                .map(StoredKey::fingerprint)
                .contains(Fingerprints.of(key(1)));
        // The new key is the id's own: offered after the delete, the policies decide as for any key.
        assertThat(store.offer("web1", key(2), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
    }

    @Test
    void aRotationIsRefusedAndChangesNothingWhenTheNewKeyIsAnotherIdsOrTheOldOneOrTheMasterDenies() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        store.offer("web2", key(3), PolicyVerdict.NONE);
        long lines = Files.readAllLines(audit.file()).size();

        assertThat(store.rotate("web1", key(1), key(3), KeyRotationPolicy.ALLOW, "m")
                        .reason())
                .isEqualTo("the new key is held by another id (same key as web2)");
        assertThat(store.rotate("web1", key(1), key(1), KeyRotationPolicy.ALLOW, "m")
                        .reason())
                .isEqualTo("the new key is the old key");
        assertThat(store.rotate("web1", key(1), key(2), KeyRotationPolicy.DENY, "m")
                        .reason())
                .isEqualTo("key rotation is denied by this master (key_rotation: deny)");
        assertThat(store.rotate("web2", key(3), key(4), KeyRotationPolicy.ALLOW, "m")
                        .reason())
                .isEqualTo("the id holds no accepted key, only a pending one");

        assertThat(store.acceptedKey("web1")).contains(key(1));
        assertThat(Files.readAllLines(audit.file())).hasSize((int) lines);
    }

    @Test
    void aRotationOfAKeyRejectedOrDeletedOrReplacedMeanwhileIsRefused() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        store.offer("web2", key(3), PolicyVerdict.ACCEPT);
        store.offer("web3", key(5), PolicyVerdict.ACCEPT);
        other().reject("web1", null, "admin");
        other().delete("web2", "admin");
        other().rotate("web3", key(5), key(6), KeyRotationPolicy.ALLOW, "minion web3");

        assertThat(store.rotate("web1", key(1), key(2), KeyRotationPolicy.ALLOW, "m")
                        .reason())
                .isEqualTo("the id is rejected");
        assertThat(store.rotate("web2", key(3), key(4), KeyRotationPolicy.ALLOW, "m")
                        .reason())
                .isEqualTo("the id holds no accepted key (deleted meanwhile)");
        assertThat(store.rotate("web3", key(5), key(7), KeyRotationPolicy.ALLOW, "m")
                        .reason())
                .isEqualTo("the old key is no longer the accepted key (replaced meanwhile)");
        assertThat(store.acceptedKey("web1")).isEmpty();
        assertThat(store.lookup("web1", key(1))).isEqualTo(KeyLookup.REJECTED);
        assertThat(store.lookup("web2", key(4))).isEqualTo(KeyLookup.UNKNOWN);
    }

    // ------------------------------------------------------------ rotations admins ask for (brine-key --rotate-keys)

    private List<AdminResult.Status> ask(KeyStore on, String... ids) {
        return on.askRotation(List.of(ids), "brine-key:root").stream()
                .map(AdminResult::status)
                .toList();
    }

    @Test
    void anAskIsAuditedOnceSeenByAnotherStoreAndSpentByARotationThroughEither_ListedRotated() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        store.offer("db1", key(2), PolicyVerdict.ACCEPT);
        store.offer("salt1", key(3), MinionKind.SALT, grant());
        store.offer("new1", key(4), PolicyVerdict.NONE);

        List<AdminResult> results =
                store.askRotation(List.of("web1", "db1", "salt1", "new1", "none1"), "brine-key:root");

        assertThat(results)
                .extracting(AdminResult::status)
                .containsExactly(
                        AdminResult.Status.DONE,
                        AdminResult.Status.DONE,
                        AdminResult.Status.REFUSED,
                        AdminResult.Status.NOT_FOUND,
                        AdminResult.Status.NOT_FOUND);
        assertThat(results.get(0).message())
                .isEqualTo("web1: asked to rotate " + Fingerprints.of(key(1)) + " at its next heartbeat");
        assertThat(results.get(2).message()).contains("a Salt minion cannot rotate", "brine-key -d salt1");
        assertThat(results.get(3).message())
                .isEqualTo("new1: no accepted key (the id is pending); only an accepted" + " key is rotated");
        assertThat(ask(other(), "web1")).as("asked again elsewhere").containsExactly(AdminResult.Status.UNCHANGED);
        assertThat(Files.readAllLines(audit.file()))
                .filteredOn(line -> line.contains("\"key-rotation-asked\""))
                .hasSize(2);
        await().until(() -> other().rotationAsked("web1").equals(Optional.of(Fingerprints.of(key(1)))));
        assertThat(other().rotationAsked("db1")).contains(Fingerprints.of(key(2)));
        assertThat(other().rotationAsks()).containsOnlyKeys("web1", "db1");
        RotationAsks.Ask asked = other().rotationAsks().get("web1");

        assertThat(other().rotate("web1", key(1), key(5), KeyRotationPolicy.ALLOW, "minion web1"))
                .isInstanceOf(RotationDecision.Rotated.class);

        await().until(() -> store.rotationAsked("web1").isEmpty()
                && other().rotationAsked("web1").isEmpty());
        // Spent, still listed (brine-key -L: "rotated, asked TIME"); the other minion still asked.
        assertThat(store.rotationAsks().get("web1")).isEqualTo(asked);
        assertThat(store.rotationAsked("db1")).contains(Fingerprints.of(key(2)));
        assertThat(ask(store, "web1")).as("the new key, asked anew").containsExactly(AdminResult.Status.DONE);
        await().until(() -> other().rotationAsked("web1").equals(Optional.of(Fingerprints.of(key(5)))));
    }

    @Test
    void aDeleteOrRejectElsewhereDropsTheAsk_AndAcceptingTheKeyAgainDoesNotReviveIt() throws Exception {
        store.offer("web1", key(11), PolicyVerdict.ACCEPT);
        store.offer("db1", key(12), PolicyVerdict.ACCEPT);
        assertThat(ask(store, "web1", "db1")).containsExactly(AdminResult.Status.DONE, AdminResult.Status.DONE);
        await().until(() -> other().acceptedKey("db1").isPresent());

        assertThat(other().reject("web1", KeyState.ACCEPTED, null, "admin").done())
                .isTrue();
        assertThat(other().delete("db1", "admin").done()).isTrue();

        assertThat(other().rotationAsks()).isEmpty();
        await().until(() -> store.rotationAsks().isEmpty());
        assertThat(store.accept("web1", KeyState.REJECTED, null, "admin").done())
                .isTrue();
        await().until(() -> other().acceptedKey("web1").isPresent());
        assertThat(other().rotationAsked("web1")).isEmpty();
        assertThat(store.rotationAsked("web1")).isEmpty();
        assertThat(other().rotationAsks()).isEmpty();
    }

    @Test
    void aRotatedKeyHoldsItsIdForOneKeyOneIdAndTheOldKeyNoLonger() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        store.rotate("web1", key(1), key(2), KeyRotationPolicy.ALLOW, "minion web1");

        KeyDecision squatter = store.offer("web9", key(2), PolicyVerdict.ACCEPT);
        assertThat(squatter).isInstanceOf(KeyDecision.Pending.class);
        assertThat(squatter.reason()).contains("same key as web1");
        assertThat(store.offer("web8", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
    }

    @Test
    void aWeakNewKeyIsRefusedBeforeAnythingIsRead() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(1024);
        RSAPublicKey weak = (RSAPublicKey) generator.generateKeyPair().getPublic();

        assertThatThrownBy(() -> store.rotate("web1", key(1), weak, KeyRotationPolicy.ALLOW, "m"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("web1: ");
        assertThat(store.acceptedKey("web1")).contains(key(1));
    }

    // ------------------------------------------------------------ one key, one id

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
        assertThat(auditText()).contains("same key as web1");
        // Nor is a pending key with that key promoted later.
        assertThat(store.offer("x1.prov.example.com", key(1), PolicyVerdict.ACCEPT))
                .isInstanceOf(KeyDecision.Pending.class);
        assertThat(store.list().sharedKeys())
                .containsEntry(Fingerprints.of(key(1)), List.of("web1", "x1.prov.example.com"));
    }

    @Test
    void aKeyOfItsOwnIsAcceptedAndAnAdminsAcceptOfASharedKeyIsAuditedAsShared() throws Exception {
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
    }

    @Test
    void aKeyDeletedFromItsOtherIdIsNoLongerShared() throws Exception {
        store.offer("web1", key(1), PolicyVerdict.NONE);
        store.offer("web3", key(1), PolicyVerdict.NONE);
        store.delete("web1", "admin");

        assertThat(store.offer("web3", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(store.list().sharedKeys()).isEmpty();
    }

    // ------------------------------------------------------------ the kind of a minion (issue 30)

    /** Policies that must not be asked. */
    private static KeyStore.Policies notAsked() {
        return current -> {
            throw new AssertionError("policies asked about " + current);
        };
    }

    @ParameterizedTest
    @EnumSource(
            value = KeyState.class,
            names = {"PENDING", "ACCEPTED", "REJECTED"})
    void aSaltOfferNeverTakesABrineMinionsKeyInAnyStateAndNoPolicyIsAsked(KeyState state) throws Exception {
        store.offer(
                "web1",
                key(1),
                switch (state) {
                    case ACCEPTED -> PolicyVerdict.ACCEPT;
                    case REJECTED -> PolicyVerdict.REJECT;
                    default -> PolicyVerdict.NONE;
                });

        KeyDecision decision =
                store.offer("web1", key(1), MinionKind.SALT, notAsked()).decision();

        assertThat(decision).isInstanceOf(KeyDecision.OtherKind.class);
        assertThat(((KeyDecision.OtherKind) decision).held()).isEqualTo(MinionKind.BRINE);
        assertThat(decision.reason()).contains("held by a brine minion");
        assertThat(store.kind("web1")).isEqualTo(MinionKind.BRINE);
        assertThat(store.list().find("web1", state).orElseThrow().kind()).isEqualTo(MinionKind.BRINE);
        KeyStore second = other();
        assertThat(second.kind("web1")).isEqualTo(MinionKind.BRINE);
        // Nor through another store (brine-key's process, another master), which decides on what is stored.
        assertThat(second.offer("web1", key(1), MinionKind.SALT, notAsked()).decision())
                .isInstanceOf(KeyDecision.OtherKind.class);
        assertThat(store.kind("web1")).isEqualTo(MinionKind.BRINE);
    }

    @Test
    void aBrineOfferNeverTakesASaltMinionsKeyAndTheKindStaysThroughAnAdminsMoves() throws Exception {
        assertThat(store.offer("salt1", key(1), MinionKind.SALT, current -> PolicyVerdict.NONE)
                        .decision())
                .isInstanceOf(KeyDecision.Pending.class);
        assertThat(store.kind("salt1")).isEqualTo(MinionKind.SALT);

        assertThat(store.offer("salt1", key(1), MinionKind.BRINE, notAsked()).decision())
                .isInstanceOf(KeyDecision.OtherKind.class);
        assertThat(store.accept("salt1", null, "admin").done()).isTrue();
        assertThat(store.offer("salt1", key(1), MinionKind.SALT, notAsked()).decision())
                .isInstanceOf(KeyDecision.Accepted.class);
        assertThat(store.reject("salt1", null, "admin").done()).isTrue();
        assertThat(store.accept("salt1", KeyState.REJECTED, null, "admin").done())
                .isTrue();

        assertThat(store.kind("salt1")).isEqualTo(MinionKind.SALT);
        assertThat(store.offer("salt1", key(1), notAsked()).decision()).isInstanceOf(KeyDecision.OtherKind.class);
        KeyStore second = other();
        await().until(() -> second.kind("salt1") == MinionKind.SALT);
        assertThat(second.list().find("salt1", KeyState.ACCEPTED).orElseThrow().kind())
                .isEqualTo(MinionKind.SALT);
    }

    @Test
    void deletingAKeyTakesItsKindAndOnlyThenMayTheOtherKindOfferIt() throws Exception {
        store.offer("salt1", key(1), MinionKind.SALT, current -> PolicyVerdict.ACCEPT);
        KeyStore second = other();
        await().until(() -> second.kind("salt1") == MinionKind.SALT);

        assertThat(second.delete("salt1", "admin").done()).isTrue();

        await().until(() -> store.kind("salt1") == MinionKind.BRINE);
        assertThat(store.offer("salt1", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(store.kind("salt1")).isEqualTo(MinionKind.BRINE);
        assertThat(store.offer("salt1", key(1), MinionKind.SALT, notAsked()).decision())
                .isInstanceOf(KeyDecision.OtherKind.class);
    }

    @Test
    void aBrineOfferAndASaltOfferOfOneNewKeyRacingFileItForOneKindOnly() throws Exception {
        KeyStore second = other();
        int ids = 8;
        for (int i = 0; i < ids; i++) {
            String id = "race" + i;
            RSAPublicKey offered = key(10 + i);
            CompletableFuture<KeyDecision> brine = CompletableFuture.supplyAsync(
                    () -> store.offer(id, offered, MinionKind.BRINE, c -> PolicyVerdict.ACCEPT)
                            .decision());
            CompletableFuture<KeyDecision> salt = CompletableFuture.supplyAsync(
                    () -> second.offer(id, offered, MinionKind.SALT, c -> PolicyVerdict.ACCEPT)
                            .decision());
            KeyDecision b = brine.get();
            KeyDecision s = salt.get();

            assertThat(List.of(b, s))
                    .as(id)
                    .filteredOn(d -> d instanceof KeyDecision.Accepted)
                    .hasSize(1);
            assertThat(List.of(b, s))
                    .as(id)
                    .filteredOn(d -> d instanceof KeyDecision.OtherKind)
                    .hasSize(1);
            MinionKind winner = b instanceof KeyDecision.Accepted ? MinionKind.BRINE : MinionKind.SALT;
            await().until(() -> store.kind(id) == winner && second.kind(id) == winner);
        }
    }

    // ------------------------------------------------------------ the squatter rule

    @Test
    void aGrantOrTokenAskedAboutAPendingKeyDisplacesTheSquatter() throws Exception {
        store.offer("web1", key(9), PolicyVerdict.NONE); // the squatter
        AtomicInteger asked = new AtomicInteger();

        Offer real = store.offer("web1", key(1), current -> {
            asked.incrementAndGet();
            assertThat(current).isEqualTo(KeyLookup.PENDING_OTHER);
            return PolicyVerdict.ACCEPT;
        });

        assertThat(asked).hasValue(1);
        assertThat(real.decision()).isInstanceOf(KeyDecision.Accepted.class);
        assertThat(real.decision().reason()).contains("over a pending key");
        assertThat(real.current()).isTrue();
        assertThat(store.lookup("web1", key(1))).isEqualTo(KeyLookup.ACCEPTED_SAME);
        assertThat(store.list().find("web1", KeyState.DENIED).orElseThrow().fingerprint())
                .isEqualTo(Fingerprints.of(key(9)));
        assertThat(store.list().keys(KeyState.PENDING)).isEmpty();
        String trail = auditText();
        assertThat(trail).contains("pending key displaced", Fingerprints.of(key(9)));
        assertThat(Files.readAllLines(audit.file()))
                .last()
                .asString()
                .contains("\"event\":\"key-accepted\"", Fingerprints.of(key(1)));
    }

    @Test
    void aVerdictGivenInAdvanceNeverDisplacesAPendingKey() {
        store.offer("web1", key(9), PolicyVerdict.NONE);

        assertThat(store.offer("web1", key(1), PolicyVerdict.ACCEPT)).isInstanceOf(KeyDecision.Denied.class);

        assertThat(store.lookup("web1", key(9))).isEqualTo(KeyLookup.PENDING_SAME);
        assertThat(store.list().find("web1", KeyState.DENIED).orElseThrow().fingerprint())
                .isEqualTo(Fingerprints.of(key(1)));
    }

    @Test
    void aGrantNeverDisplacesAnAcceptedKey() {
        store.offer("web1", key(9), PolicyVerdict.ACCEPT);

        assertThat(store.offer("web1", key(1), grant()).decision()).isInstanceOf(KeyDecision.Denied.class);

        assertThat(store.lookup("web1", key(9))).isEqualTo(KeyLookup.ACCEPTED_SAME);
        assertThat(store.acceptedKey("web1")).contains(key(9));
    }

    @Test
    void aGrantWithAKeyStoredUnderAnotherIdDisplacesNothing() throws Exception {
        store.offer("web2", key(1), PolicyVerdict.NONE);
        store.offer("web1", key(9), PolicyVerdict.NONE);

        KeyDecision decision = store.offer("web1", key(1), grant()).decision();

        assertThat(decision).isInstanceOf(KeyDecision.Denied.class);
        assertThat(decision.reason()).contains("same key as web2");
        assertThat(store.lookup("web1", key(9))).isEqualTo(KeyLookup.PENDING_SAME);
    }

    @Test
    void aSquatterCanBeDisplacedThroughAnotherStore() throws Exception {
        store.offer("web1", key(9), PolicyVerdict.NONE);
        KeyStore second = other();
        await().until(() -> second.lookup("web1", key(9)) == KeyLookup.PENDING_SAME);

        assertThat(second.offer("web1", key(1), grant()).decision()).isInstanceOf(KeyDecision.Accepted.class);

        await().until(() -> store.acceptedKey("web1").isPresent());
        assertThat(store.acceptedKey("web1")).contains(key(1));
        await().until(() -> store.list().find("web1", KeyState.DENIED).isPresent());
        assertThat(store.list().find("web1", KeyState.DENIED).orElseThrow().fingerprint())
                .isEqualTo(Fingerprints.of(key(9)));
    }

    // ------------------------------------------------------------ the offer's checks

    @Test
    void anOfferOfABadIdOrAKeyUnder2048BitsWritesNothingAndAsksNoPolicy() throws Exception {
        String pem;
        try (var in = KeyStoreContract.class.getResourceAsStream("/io/brine/protocol/fixtures/rsa1024.spki.pub")) {
            pem = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        }
        byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
        RSAPublicKey small = (RSAPublicKey) KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(der));
        AtomicInteger asked = new AtomicInteger();
        KeyStore.Policies counting = current -> {
            asked.incrementAndGet();
            return PolicyVerdict.ACCEPT;
        };

        assertThatThrownBy(() -> store.offer("web1", small, counting))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("web1")
                .hasMessageContaining("1024");
        assertThatThrownBy(() -> store.offer("../etc", key(1), counting)).isInstanceOf(InvalidIdException.class);
        assertThatThrownBy(() -> store.offer("web1", null, counting)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> store.offer("web1", key(1), (KeyStore.Policies) null))
                .isInstanceOf(NullPointerException.class);

        assertThat(asked).hasValue(0);
        assertThat(store.list().keys().values()).allMatch(List::isEmpty);
    }

    // ------------------------------------------------------------ classifications

    @Test
    void aClassificationGoesWithItsKeyWhoeverDeletedIt() throws Exception {
        MasterConfig config = MasterConfig.builder(tmp).build();
        Path classes = Files.createDirectories(config.cachedir().resolve(Classifications.DIR_NAME));
        Path file = Files.writeString(
                classes.resolve("web1.json"),
                "{\"fingerprint\":\"" + Fingerprints.of(key(1)) + "\",\"class\":{\"role\":\"web\"}}\n");
        store.offer("web1", key(1), PolicyVerdict.ACCEPT);
        try (AcceptancePolicies policies =
                AcceptancePolicies.fromConfig(config, store, Clock.systemUTC(), AuditLog.none())) {
            assertThat(policies.classification("web1")).containsEntry("role", "web");
            KeyStore second = other();
            await().until(() -> second.acceptedKey("web1").isPresent());

            assertThat(second.delete("web1", "admin").done()).isTrue();

            await().until(() -> !Files.exists(file));
            assertThat(policies.classification("web1")).isEmpty();
        }
    }
}
