package io.brine.master.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.brine.daemon.WarnInterval;
import io.brine.master.session.MinionSession;
import io.brine.master.session.PublishKeyring;
import io.brine.master.session.SessionTable;
import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Signed;
import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.Suite;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.Offer;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.store.policy.Admission;
import io.brine.store.policy.AuthAttempt;
import io.brine.store.policy.PolicyDecision;
import io.brine.transport.Peer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers auth requests (PROTOCOL.md, "Auth"). Runs on worker threads. Costs the master one RSA private-key
 * operation per answered request (its signature); checking the minion's signature and wrapping the session keys
 * are public-key operations. Requests that fail before a key decision get no answer at all, nor does a request not
 * signed by the key it offers, so garbage costs no private-key operation; every answer but an accepted key's is
 * paid from the {@link AuthWorkBudget}, and not sent when it is spent.
 */
public final class AuthService {

    private static final Logger LOG = LoggerFactory.getLogger(AuthService.class);
    /**
     * Nonces of every signed request checked, each kept until its timestamp can no longer pass the skew check (and
     * at least twice the skew): a replayed request must not displace a live session.
     */
    /** Pending answers logged once, then only changes (the audit log does the same: AuditedAuth). */
    private final RepeatedPending pendingLines = new RepeatedPending(RepeatedPending.DEFAULT_CAPACITY);

    private final Cache<NonceKey, Long> seenNonces;
    /** Nonces remembered at most (PROTOCOL.md section 10); about 200 bytes each. */
    static final int MAX_NONCES = 200_000;

    private final Admission admission;
    private final SessionTable sessions;
    private final PublishKeyring keyring;
    private final AuthAudit audit;
    private final Clock clock;
    private final WarnInterval badRequestWarnings;
    private static final long BAD_REQUEST_WARN_INTERVAL_MS = 10_000;
    /** How a pending answer's reason names the other ids holding the offered key. */
    private static final String SAME_KEY_AS = KeyListing.sameKeyAs(List.of());

    private final WarnInterval storeFailureWarnings;
    private final WarnInterval otherKindWarnings;
    private final WarnInterval reservedWarnings;
    private final WarnInterval rateLimitedWarnings;
    private final WarnInterval deniedWarnings;
    private final WarnInterval integrityWarnings;
    private final WarnInterval rejectedRetryWarnings;
    private final WarnInterval sameKeyWarnings;
    private final AcceptancePolicies policies;
    private final AtomicLong storeFailures = new AtomicLong();
    /** The publish port to name in an accepted reply to a peer: 0 where publications share its connection. */
    private final ToIntFunction<Peer> publishPort;

    private final int pendingRetrySeconds;
    private final MasterKeyring masterKeys;
    /** The newest request accepted or held pending per key, on disk: what outlives the nonces over a restart. */
    private final SeenAuthRequests seen;

    private final KeyStore keyStore;
    private final AuthWorkBudget budget;

    /** Failed writes (readiness) and audit lines that could not be written. */
    private final StoreWrites writes;

