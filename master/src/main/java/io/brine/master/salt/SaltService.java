package io.brine.master.salt;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.brine.daemon.WarnInterval;
import io.brine.master.auth.AuthAudit;
import io.brine.master.auth.AuthWorkBudget;
import io.brine.master.auth.RepeatedPending;
import io.brine.master.auth.StoreWrites;
import io.brine.master.jobs.ActiveJobs;
import io.brine.master.publish.GrainsStore;
import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.salt.Crypticle;
import io.brine.protocol.salt.SaltAuthReply;
import io.brine.protocol.salt.SaltAuthRequest;
import io.brine.protocol.salt.SaltAuthResponder;
import io.brine.protocol.salt.SaltAuthResponder.Decision;
import io.brine.protocol.salt.SaltCommand;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltPublishHello;
import io.brine.protocol.salt.SaltReplies;
import io.brine.protocol.salt.SaltRequest;
import io.brine.protocol.salt.SaltRsa;
import io.brine.protocol.salt.SaltSessionRequest;
import io.brine.protocol.salt.SaltValue;
import io.brine.protocol.salt.SaltValues;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.Offer;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.store.policy.Admission;
import io.brine.store.policy.AuthAttempt;
import io.brine.transport.DropLog;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves stock Salt minions (SALT.md §7): {@code _auth} into the same key store, policies and audit as brine
 * minions, and the session requests a minion sends once accepted. Runs on the dispatcher's worker pools; every
 * answer goes to the request's {@link SaltReplyPath}. Nothing but {@code _auth} is served without a session key
 * (CVE-2020-11651); the minion id of a session request is the one whose session key opens it, and its {@code tok}
 * must verify with that id's key as the store holds it now, so a removed minion is refused even while its session
 * key lingers. {@code _auth} is unsigned (it proves nothing about the private key): it is offered to the store as a
 * Salt minion's, so an id whose key a brine minion filed is refused, never re-marked (PROTOCOL.md 9.1).
 */
public final class SaltService {

    private static final Logger LOG = LoggerFactory.getLogger(SaltService.class);
    private static final SaltValue BAD_LOAD = new SaltAuthReply.BadLoad().encode(null);
    private static final byte[] TOKEN_MESSAGE = "salt".getBytes(StandardCharsets.US_ASCII);
    private static final SaltValue EMPTY_PILLAR = SaltValue.Map.builder().build();
    private static final long OTHER_KIND_WARN_INTERVAL_MS = 10_000;

    /** Pending answers logged once, then only changes (the audit log does the same: AuditedAuth). */
    private final RepeatedPending pendingLines = new RepeatedPending(RepeatedPending.DEFAULT_CAPACITY);

    private final KeyStore keyStore;
    private final Admission admission;
    private final SaltKeys keys;
    private final AuthAudit audit;
    /** Failed writes (readiness) and audit lines that could not be written. */
    private final StoreWrites writes;

    private final GrainsStore grains;
    private final ActiveJobs jobs;
    private final Clock clock;
    private final long maxReturnBytes;
    private final DropLog drops;
    private final WarnInterval otherKindWarnings;
    private final AuthWorkBudget budget;
    private final WarnInterval reservedWarnings;
    private final WarnInterval deniedWarnings;
    private final AcceptancePolicies policies;
    private final SaltFileServer files;
    /** Session request nonces seen lately, per minion: a replayed request is refused (DESIGN §4.4). */
    private final Cache<String, Boolean> seenNonces = Caffeine.newBuilder()
            .maximumSize(500_000)
            .expireAfterWrite(Duration.ofMinutes(15))
            .build();

    /**
     * @param maxReturnBytes {@code max_return_bytes}: a {@code _return} whose encrypted load is larger is stored as a
     *     refusal with its reason (and answered, so the minion does not resend it), as a brine minion's is
     * @param budget pays for every signed {@code _auth} answer but an accepted one
     * @param files answers the file server requests (states, {@code cp.*}) from {@code file_roots}
     */
    public SaltService(
            KeyStore keyStore,
            AcceptancePolicies policies,
            SaltKeys keys,
            AuthAudit audit,
            GrainsStore grains,
            ActiveJobs jobs,
            long maxReturnBytes,
            Clock clock,
            AuthWorkBudget budget,
            StoreWrites writes,
            SaltFileServer files) {
        this.writes = writes;
        this.files = files;
        this.keyStore = keyStore;
        this.budget = budget;
        this.maxReturnBytes = maxReturnBytes;
        this.admission = new Admission(keyStore, policies);
        this.keys = keys;
        this.audit = audit;
        this.grains = grains;
        this.jobs = jobs;
        this.clock = clock;
        this.drops = new DropLog(LOG, DropLog.INTERVAL, clock);
        this.otherKindWarnings = new WarnInterval(clock, OTHER_KIND_WARN_INTERVAL_MS);
        this.reservedWarnings = new WarnInterval(clock, OTHER_KIND_WARN_INTERVAL_MS);
        this.deniedWarnings = new WarnInterval(clock, OTHER_KIND_WARN_INTERVAL_MS);
        this.policies = policies;
    }

