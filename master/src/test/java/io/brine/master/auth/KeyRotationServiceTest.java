package io.brine.master.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.master.session.MinionSession;
import io.brine.master.session.SessionTable;
import io.brine.protocol.codec.KeyRotations;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.message.SessionMessage.KeyRotate;
import io.brine.protocol.message.SessionMessage.KeyRotateAsk;
import io.brine.protocol.message.SessionMessage.KeyRotateReply;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.audit.FileAuditLog;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.PolicyVerdict;
import io.brine.transport.Peer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A minion's key rotation as the master judges it (issue 25): signed by both keys over this session, every check of
 * a new key, one key one id, the policy, one answered request a minute, and a signed answer.
 */
class KeyRotationServiceTest {

    private static final KeyPair MASTER = TestKeys.pair(0);
    private static final KeyPair OLD = TestKeys.pair(1);
    private static final KeyPair NEW = TestKeys.pair(2);
    private static final Peer PEER = () -> "127.0.0.1";

    @TempDir
    Path tmp;

    private FileAuditLog audit;
    private FileKeyStore store;
    private final SessionTable sessions = new SessionTable();
    private final AtomicLong nanos = new AtomicLong();
    private final List<String> answered = new ArrayList<>();

    @BeforeEach
    void open() throws Exception {
        audit = AuditLog.open(tmp.resolve("cache"), Clock.systemUTC());
        store = FileKeyStore.open(KeyStoreOptions.builder(tmp.resolve("pki"))
                .auditLog(audit)
                .masterKey(false)
                .build());
        store.offer("web1", pub(OLD), PolicyVerdict.ACCEPT);
    }

    @AfterEach
    void close() throws Exception {
        store.close();
        audit.close();
    }

    private KeyRotationService service(KeyRotationPolicy policy) {
        return new KeyRotationService(
                store,
                MASTER::getPrivate,
                policy,
                nanos::get,
                (id, rotated, fingerprint, reason) -> answered.add(id + " " + rotated + " " + reason));
    }

    private MinionSession session() {
        return sessions.open("web1", pub(OLD), PEER, 0);
    }

    private static RSAPublicKey pub(KeyPair pair) {
        return (RSAPublicKey) pair.getPublic();
    }

    /** A request for {@code session}'s minion to rotate to {@code next}, signed by {@code byOld} and {@code byNew}. */
    private static KeyRotate request(MinionSession session, KeyPair byOld, KeyPair next, KeyPair byNew) {
        byte[] signed = KeyRotations.request(
                session.sessionId().bytes(),
                "web1",
                pub(OLD).getEncoded(),
                next.getPublic().getEncoded());
        return new KeyRotate(
                next.getPublic().getEncoded(),
                Rsa.sign(byOld.getPrivate(), signed),
                Rsa.sign(byNew.getPrivate(), signed));
    }

    /** {@code session}'s minion rotates from {@link #OLD} to {@link #NEW}: answered rotated. */
    private static void rotatedToNew(KeyRotationService service, MinionSession session) {
        assertThat(service.rotate(session, request(session, OLD, NEW, NEW))
                        .orElseThrow()
                        .rotated())
                .isTrue();
    }

    private static boolean signedByMaster(MinionSession session, KeyRotateReply reply) {
        return Rsa.verify(
                MASTER.getPublic(), KeyRotations.reply(session.sessionId().bytes(), reply), reply.signature());
    }

    @Test
    void aRequestSignedByBothKeysRotatesAndIsAnsweredSignedByTheMaster() throws Exception {
        MinionSession session = session();

        KeyRotateReply reply = service(KeyRotationPolicy.ALLOW)
                .rotate(session, request(session, OLD, NEW, NEW))
                .orElseThrow();

        assertThat(reply.rotated()).isTrue();
        assertThat(reply.newFingerprint()).isEqualTo(Fingerprints.of(NEW.getPublic()));
        assertThat(signedByMaster(session, reply)).isTrue();
        assertThat(store.acceptedKey("web1")).contains(pub(NEW));
        assertThat(Files.readString(audit.file())).contains("\"key-rotated\"", "\"minion web1\"");
        assertThat(answered).singleElement().asString().startsWith("web1 rotated ");
    }

    @Test
    void aRequestSentAgainForTheKeyItRotatedToIsAnsweredRotatedAndWritesNothing() throws Exception {
        KeyRotationService service = service(KeyRotationPolicy.ALLOW);
        MinionSession session = session();
        rotatedToNew(service, session);
        nanos.addAndGet(KeyRotations.RESEND_AFTER.toNanos());

        // The minion had no answer (lost, or late) and asks again in the same session, signed by the old key.
        KeyRotateReply again =
                service.rotate(session, request(session, OLD, NEW, NEW)).orElseThrow();

        assertThat(again.rotated()).isTrue();
        assertThat(again.newFingerprint()).isEqualTo(Fingerprints.of(NEW.getPublic()));
        assertThat(again.reason()).isEqualTo("the new key is already the accepted key");
        assertThat(signedByMaster(session, again)).isTrue();
        assertThat(session.publicKey()).isEqualTo(pub(NEW));
        assertThat(store.acceptedKey("web1")).contains(pub(NEW));
        assertThat(Files.readString(audit.file())).containsOnlyOnce("\"key-rotated\"");
    }