    /**
     * @param budget pays for every answer but an accepted key's
     * @param writes hears every failed write of this service's and writes its audit lines
     * @param masterKeys the master's keys, as brine-key rotates them (PROTOCOL.md 6.4); {@link MasterKeyring#fixed}
     *     for a master whose key does not change
     */
    public AuthService(
            KeyStore keyStore,
            AcceptancePolicies policies,
            SessionTable sessions,
            PublishKeyring keyring,
            AuthAudit audit,
            Clock clock,
            ToIntFunction<Peer> publishPort,
            int pendingRetrySeconds,
            SeenAuthRequests seen,
            AuthWorkBudget budget,
            StoreWrites writes,
            MasterKeyring masterKeys) {
        this.writes = writes;
        this.seen = seen;
        this.keyStore = keyStore;
        this.budget = budget;
        this.admission = new Admission(keyStore, policies);
        this.sessions = sessions;
        this.keyring = keyring;
        this.audit = audit;
        this.clock = clock;
        this.badRequestWarnings = new WarnInterval(clock, BAD_REQUEST_WARN_INTERVAL_MS);
        this.storeFailureWarnings = new WarnInterval(clock, BAD_REQUEST_WARN_INTERVAL_MS);
        this.otherKindWarnings = new WarnInterval(clock, BAD_REQUEST_WARN_INTERVAL_MS);
        this.reservedWarnings = new WarnInterval(clock, BAD_REQUEST_WARN_INTERVAL_MS);
        this.rateLimitedWarnings = new WarnInterval(clock, BAD_REQUEST_WARN_INTERVAL_MS);
        this.deniedWarnings = new WarnInterval(clock, BAD_REQUEST_WARN_INTERVAL_MS);
        this.integrityWarnings = new WarnInterval(clock, BAD_REQUEST_WARN_INTERVAL_MS);
        this.rejectedRetryWarnings = new WarnInterval(clock, BAD_REQUEST_WARN_INTERVAL_MS);
        this.sameKeyWarnings = new WarnInterval(clock, BAD_REQUEST_WARN_INTERVAL_MS);
        this.policies = policies;
        this.publishPort = publishPort;
        this.pendingRetrySeconds = pendingRetrySeconds;
        this.masterKeys = masterKeys;
        this.seenNonces = Caffeine.newBuilder()
                .maximumSize(MAX_NONCES)
                .ticker(() -> clock.millis() * 1_000_000L)
                .expireAfter(new Expiry<NonceKey, Long>() {
                    @Override
                    public long expireAfterCreate(NonceKey key, Long timestampMs, long nowNanos) {
                        long passableUntilMs = timestampMs + Timestamps.MAX_CLOCK_SKEW.toMillis();
                        long keepMs = Math.max(
                                passableUntilMs - clock.millis(),
                                Timestamps.MAX_CLOCK_SKEW.multipliedBy(2).toMillis());
                        return TimeUnit.MILLISECONDS.toNanos(Math.min(keepMs, Long.MAX_VALUE / 2_000_000L));
                    }

                    @Override
                    public long expireAfterUpdate(NonceKey key, Long value, long nowNanos, long currentNanos) {
                        return currentNanos;
                    }

                    @Override
                    public long expireAfterRead(NonceKey key, Long value, long nowNanos, long currentNanos) {
                        return currentNanos;
                    }
                })
                .build();
    }

    private record NonceKey(String id, byte[] nonce) {
        @Override
        public boolean equals(Object other) {
            return other instanceof NonceKey that && id.equals(that.id) && Arrays.equals(nonce, that.nonce);
        }

        @Override
        public int hashCode() {
            return 31 * id.hashCode() + Arrays.hashCode(nonce);
        }
    }

    /** What answering one auth request produced: the reply frame, and the session when the minion was accepted. */
    public record Outcome(byte[] reply, AuthStatus status, Optional<MinionSession> session) {}

    /**
     * Whether {@code request} offers the key the store holds as accepted for its id: where the dispatcher queues it
     * (its signature is not checked yet, so this is a lane, not a decision). In memory.
     */
    public boolean offersAcceptedKey(AuthRequest request) {
        if (!MinionIds.isValid(request.id())) {
            return false;
        }
        return keyStore.acceptedKey(request.id())
                .map(key -> Arrays.equals(key.getEncoded(), request.publicKey()))
                .orElse(false);
    }