    /** One request, already read with its bounds on the transport thread. */
    public void handle(SaltRequest request, SaltReplyPath path) {
        if (request instanceof SaltRequest.Auth auth) {
            SaltValue answer = auth(auth, path);
            if (answer != null) {
                path.reply(answer);
            }
        } else if (request instanceof SaltRequest.Encrypted encrypted) {
            session(encrypted, path);
        } else if (request instanceof SaltRequest.Clear clear) {
            // As a Salt master without that method (MWorker._handle_clear): an empty map, in the clear.
            LOG.info(
                    "Salt request from {}: clear command {} is not served",
                    path.remoteAddress(),
                    MinionIds.printable(clear.cmd()));
            path.reply(SaltReplies.UNSERVED);
        }
    }

    // ---------------------------------------------------------------- _auth

    private SaltValue auth(SaltRequest.Auth request, SaltReplyPath path) {
        SaltAuthResponder responder = keys.responder();
        SaltAuthRequest load = request.load();
        String id = load.id();
        String from = path.remoteAddress();
        if (request.version() < SaltAuthResponder.MINIMUM_VERSION
                || load.signing().isEmpty()) {
            LOG.info(
                    "Salt minion {} ({}): auth version {} or algorithm {} not served",
                    MinionIds.printable(id),
                    from,
                    request.version(),
                    MinionIds.printable(load.sigAlgo()));
            return encode(responder, responder.respond(request, Decision.REJECTED, null), from);
        }
        if (!MinionIds.isValid(id)) {
            LOG.info("Salt minion {} ({}): auth refused: invalid id", MinionIds.printable(id), from);
            auditRefused(MinionIds.printable(id), from, null, "invalid minion id");
            return encode(responder, responder.respond(request, Decision.REJECTED, null), from);
        }
        Optional<String> reserved = policies.reservedIds().problem(id);
        if (reserved.isPresent()) {
            // As for an invalid id: refused before the store and the policies, nothing filed.
            long suppressed = reservedWarnings.due();
            if (suppressed >= 0) {
                LOG.warn(
                        "Salt minion {} ({}): auth refused: {}{}",
                        id,
                        from,
                        reserved.get(),
                        suppressed > 0 ? " (and " + suppressed + " such refusals not logged since the last line)" : "");
            }
            auditRefused(id, from, null, reserved.get());
            return encode(responder, responder.respond(request, Decision.REJECTED, null), from);
        }
        RSAPublicKey key;
        try {
            // Its factors are checked by the key store, and only when it does not hold this key under this id yet.
            key = Pem.readOfferedPublicKey(load.pub());
        } catch (KeyFormatException e) {
            LOG.info("Salt minion {} ({}): auth refused: {}", id, from, e.getMessage());
            auditRefused(id, from, null, e.getMessage());
            return encode(responder, responder.respond(request, Decision.REJECTED, null), from);
        }
        String fingerprint = Fingerprints.of(key);
        Map<String, Object> claims = new LinkedHashMap<>();
        load.autosignGrains().ifPresent(g -> {
            if (SaltValues.toPlain(g) instanceof Map<?, ?> map) {
                map.forEach((k, v) -> claims.put(String.valueOf(k), v));
            }
        });
        Admission.Admitted admitted;
        try {
            // Filed as a Salt minion's key, or refused when the id holds a brine minion's (KeyStore#offer).
            admitted = admission.admit(
                    new AuthAttempt(id, key, fingerprint, claims, null, null, from, clock.instant()), MinionKind.SALT);
        } catch (IllegalArgumentException e) {
            if (!(e.getCause() instanceof KeyFormatException bad)) {
                throw e;
            }
            // The key store's factor check: refused as a key that does not parse is.
            LOG.info("Salt minion {} ({}): auth refused: {}", id, from, bad.getMessage());
            auditRefused(id, from, fingerprint, bad.getMessage());
            return encode(responder, responder.respond(request, Decision.REJECTED, null), from);
        } catch (UncheckedIOException e) {
            // A full or failing disk, as for brine minions: Salt's "pending" makes the minion ask again later.
            LOG.warn("Salt minion {} ({}): answered pending: the key store failed: {}", id, from, e.getMessage());
            writes.failed(e.getMessage());
            return encode(responder, responder.respond(request, Decision.PENDING, null), from);
        }
        Offer offer = admitted.offer();
        KeyDecision decision = offer.decision();
        if (!(decision instanceof KeyDecision.Accepted)) {
            // An answer that grants nothing goes out whether or not its line is written (counted). An accept's line
            // is written once its key is checked again below: it says what came of it (as for brine minions).
            writes.audit(
                    "Salt _auth",
                    id + " (" + from + ")",
                    () -> audit.decided(id, from, fingerprint, admitted.decision(), admitted.policy()));
        }
        if (!(decision instanceof KeyDecision.Pending)) {
            pendingLines.forget(id);
        }
        if (decision instanceof KeyDecision.Accepted accepted) {
            Crypticle session = keys.sessionFor(id);
            SaltAuthReply reply = responder.respond(request, Decision.ACCEPTED, session, key);
            if (!offer.current()) {
                keys.drop(id);
                LOG.info("Salt minion {} ({}): key removed while answering; refused", id, from);
                auditRefused(id, from, fingerprint, "key removed while answering");
                return encode(responder, responder.respond(request, Decision.REJECTED, null), from);
            }
            if (!(reply instanceof SaltAuthReply.Accepted)) {
                // The key is accepted but the answer grants nothing: an encryption algorithm not served (Salt's "bad
                // enc algo"), which anyone holding the public key can ask for. Audited as the refusal it is.
                String reason = reply instanceof SaltAuthReply.BadAlgorithm
                        ? "encryption algorithm " + MinionIds.printable(load.encAlgo()) + " not served"
                        : "the answer grants nothing";
                LOG.info("Salt minion {} ({}): auth refused: {}", id, from, reason);
                auditRefused(id, from, fingerprint, reason);
                return encode(responder, reply, from);
            }
            if (!writes.audit(
                    "Salt _auth",
                    id + " (" + from + ")",
                    () -> audit.decided(id, from, fingerprint, decision, admitted.policy()))) {
                // No session without its audit line (as for brine minions): "pending" makes the minion ask again
                // later. The session key stays made (the same for every sign-in of the id), told to nobody.
                return encode(responder, responder.respond(request, Decision.PENDING, null), from);
            }
            path.bind(id);
            LOG.info(
                    "Salt minion {} ({}): accepted ({}){}",
                    id,
                    from,
                    accepted.reason(),
                    admitted.policy().besideAnswer());
            return encode(responder, reply, from);
        } else if (decision instanceof KeyDecision.Pending pending) {
            if (!pendingLines.repeats(id, fingerprint, pending.reason())) { // once, then only changes
                LOG.info(
                        "Salt minion {} ({}): pending ({}), key {}{}",
                        id,
                        from,
                        pending.reason(),
                        fingerprint,
                        admitted.policy().besideAnswer());
            }
            return encode(responder, responder.respond(request, Decision.PENDING, null), from);
        } else if (decision instanceof KeyDecision.Rejected rejected) {
            LOG.info("Salt minion {} ({}): rejected ({})", id, from, rejected.reason());
            return encode(responder, responder.respond(request, Decision.REJECTED, null), from);
        } else if (decision instanceof KeyDecision.Denied denied) {
            if (offer.stored().isEmpty()) {
                deniedWarnings.warn(
                        LOG,
                        "Salt minion {} ({}): denied, {}; offered key {} not stored",
                        id,
                        from,
                        denied.reason(),
                        fingerprint);
            } else {
                deniedWarnings.warn(
                        LOG,
                        "Salt minion {} ({}): denied: offered key {} differs from the stored key {} "
                                + "({}); kept in minions_denied",
                        id,
                        from,
                        fingerprint,
                        offer.stored().get().fingerprint(),
                        denied.reason());
            }
            return encode(responder, responder.respond(request, Decision.DENIED, null), from);
        } else if (decision instanceof KeyDecision.Full full) {
            LOG.warn("Salt minion {} ({}): refused, store full ({})", id, from, full.reason());
            return encode(responder, responder.respond(request, Decision.FULL, null), from);
        } else if (decision instanceof KeyDecision.OtherKind other) {
            // Salt's _auth proves nothing about the private key: a sign-in with a brine minion's (public) key must
            // not make its jobs go out in Salt's envelope. No session key is made, nothing is marked.
            long suppressed = otherKindWarnings.due();
            if (suppressed >= 0) {
                LOG.warn(
                        "Salt minion {} ({}): auth refused: {}{}",
                        id,
                        from,
                        other.reason(),
                        suppressed > 0 ? " (and " + suppressed + " such refusals not logged since the last line)" : "");
            }
            return encode(responder, responder.respond(request, Decision.REJECTED, null), from);
        }
        throw new IllegalStateException("unknown key decision " + decision);
    }