    @Test
    void aRotationMakesTheNewKeyTheSessionsSoThatTheNextRotationInItIsSignedByThatKey() throws Exception {
        KeyRotationService service = service(KeyRotationPolicy.ALLOW);
        MinionSession session = session();
        rotatedToNew(service, session);
        // The ticket the minion asks for next names the session's key (ResumeService), as the store's does.
        assertThat(session.publicKey()).isEqualTo(pub(NEW));
        nanos.addAndGet(KeyRotationService.INTERVAL.toNanos());

        KeyPair third = TestKeys.pair(3);
        byte[] signed = KeyRotations.request(
                session.sessionId().bytes(),
                "web1",
                NEW.getPublic().getEncoded(),
                third.getPublic().getEncoded());
        KeyRotateReply again = service.rotate(
                        session,
                        new KeyRotate(
                                third.getPublic().getEncoded(),
                                Rsa.sign(NEW.getPrivate(), signed),
                                Rsa.sign(third.getPrivate(), signed)))
                .orElseThrow();

        assertThat(again.rotated()).as(again.reason()).isTrue();
        assertThat(store.acceptedKey("web1")).contains(pub(third));
        assertThat(session.publicKey()).isEqualTo(pub(third));
    }

    @Test
    void underKeyRotationPendingTheNewKeyWaitsAndTheAnswerSaysPendingSignedByTheMaster() throws Exception {
        MinionSession session = session();

        KeyRotateReply reply = service(KeyRotationPolicy.PENDING)
                .rotate(session, request(session, OLD, NEW, NEW))
                .orElseThrow();

        assertThat(reply.pending()).isTrue();
        assertThat(reply.rotated()).isFalse();
        assertThat(signedByMaster(session, reply)).isTrue();
        assertThat(store.acceptedKey("web1")).contains(pub(OLD));
        assertThat(session.publicKey()).as("the session's key").isEqualTo(pub(OLD));
        assertThat(store.pendingRotations()).containsEntry("web1", Fingerprints.of(NEW.getPublic()));
        assertThat(answered).singleElement().asString().startsWith("web1 pending ");
    }

    @Test
    void aRequestSignedByOneKeyOnlyIsRefusedAndChangesNothing() {
        MinionSession session = session();
        KeyPair stranger = TestKeys.pair(3);

        KeyRotateReply byOldOnly = service(KeyRotationPolicy.ALLOW)
                .rotate(session, request(session, OLD, NEW, stranger))
                .orElseThrow();
        KeyRotateReply byNewOnly = service(KeyRotationPolicy.ALLOW)
                .rotate(session, request(session, stranger, NEW, NEW))
                .orElseThrow();

        assertThat(byOldOnly.rotated()).isFalse();
        assertThat(byOldOnly.reason()).isEqualTo("the request is not signed by the new key");
        assertThat(byNewOnly.reason()).isEqualTo("the request is not signed by the old (accepted) key");
        assertThat(answered)
                .containsExactly(
                        "web1 refused the request is not signed by the new key",
                        "web1 refused the request is not signed by the old (accepted) key");
        assertThat(signedByMaster(session, byNewOnly)).isTrue();
        assertThat(store.acceptedKey("web1")).contains(pub(OLD));
    }

    @Test
    void aRequestReplayedInAnotherSessionDoesNotVerify() {
        MinionSession first = session();
        KeyRotate captured = request(first, OLD, NEW, NEW);
        MinionSession second = session();

        KeyRotateReply reply =
                service(KeyRotationPolicy.ALLOW).rotate(second, captured).orElseThrow();

        assertThat(reply.reason()).isEqualTo("the request is not signed by either key");
        assertThat(store.acceptedKey("web1")).contains(pub(OLD));
    }

    @Test
    void aWeakNewKeyOrOneHeldByAnotherIdOrAMasterThatDeniesIsRefusedWithTheReason() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(1024);
        KeyPair weak = generator.generateKeyPair();
        store.offer("web2", pub(NEW), PolicyVerdict.NONE);

        MinionSession session = session();
        KeyRotateReply weakReply = service(KeyRotationPolicy.ALLOW)
                .rotate(session, request(session, OLD, weak, weak))
                .orElseThrow();
        KeyRotateReply heldReply = service(KeyRotationPolicy.ALLOW)
                .rotate(session, request(session, OLD, NEW, NEW))
                .orElseThrow();
        KeyRotateReply deniedReply = service(KeyRotationPolicy.DENY)
                .rotate(session, request(session, OLD, TestKeys.pair(4), TestKeys.pair(4)))
                .orElseThrow();