    /**
     * Answers one decoded auth request; empty when it is not worth an answer (replayed, unsupported, not signed by
     * the key it offers, a newer request from its key opened the session meanwhile, or the {@link AuthWorkBudget}
     * spent). The
     * caller binds the session's minion to {@code peer} before it sends the reply.
     */
    public Optional<Outcome> handle(Peer peer, Signed<AuthRequest> signed) {
        AuthRequest request = signed.message();
        if (request.suite() != Suite.RSA_OAEP_PSS_AES256GCM) {
            LOG.debug("Auth from {} dropped: unsupported suite {}", peer.remoteAddress(), request.suite());
            return Optional.empty();
        }
        String id = request.id();
        if (!MinionIds.isValid(id)) {
            LOG.debug("Auth from {} dropped: invalid id {}", peer.remoteAddress(), MinionIds.printable(id));
            return Optional.empty();
        }
        RSAPublicKey key;
        try {
            // Its factors are checked by the key store, and only when it does not hold this key under this id yet.
            key = RsaKeys.offeredKeyFromDer(request.publicKey());
        } catch (KeyFormatException e) {
            return refuseBadRequest(request, peer, null, "bad public key: " + e.getMessage());
        }
        if (!signed.by(key)) {
            // No answer: only the key's holder could use one, and it does not send this (PROTOCOL.md 8.1 step 5).
            auditRefused(
                    id,
                    peer.remoteAddress(),
                    Fingerprints.of(key),
                    "bad signature: the request is not signed by the key it offers");
            budget.badSignature(peer.remoteAddress(), id);
            return Optional.empty();
        }
        String fingerprint = Fingerprints.of(key);
        long now = clock.millis();
        // Remembered whatever the answer, for as long as its timestamp could pass the skew check: a request refused
        // for being dated ahead must not be accepted when replayed once the master's clock has caught up.
        if (seenNonces.asMap().putIfAbsent(new NonceKey(id, request.nonce()), request.timestampMs()) != null) {
            LOG.info("Minion {} ({}): replayed auth request dropped", id, peer.remoteAddress());
            auditRefused(id, peer.remoteAddress(), fingerprint, "replayed auth request");
            return Optional.empty();
        }
        Optional<String> reserved = policies.reservedIds().problem(id);
        if (reserved.isPresent()) {
            // Before the store and the policies: nothing is filed under a reserved id, whoever asks.
            long suppressed = reservedWarnings.due();
            if (suppressed >= 0) {
                LOG.warn(
                        "Minion {} ({}): auth refused: {}{}",
                        id,
                        peer.remoteAddress(),
                        reserved.get(),
                        suppressed > 0 ? " (and " + suppressed + " such refusals not logged since the last line)" : "");
            }
            auditRefused(id, peer.remoteAddress(), fingerprint, reserved.get());
            return reply(request, peer, AuthStatus.REFUSED, reserved.get(), pendingRetrySeconds);
        }
        if (!Timestamps.withinSkew(request.timestampMs(), clock)) {
            String reason = "clock skew of "
                    + Duration.ofMillis(now - request.timestampMs()).toSeconds() + " s is more than "
                    + Timestamps.MAX_CLOCK_SKEW.toSeconds() + " s: check the minion's clock";
            LOG.warn("Minion {} ({}): auth refused: {}", id, peer.remoteAddress(), reason);
            auditRefused(id, peer.remoteAddress(), fingerprint, reason);
            return reply(request, peer, AuthStatus.REFUSED, reason, pendingRetrySeconds);
        }
        // Only a session of the same key holds a request back: one of another key (its id's key deleted and this one
        // accepted since, the removal listener not yet run) is no newer request of this minion's.
        Optional<MinionSession> live = sessions.byMinion(id);
        if (live.isPresent() && live.get().holds(key) && live.get().authTimestampMs() >= request.timestampMs()) {
            LOG.info(
                    "Minion {} ({}): auth request not newer than the one that opened its session dropped",
                    id,
                    peer.remoteAddress());
            auditRefused(id, peer.remoteAddress(), fingerprint, "auth request older than the live session's");
            return Optional.empty();
        }
        // The nonces above are forgotten by a restart; this is not (a captured request replayed after one).
        if (!seen.isNewer(id, fingerprint, request.timestampMs())) {
            LOG.info(
                    "Minion {} ({}): auth request not newer than one already taken from its key dropped (a replay, "
                            + "or the minion's clock was set back)",
                    id,
                    peer.remoteAddress());
            auditRefused(
                    id,
                    peer.remoteAddress(),
                    fingerprint,
                    "auth request not newer than one already taken " + "from its key");
            return Optional.empty();
        }

        // The store's one read for this request: policies asked only where they matter, a spend given back there.
        Admission.Admitted admitted;
        try {
            admitted = admission.admit(new AuthAttempt(
                    id,
                    key,
                    fingerprint,
                    request.claims(),
                    request.grant(),
                    request.token(),
                    peer.remoteAddress(),
                    clock.instant()));
        } catch (IllegalArgumentException e) {
            if (e.getCause() instanceof KeyFormatException bad) {
                return refuseBadRequest(request, peer, fingerprint, "bad public key: " + bad.getMessage());
            }
            throw e;
        } catch (UncheckedIOException e) {
            return storeFailed(request, peer, "the key store failed: " + e.getMessage());
        }
        KeyDecision decision = admitted.offer().decision();
        if (decision instanceof KeyDecision.Accepted || decision instanceof KeyDecision.Pending) {
            // On disk before the reply, so that no restart can make this request new again. Only for the key the
            // store holds for the id: anybody can sign requests with a key of their own, and must not move its time.
            try {
                seen.record(id, fingerprint, request.timestampMs());
            } catch (IOException e) {
                return storeFailed(request, peer, seen + ": " + e.getMessage());
            }
        }
        if (!(decision instanceof KeyDecision.Accepted)) {
            // An answer that grants nothing goes out whether or not its line is written (counted). An accept's line
            // is written once its session stands (answer): it says what came of it.
            writes.audit(
                    "brine auth",
                    id + " (" + peer.remoteAddress() + ")",
                    () -> audit.decided(id, peer.remoteAddress(), fingerprint, admitted.decision(), admitted.policy()));
        }
        return answer(request, peer, key, fingerprint, admitted, now);
    }