    /**
     * The reply as sent, or null for none: a signed answer but an accepted one (pending, refused, full) is paid from
     * the auth work budget, since {@code _auth} proves nothing about its sender; Salt's minion takes the silence for
     * a timeout and asks again.
     */
    private SaltValue encode(SaltAuthResponder responder, SaltAuthReply reply, String from) {
        if (reply instanceof SaltAuthReply.Answer && !budget.trySpend(from, "a Salt auth answer")) {
            return null;
        }
        return reply.encode(responder.master().getPrivate()); // the key its pub_key names
    }

    // ---------------------------------------------------------------- TCP publish hello

    /**
     * The first frame of a Salt TCP publish connection ({@link SaltPublishHello}, SALT.md §6): it names the minion
     * and proves it with its {@code tok} (X9.31 of {@code salt} by the key the store holds as accepted now), sealed
     * with the current {@code aes} key. Proven, the connection takes that minion's publications. A hello whose
     * load does not open with the current key (sealed with the key before a restart: Salt 3006/3007 send one from
     * the publish channel they open after a restart, before signing in again) keeps its connection, unbound, as
     * Salt's master does: it takes the envelopes of Salt minions with no proven connection, and the minion, failing
     * their MAC, signs in again and opens them. Closing it instead made those minions lose the master a second
     * time, and 3007.14 then took no publication. Any other refusal closes the connection; the minion reconnects,
     * signs in again and sends a new hello.
     */
    public void hello(SaltValue body, SaltReplyPath path) {
        SaltPublishHello hello;
        try {
            hello = SaltPublishHello.open(body, keys.aes(), SaltLimits.UNAUTHENTICATED);
        } catch (CryptoException e) {
            LOG.debug(
                    "Salt publish connection from {}: hello not sealed with the current aes key ({}): kept unbound",
                    path.remoteAddress(),
                    e.getMessage());
            path.keepUnproven();
            return;
        } catch (MalformedException e) {
            LOG.debug("Salt publish connection from {}: hello refused: {}", path.remoteAddress(), e.getMessage());
            path.disconnect();
            return;
        }
        String id = hello.id();
        if (!MinionIds.isValid(id)) {
            LOG.info(
                    "Salt publish connection from {}: hello refused: invalid id {}",
                    path.remoteAddress(),
                    MinionIds.printable(id));
            path.disconnect();
            return;
        }
        Optional<RSAPublicKey> key = keyStore.acceptedKey(id);
        if (key.isEmpty()
                || keyStore.kind(id) != MinionKind.SALT
                || !SaltRsa.x931Verify(key.get(), TOKEN_MESSAGE, hello.tok())) {
            LOG.info(
                    "Salt minion {} ({}): publish connection refused: its key is not accepted as a Salt minion's",
                    id,
                    path.remoteAddress());
            path.disconnect();
            return;
        }
        path.bind(id);
        LOG.debug("Salt minion {} ({}): publish connection (TCP) bound", id, path.remoteAddress());
    }