        assertThat(weakReply.reason()).startsWith("the new key is not usable: ").contains("1024");
        assertThat(heldReply.reason()).isEqualTo("the new key is held by another id (same key as web2)");
        assertThat(deniedReply.reason()).isEqualTo("key rotation is denied by this master (key_rotation: deny)");
        assertThat(store.acceptedKey("web1")).contains(pub(OLD));
    }

    @Test
    void aStoreThatCannotSayWhetherItRecordedTheRotationLeavesTheRequestUnansweredNotRefused() {
        MinionSession session = session();
        AtomicBoolean lost = new AtomicBoolean(true);
        KeyStore failing = (KeyStore) Proxy.newProxyInstance(
                KeyStore.class.getClassLoader(), new Class<?>[] {KeyStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("rotate") && lost.get()) {
                        throw new UncheckedIOException(new IOException("connection lost during the commit"));
                    }
                    try {
                        return method.invoke(store, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        KeyRotationService service = new KeyRotationService(
                failing,
                MASTER::getPrivate,
                KeyRotationPolicy.ALLOW,
                nanos::get,
                (id, rotated, fingerprint, reason) -> answered.add(id + " " + rotated + " " + reason));

        // A refusal would make the minion drop a key the store may hold now: no answer at all, as if it were lost.
        assertThat(service.rotate(session, request(session, OLD, NEW, NEW))).isEmpty();
        assertThat(answered).isEmpty();
        // Asked again within the minute, it is not taken for a request answered already: judged on what the store
        // holds.
        lost.set(false);
        assertThat(service.rotate(session, request(session, OLD, NEW, NEW)))
                .hasValueSatisfying(reply -> assertThat(reply.rotated()).isTrue());
    }

    @Test
    void oneRequestAMinuteIsAnsweredAndTheNextOnePastItIs() {
        KeyRotationService service = service(KeyRotationPolicy.DENY);
        MinionSession session = session();

        assertThat(service.rotate(session, request(session, OLD, NEW, NEW))).isPresent();
        nanos.addAndGet(KeyRotationService.INTERVAL.toNanos() - 1);
        assertThat(service.rotate(session, request(session, OLD, NEW, NEW))).isEqualTo(Optional.empty());
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
        assertThat(service.rotate(session, request(session, OLD, NEW, NEW))).isPresent();
    }

    @Test
    void anAdminsAskFromAnotherProcessIsSentAtEveryHeartbeatUntilTheMinionRotates() throws Exception {
        KeyRotationService service = service(KeyRotationPolicy.ALLOW);
        MinionSession session = session();
        assertThat(service.ask(session)).as("nobody asked").isEmpty();

        try (FileKeyStore brineKey = FileKeyStore.open(KeyStoreOptions.builder(tmp.resolve("pki"))
                .auditLog(audit)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build())) {
            assertThat(brineKey.askRotation(List.of("web1"), "brine-key:admin"))
                    .singleElement()
                    .extracting(AdminResult::status)
                    .isEqualTo(AdminResult.Status.DONE);
            assertThat(brineKey.askRotation(List.of("web1"), "brine-key:admin"))
                    .as("asked twice")
                    .singleElement()
                    .extracting(AdminResult::status)
                    .isEqualTo(AdminResult.Status.UNCHANGED);
        }
        store.poll(); // the master's poll, every second
        assertThat(service.ask(session)).contains(new KeyRotateAsk(Fingerprints.of(OLD.getPublic())));
        assertThat(service.ask(session))
                .as("at every heartbeat until it rotates")
                .isPresent();

        rotatedToNew(service, session);
        assertThat(service.ask(session)).as("rotated").isEmpty();
        assertThat(store.rotationAsks()).as("kept to show it done").containsOnlyKeys("web1");
        assertThat(Files.readString(audit.file())).containsOnlyOnce("\"key-rotation-asked\"");
    }

    @Test
    void anAskIsRefusedForAKeyNotAcceptedOrASaltMinionsAndIsDroppedWithTheKey() throws Exception {
        store.offer("pend1", pub(NEW), PolicyVerdict.NONE);
        store.offer("salt1", pub(TestKeys.pair(3)), MinionKind.SALT, current -> PolicyVerdict.ACCEPT);
        KeyRotationService service = service(KeyRotationPolicy.ALLOW);
        MinionSession session = session();

        List<AdminResult> results = store.askRotation(List.of("ghost", "pend1", "salt1", "web1"), "admin");

        assertThat(results)
                .extracting(AdminResult::status)
                .containsExactly(
                        AdminResult.Status.NOT_FOUND,
                        AdminResult.Status.NOT_FOUND,
                        AdminResult.Status.REFUSED,
                        AdminResult.Status.DONE);
        assertThat(results.get(1).message())
                .isEqualTo("pend1: no accepted key (the id is pending); only an accepted" + " key is rotated");
        assertThat(results.get(2).message())
                .startsWith("salt1: a Salt minion cannot rotate its key")
                .contains("brine-key -d salt1");
        assertThat(store.rotationAsks()).containsOnlyKeys("web1");
        assertThat(service.ask(session)).isPresent();

        store.reject("web1", null, "admin");
        assertThat(store.rotationAsks())
                .as("rejected: the ask goes with the key")
                .isEmpty();
        assertThat(service.ask(session)).isEmpty();
        store.accept("web1", KeyState.REJECTED, null, "admin");
        assertThat(service.ask(session)).as("accepted again: not asked again").isEmpty();
    }
}