    private Optional<Outcome> answer(
            AuthRequest request,
            Peer peer,
            RSAPublicKey key,
            String fingerprint,
            Admission.Admitted admitted,
            long now) {
        String id = request.id();
        Offer offer = admitted.offer();
        PolicyDecision policy = admitted.policy();
        KeyDecision decision = offer.decision();
        if (!(decision instanceof KeyDecision.Pending)) {
            pendingLines.forget(id);
        }
        if (decision instanceof KeyDecision.Accepted accepted) {
            // The session holds the key store's instance of the same key: one parsed key per minion, not two
            // (about 1.2 KiB of heap per connected minion, BENCHMARKS.md).
            RSAPublicKey shared = offer.sameKey() ? offer.stored().orElseThrow().key() : key;
            Optional<MinionSession> opened = sessions.open(id, shared, peer, now, request.timestampMs());
            if (opened.isEmpty()) {
                // Another request from the key, as new or newer, opened the session since step 6 checked (a minion
                // that asked again, or a replay): the minion waits for that one's answer, so this one gets none.
                String reason = "another request from its key, as new or newer, opened its session meanwhile";
                LOG.info("Minion {} ({}): auth refused: {}; not answered", id, peer.remoteAddress(), reason);
                auditRefused(id, peer.remoteAddress(), fingerprint, reason);
                return Optional.empty();
            }
            MinionSession session = opened.get();
            KeyPair master = masterKeys.current();
            AuthReply reply = acceptedReply(request, session, master);
            // The decision may rest on the store's state just before the key was removed. Checked again once the
            // reply holds its generation (no store read: the store ends the key's tenure before it tells the
            // removal listener): a removal ended only later is followed by the removal listener (which closes
            // this session) and then a rotation, so the reply holds nothing made after.
            if (!offer.current()) {
                sessions.remove(session);
                LOG.info("Minion {} ({}): key removed while answering; refused", id, peer.remoteAddress());
                auditRefused(id, peer.remoteAddress(), fingerprint, "key removed while answering");
                return reply(request, peer, AuthStatus.REFUSED, "key removed while answering", pendingRetrySeconds);
            }
            // Written once the session stands and nothing but this line can refuse it: one true line per outcome,
            // and no session without its line.
            if (!writes.audit(
                    "brine auth",
                    id + " (" + peer.remoteAddress() + ")",
                    () -> audit.decided(id, peer.remoteAddress(), fingerprint, decision, policy))) {
                sessions.remove(session);
                return storeFailed(
                        request,
                        peer,
                        "the audit line of its accept cannot be written: "
                                + writes.problem().orElse("write failed"));
            }
            LOG.info(
                    "Minion {} ({}): accepted ({}){}",
                    id,
                    peer.remoteAddress(),
                    accepted.reason(),
                    policy.besideAnswer());
            // Signed last: whatever refused it above signed its own answer instead (one private-key operation).
            return Optional.of(new Outcome(sign(reply, master), AuthStatus.ACCEPTED, Optional.of(session)));
        } else if (decision instanceof KeyDecision.Pending pending) {
            if (pending.reason().contains(SAME_KEY_AS)) {
                // One key offered under several ids: a cloned host, or somebody else's key; an admin decides.
                sameKeyWarnings.warn(
                        LOG,
                        "Minion {} ({}): answered pending: {}, key {}{}",
                        id,
                        peer.remoteAddress(),
                        pending.reason(),
                        fingerprint,
                        policy.besideAnswer());
            } else if (!pendingLines.repeats(id, fingerprint, pending.reason())) { // once, then only changes
                LOG.info(
                        "Minion {} ({}): pending ({}), key {}{}",
                        id,
                        peer.remoteAddress(),
                        pending.reason(),
                        fingerprint,
                        policy.besideAnswer());
            }
            return reply(request, peer, AuthStatus.PENDING, pending.reason(), pendingRetrySeconds);
        } else if (decision instanceof KeyDecision.Rejected rejected) {
            boolean otherKey = offer.stored().isPresent() && !offer.sameKey();
            if (otherKey || request.grant() != null || request.token() != null) {
                // A rejected id tried again with what might get it in: worth an admin's look.
                rejectedRetryWarnings.warn(
                        LOG,
                        "Minion {} ({}): rejected id asked again with {}: rejected ({})",
                        id,
                        peer.remoteAddress(),
                        otherKey
                                ? "another key " + fingerprint + " (the rejected key is "
                                        + offer.stored().get().fingerprint() + ")"
                                : request.grant() != null ? "a grant" : "a token",
                        rejected.reason());
            } else {
                LOG.info("Minion {} ({}): rejected ({})", id, peer.remoteAddress(), rejected.reason());
            }
            return reply(request, peer, AuthStatus.REJECTED, rejected.reason(), 0);
        } else if (decision instanceof KeyDecision.Denied denied) {
            if (offer.stored().isEmpty()) {
                integrityWarnings.warn(
                        LOG,
                        "Minion {} ({}): denied, {}; offered key {} not stored",
                        id,
                        peer.remoteAddress(),
                        denied.reason(),
                        fingerprint);
            } else {
                deniedWarnings.warn(
                        LOG,
                        "Minion {} ({}): denied: offered key {} differs from the stored key {} "
                                + "({}); kept in minions_denied",
                        id,
                        peer.remoteAddress(),
                        fingerprint,
                        offer.stored().get().fingerprint(),
                        denied.reason());
            }
            return reply(request, peer, AuthStatus.DENIED, denied.reason(), 0);
        } else if (decision instanceof KeyDecision.Full full) {
            LOG.warn("Minion {} ({}): refused, store full ({})", id, peer.remoteAddress(), full.reason());
            return reply(request, peer, AuthStatus.FULL, full.reason(), pendingRetrySeconds);
        } else if (decision instanceof KeyDecision.OtherKind other) {
            // A Salt minion's key: never taken over by a brine auth, nor re-marked (an admin's act changes a kind).
            long suppressed = otherKindWarnings.due();
            if (suppressed >= 0) {
                LOG.warn(
                        "Minion {} ({}): auth refused: {}{}",
                        id,
                        peer.remoteAddress(),
                        other.reason(),
                        suppressed > 0 ? " (and " + suppressed + " such refusals not logged since the last line)" : "");
            }
            return reply(request, peer, AuthStatus.DENIED, other.reason(), 0);
        }
        throw new IllegalStateException("unknown key decision " + decision);
    }