    // ---------------------------------------------------------------- session requests

    private void session(SaltRequest.Encrypted request, SaltReplyPath path) {
        String id = request.id(); // validated by the decoder; proves nothing until the load opens
        Optional<Crypticle> session = keys.session(id);
        if (session.isEmpty()) {
            // "bad load" fails the minion's MAC check: it signs in again.
            LOG.debug("Salt request from {} names {} without a session: bad load", path.remoteAddress(), id);
            path.reply(BAD_LOAD);
            return;
        }
        SaltSessionRequest opened;
        try {
            opened = SaltSessionRequest.open(request, session.get(), SaltLimits.SESSION_LOAD);
        } catch (CryptoException | MalformedException e) {
            LOG.debug("Salt minion {} ({}): request refused: {}", id, path.remoteAddress(), e.getMessage());
            path.reply(BAD_LOAD);
            return;
        }
        Optional<RSAPublicKey> key = keyStore.acceptedKey(id);
        if (key.isEmpty()
                || keyStore.kind(id) != MinionKind.SALT
                || !SaltRsa.x931Verify(key.get(), TOKEN_MESSAGE, opened.tok())) {
            keys.drop(id);
            LOG.info(
                    "Salt minion {} ({}): request refused: its key is not accepted as a Salt minion's",
                    id,
                    path.remoteAddress());
            path.reply(BAD_LOAD);
            return;
        }
        if (seenNonces.asMap().putIfAbsent(id + "/" + opened.nonce(), Boolean.TRUE) != null) {
            LOG.info("Salt minion {} ({}): replayed request refused", id, path.remoteAddress());
            path.reply(BAD_LOAD);
            return;
        }
        path.bind(id);
        Crypticle sessionKey = session.get();
        String nonce = opened.nonce();
        SaltCommand command = opened.command();
        if (command instanceof SaltCommand.Pillar pillar) {
            pillar.grains().ifPresent(g -> {
                if (SaltValues.toPlain(g) instanceof Map<?, ?> map) {
                    Map<String, Object> plain = new LinkedHashMap<>();
                    map.forEach((k, v) -> plain.put(String.valueOf(k), v));
                    grains.put(id, plain);
                }
            });
            SaltRsa.Encryption enc = SaltRsa.Encryption.named(request.encAlgo()).orElse(null);
            SaltRsa.Signing sig = SaltRsa.Signing.named(request.sigAlgo()).orElse(null);
            if (enc == null || sig == null) {
                path.reply(BAD_LOAD);
                return;
            }
            path.reply(SaltReplies.privately(
                    "pillar",
                    EMPTY_PILLAR,
                    nonce,
                    key.get(),
                    enc,
                    keys.responder().master().getPrivate(),
                    sig));
        } else if (command instanceof SaltCommand.MinionEvent) {
            path.reply(SaltReplies.sealed(sessionKey, nonce, SaltValue.nil()));
        } else if (command instanceof SaltCommand.RegisterResources) {
            path.reply(SaltReplies.sealed(sessionKey, nonce, SaltValue.bool(true)));
        } else if (command instanceof SaltCommand.Return ret) {
            onReturn(
                    id,
                    ret,
                    request.load().length,
                    path.remoteAddress(),
                    () -> path.reply(SaltReplies.sealed(sessionKey, nonce, SaltValue.nil())));
        } else if (command instanceof SaltCommand.FileRequest file) {
            files.serve(
                    id, path.remoteAddress(), file, value -> path.reply(SaltReplies.sealed(sessionKey, nonce, value)));
        } else if (command instanceof SaltCommand.Other other) {
            LOG.info(
                    "Salt minion {} ({}): command {} is not served; answered as Salt does ({{}})",
                    id,
                    path.remoteAddress(),
                    MinionIds.printable(other.cmd()));
            path.reply(SaltReplies.sealed(sessionKey, nonce, SaltReplies.UNSERVED));
        }
    }

    private void onReturn(String id, SaltCommand.Return ret, int size, String from, Runnable ack) {
        if (size > maxReturnBytes) {
            drops.dropped(from, "Salt minion " + id + ": a return over max_return_bytes (" + maxReturnBytes + ")");
            jobs.onReturn(id, ActiveJobs.oversized(ret.jid(), ret.fun(), size, maxReturnBytes, 0), ack);
            return;
        }
        int retcode = ret.retcode().map(Long::intValue).orElse(0);
        boolean success = ret.success().orElse(retcode == 0);
        Object value = SaltValues.toPlain(ret.ret());
        jobs.onReturn(id, new SessionMessage.Return(ret.jid(), ret.fun(), value, retcode, success, 0), ack);
    }

    /** An audit line of a refusal: its answer goes out whether or not the line could be written. */
    private void auditRefused(String id, String from, String fingerprint, String reason) {
        writes.audit("Salt _auth", id + " (" + from + ")", () -> audit.refused(id, from, fingerprint, reason));
    }
}