    /** The accepted reply, not signed yet, carrying {@code master}'s public key. */
    private AuthReply acceptedReply(AuthRequest request, MinionSession session, KeyPair master) {
        PublishKeyring.Generation generation = keyring.current();
        byte[] publishKey = generation.key().bytes();
        byte[] requestKey = session.requestKey().bytes();
        try {
            AuthReply.Session granted = new AuthReply.Session(
                    session.sessionId().bytes(),
                    generation.number(),
                    Rsa.wrap(session.publicKey(), publishKey),
                    Rsa.wrap(session.publicKey(), requestKey),
                    publishPort.applyAsInt(session.peer()),
                    keyring.serialFloor());
            return new AuthReply(
                    Suite.RSA_OAEP_PSS_AES256GCM,
                    AuthStatus.ACCEPTED,
                    request.nonce(),
                    clock.millis(),
                    master.getPublic().getEncoded(),
                    "accepted",
                    0,
                    granted,
                    masterKeys.chain());
        } finally {
            Arrays.fill(publishKey, (byte) 0);
            Arrays.fill(requestKey, (byte) 0);
        }
    }

    /**
     * A bad key: a signed REFUSED bound to the request's nonce (PROTOCOL.md 8.1 step 4; paid from the auth work
     * budget), audited, and a WARN at most once per interval.
     */
    private Optional<Outcome> refuseBadRequest(AuthRequest request, Peer peer, String fingerprint, String reason) {
        long suppressed = badRequestWarnings.due();
        if (suppressed >= 0) {
            LOG.warn(
                    "Minion {} ({}): auth refused: {}{}",
                    request.id(),
                    peer.remoteAddress(),
                    reason,
                    suppressed > 0 ? " (and " + suppressed + " bad requests not logged since the last line)" : "");
        } else {
            LOG.debug("Minion {} ({}): auth refused: {}", request.id(), peer.remoteAddress(), reason);
        }
        auditRefused(request.id(), peer.remoteAddress(), fingerprint, reason);
        return reply(request, peer, AuthStatus.REFUSED, reason, pendingRetrySeconds);
    }

    /**
     * An auth request over its source's rate limit (PROTOCOL.md 8.1 step 3), for which the limiter left a "try later"
     * answer: REFUSED "try later" in {@code retryAfter} seconds, signed and bound to the request's nonce, paid from
     * the auth work budget. Only the key's holder hears it (its signature is checked, a public-key operation) and
     * once per nonce; nothing is read from or written to the key store, so nothing is decided.
     */
    public Optional<Outcome> tryLater(Peer peer, Signed<AuthRequest> signed, int retryAfter) {
        AuthRequest request = signed.message();
        if (request.suite() != Suite.RSA_OAEP_PSS_AES256GCM || !MinionIds.isValid(request.id())) {
            return Optional.empty();
        }
        RSAPublicKey key;
        try {
            key = RsaKeys.offeredKeyFromDer(request.publicKey());
        } catch (KeyFormatException e) {
            return Optional.empty(); // answered with the reason once it is under the rate
        }
        if (!signed.by(key)) {
            budget.badSignature(peer.remoteAddress(), request.id());
            return Optional.empty();
        }
        if (seenNonces.asMap().putIfAbsent(new NonceKey(request.id(), request.nonce()), request.timestampMs())
                != null) {
            return Optional.empty();
        }
        rateLimitedWarnings.warn(
                LOG,
                "Minion {} ({}): auth over the rate limit of its address (auth_rate_per_source, "
                        + "auth_burst): answered 'try later' in {} s",
                request.id(),
                peer.remoteAddress(),
                retryAfter);
        return reply(
                request,
                peer,
                AuthStatus.REFUSED,
                "the master is answering too many requests from this " + "address; try later",
                retryAfter);
    }

    /** A full or failing disk: expected, not a bug. The minion is told to try later; a WARN per interval at most. */
    private Optional<Outcome> storeFailed(AuthRequest request, Peer peer, String why) {
        long suppressed = storeFailureWarnings.due();
        if (suppressed >= 0) {
            LOG.warn(
                    "Minion {} ({}): auth answered 'try later': {}{}",
                    request.id(),
                    peer.remoteAddress(),
                    why,
                    suppressed > 0 ? " (and " + suppressed + " more such failures since the last line)" : "");
        }
        storeFailures.incrementAndGet();
        writes.failed(why);
        return reply(
                request,
                peer,
                AuthStatus.REFUSED,
                "the master cannot record keys now; try later",
                Math.max(pendingRetrySeconds, 1));
    }

    /** Auth requests answered "try later": the key store or the record of seen requests failed (a full disk). */
    public long storeFailures() {
        return storeFailures.get();
    }

    /** An audit line of a refusal: its answer goes out whether or not the line could be written. */
    private void auditRefused(String id, String remoteAddress, String fingerprint, String reason) {
        writes.audit(
                "brine auth",
                id + " (" + remoteAddress + ")",
                () -> audit.refused(id, remoteAddress, fingerprint, reason));
    }

    /** A signed answer without a session, paid from the auth work budget; empty when that is spent. */
    private Optional<Outcome> reply(AuthRequest request, Peer peer, AuthStatus status, String reason, int retryAfter) {
        if (!budget.trySpend(
                peer.remoteAddress(), "an auth answer (" + status.name().toLowerCase(Locale.ROOT) + ")")) {
            return Optional.empty();
        }
        KeyPair master = masterKeys.current();
        byte[] frame = sign(
                new AuthReply(
                        Suite.RSA_OAEP_PSS_AES256GCM,
                        status,
                        request.nonce(),
                        clock.millis(),
                        master.getPublic().getEncoded(),
                        reason,
                        retryAfter,
                        null,
                        masterKeys.chain()),
                master);
        return Optional.of(new Outcome(frame, status, Optional.empty()));
    }

    /** Signed by the pair whose public key the reply carries (the chain leads a minion pinned earlier to it). */
    private static byte[] sign(AuthReply reply, KeyPair master) {
        return Codec.encodeSigned(reply, master.getPrivate());
    }
}
