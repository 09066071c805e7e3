package io.brine.master.resume;

import io.brine.daemon.WarnInterval;
import io.brine.master.auth.SeenAuthRequests;
import io.brine.master.auth.StoreWrites;
import io.brine.master.session.MinionSession;
import io.brine.master.session.PublishKeyring;
import io.brine.master.session.Session;
import io.brine.master.session.SessionId;
import io.brine.master.session.SessionTable;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.Resumptions;
import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.Resumption;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.MinionKind;
import io.brine.transport.Peer;
import java.io.IOException;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Session resumption, the master's side (PROTOCOL.md 8.9): gives an accepted minion a ticket and its secret after a
 * full auth, and answers a ticket presented with the proof of its secret with a new session, with no RSA operation:
 * the ticket opens under a ticket key ({@link TicketKeys}), names the id and the fingerprint of the key it was
 * accepted with, and has not expired; the proof holds; the request is newer than every request taken from that key
 * (across restarts: {@link SeenAuthRequests}); and the key store still holds that very key as accepted, now and once
 * the session is open. Anything else is refused, and the minion then authenticates in full. Runs on the auth workers.
 */
public final class ResumeService {

    private static final Logger LOG = LoggerFactory.getLogger(ResumeService.class);
    private static final long REFUSAL_LOG_INTERVAL_MS = 10_000;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** What answering a resumption produced: the reply frame, and the session when it resumed. */
    public record Outcome(byte[] reply, Optional<MinionSession> session) {}

    private final TicketKeys keys;
    private final KeyStore keyStore;
    private final SessionTable sessions;
    private final PublishKeyring keyring;
    private final SeenAuthRequests seen;
    private final AuditLog audit;
    private final StoreWrites writes;
    private final Clock clock;
    private final ToIntFunction<Peer> publishPort;
    private final long lifetimeMs;
    private final WarnInterval refusals;
    private final AtomicLong resumed = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong tickets = new AtomicLong();
    private final ResumptionLog resumptions;

    /**
     * @param lifetimeMs how long after a full auth its tickets are honoured; at most {@link
     *     Resumptions#MAX_LIFETIME_MS}, 0 to give no tickets (and refuse every resumption)
     */
    public ResumeService(
            TicketKeys keys,
            KeyStore keyStore,
            SessionTable sessions,
            PublishKeyring keyring,
            SeenAuthRequests seen,
            AuditLog audit,
            StoreWrites writes,
            Clock clock,
            ToIntFunction<Peer> publishPort,
            long lifetimeMs) {
        if (lifetimeMs < 0 || lifetimeMs > Resumptions.MAX_LIFETIME_MS) {
            throw new IllegalArgumentException("a ticket lifetime of " + lifetimeMs + " ms");
        }
        this.keys = keys;
        this.keyStore = keyStore;
        this.sessions = sessions;
        this.keyring = keyring;
        this.seen = seen;
        this.audit = audit;
        this.writes = writes;
        this.clock = clock;
        this.publishPort = publishPort;
        this.lifetimeMs = lifetimeMs;
        this.refusals = new WarnInterval(clock, REFUSAL_LOG_INTERVAL_MS);
        this.resumptions = new ResumptionLog(
                LOG,
                clock,
                (delay, line) -> CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS)
                        .execute(line));
    }

    /**
     * Whether the request names an id with an accepted key and carries a ticket whose key id names a ticket key this
     * master holds: which auth lane it waits in. Naming an id costs a stranger nothing (ids are host names); a key id
     * is 8 random bytes it never saw. In memory, never waits.
     */
    public boolean forAcceptedId(Resumption.Request request) {
        return keys.holds(Resumptions.keyId(request.ticket()))
                && keyStore.acceptedKey(request.id()).isPresent();
    }

    /**
     * The ticket a minion asks for in its session, sealed under the session's request key and naming the session's
     * key: the one it was opened with, or the one a key rotation in it committed (the minion asks again once it has
     * switched keys). Empty when the request is not its session's minion's (no session by that id, a publisher's, a
     * box that does not open), when that key is not the id's accepted key now (a ticket for it would only be refused),
     * when resumption is off, or when the ticket key cannot be saved (the minion then authenticates in full next
     * time).
     */
    public Optional<byte[]> ticketFor(Resumption.TicketRequest request) {
        Optional<Session> session = sessions.bySessionId(SessionId.of(request.sessionId()));
        if (session.isEmpty()
                || !(session.get() instanceof MinionSession minion)
                || !Resumptions.ticketRequestHolds(minion.requestKey(), request)) {
            return Optional.empty();
        }
        return ticketFor(minion);
    }

    private Optional<byte[]> ticketFor(MinionSession session) {
        if (lifetimeMs == 0) {
            return Optional.empty();
        }
        String fingerprint = Fingerprints.of(session.publicKey());
        if (!keyStore.acceptedKey(session.minionId())
                .map(Fingerprints::of)
                .filter(fingerprint::equals)
                .isPresent()) {
            LOG.debug(
                    "Minion {}: no resumption ticket given: its session's key is not the accepted key now",
                    session.minionId());
            return Optional.empty();
        }
        long now = clock.millis();
        // A session opened by resumption gives tickets of the dates of the one it resumed with: resuming never extends
        // the 24 h since the full auth (or a rotation, which proved the new key as a full auth proves its key).
        MinionSession.TicketDates dates =
                session.resumedWith().orElse(new MinionSession.TicketDates(now, now + lifetimeMs));
        if (now >= dates.expiresMs()) {
            return Optional.empty();
        }
        try {
            Resumption.Grant grant = grant(session.minionId(), fingerprint, dates.issuedMs(), dates.expiresMs());
            byte[] frame = Resumptions.encode(Resumptions.sealTicket(
                    session.requestKey(), session.sessionId().bytes(), grant));
            tickets.incrementAndGet();
            return Optional.of(frame);
        } catch (IOException e) {
            writes.failed("ticket keys: " + e.getMessage());
            LOG.warn(
                    "Minion {}: no resumption ticket given: the ticket key cannot be saved: {}",
                    session.minionId(),
                    e.getMessage());
            return Optional.empty();
        }
    }

    /** Answers a resumption: a new session, or a refusal (the minion then authenticates in full); empty: no answer. */
    public Optional<Outcome> handle(Peer peer, Resumption.Request request) {
        String id = request.id();
        byte[] ticket = request.ticket();
        Optional<SessionKey> ticketKey = keys.find(Resumptions.keyId(ticket));
        if (ticketKey.isEmpty()) {
            return refuse(peer, request, null, "its ticket key is retired or unknown");
        }
        Resumption.Contents contents;
        try {
            contents = Resumptions.openContents(ticketKey.get(), ticket);
        } catch (CryptoException | MalformedException e) {
            return refuse(peer, request, null, "the ticket does not open (forged or damaged)");
        }
        if (!contents.id().equals(id)) {
            return refuse(peer, request, null, "the ticket is another minion's");
        }
        if (!Resumptions.proofHolds(contents.secret(), request)) {
            return refuse(peer, request, contents.fingerprint(), "the proof of the ticket's secret fails");
        }
        long now = clock.millis();
        if (now >= contents.expiresMs()) {
            return refuse(peer, request, contents.fingerprint(), "the ticket expired");
        }
        if (!Timestamps.withinSkew(request.timestampMs(), clock)) {
            return refuse(
                    peer,
                    request,
                    contents.fingerprint(),
                    "clock skew of more than " + Timestamps.MAX_CLOCK_SKEW.toSeconds() + " s");
        }
        Optional<RSAPublicKey> accepted = keyStore.acceptedKey(id);
        if (accepted.isEmpty()) {
            return refuse(peer, request, contents.fingerprint(), "the key is no longer accepted");
        }
        if (!Fingerprints.of(accepted.get()).equals(contents.fingerprint()) || keyStore.kind(id) != MinionKind.BRINE) {
            return refuse(peer, request, contents.fingerprint(), "the id's accepted key is another");
        }
        Optional<MinionSession> live = sessions.byMinion(id);
        if ((live.isPresent() && live.get().authTimestampMs() >= request.timestampMs())
                || !seen.isNewer(id, contents.fingerprint(), request.timestampMs())) {
            return refuse(
                    peer,
                    request,
                    contents.fingerprint(),
                    "a replay: not newer than a request already taken " + "from its key");
        }
        try {
            seen.record(id, contents.fingerprint(), request.timestampMs());
        } catch (IOException e) {
            writes.failed(seen + ": " + e.getMessage());
            return refuse(peer, request, contents.fingerprint(), "the master cannot record it now");
        }
        Optional<MinionSession> opened = sessions.open(id, accepted.get(), peer, now, request.timestampMs());
        if (opened.isEmpty()) {
            // Another request from the key, as new or newer, opened the session while this one was checked: the
            // minion waits for that one's answer, so this one gets none (as a full auth's, AuthService).
            refused(
                    peer,
                    request,
                    contents.fingerprint(),
                    "another request from its key, as new or newer, opened its session meanwhile",
                    "not answered");
            return Optional.empty();
        }
        MinionSession session = opened.get();
        session.resumedWith(new MinionSession.TicketDates(contents.issuedMs(), contents.expiresMs()));
        Resumption.Reply reply;
        try {
            reply = reply(request, contents, session);
        } catch (IOException e) {
            sessions.remove(session);
            writes.failed("ticket keys: " + e.getMessage());
            return refuse(peer, request, contents.fingerprint(), "the ticket key cannot be saved");
        }
        // The key may have been removed since the check above: the removal's own session deletion may have run
        // before this session existed. No session outlives its key.
        Optional<RSAPublicKey> still = keyStore.acceptedKey(id);
        if (still.isEmpty() || !still.get().equals(accepted.get())) {
            sessions.remove(session);
            return refuse(peer, request, contents.fingerprint(), "the key was removed while answering");
        }
        // Written once the session stands and nothing can refuse it but this line: one true line per outcome, and
        // no line, no session.
        if (!writes.audit(
                "brine resume",
                id + " (" + peer.remoteAddress() + ")",
                () -> audit.record(AuditEvent.builder("auth-resumed", "master")
                        .id(id)
                        .fingerprint(contents.fingerprint())
                        .reason("resumed with a ticket")
                        .source(peer.remoteAddress())
                        .build()))) {
            sessions.remove(session);
            return refuse(peer, request, contents.fingerprint(), "its audit line cannot be written");
        }
        resumed.incrementAndGet();
        resumptions.resumed(id, peer.remoteAddress());
        return Optional.of(new Outcome(Resumptions.encode(reply), Optional.of(session)));
    }

    /** Sessions resumed, and resumptions refused, since the start. */
    public long resumed() {
        return resumed.get();
    }

    /** Tickets given after full auths and key rotations, since the start. */
    public long tickets() {
        return tickets.get();
    }

    public long refused() {
        return refused.get();
    }

    private Resumption.Reply reply(Resumption.Request request, Resumption.Contents contents, MinionSession session)
            throws IOException {
        PublishKeyring.Generation generation = keyring.current();
        byte[] publishKey = generation.key().bytes();
        byte[] requestKey = session.requestKey().bytes();
        try {
            // The next ticket keeps the expiry of the full auth it descends from: resuming never extends it.
            Resumption.Grant next =
                    grant(contents.id(), contents.fingerprint(), contents.issuedMs(), contents.expiresMs());
            return Resumptions.sealReply(
                    contents.secret(),
                    request.nonce(),
                    new Resumption.Resumed(
                            session.sessionId().bytes(),
                            generation.number(),
                            publishKey,
                            requestKey,
                            publishPort.applyAsInt(session.peer()),
                            keyring.serialFloor(),
                            next));
        } finally {
            Arrays.fill(publishKey, (byte) 0);
            Arrays.fill(requestKey, (byte) 0);
        }
    }

    private Resumption.Grant grant(String id, String fingerprint, long issuedMs, long expiresMs) throws IOException {
        TicketKeys.Key key = keys.current();
        byte[] secret = new byte[Resumptions.SECRET_LENGTH];
        RANDOM.nextBytes(secret);
        byte[] ticket = Resumptions.sealContents(
                key.key(),
                key.id(),
                new Resumption.Contents(id, fingerprint, keyring.current().number(), issuedMs, expiresMs, secret));
        return new Resumption.Grant(ticket, expiresMs, secret);
    }

    /**
     * A refusal: unauthenticated (it grants nothing, and all a minion does with it is a full auth, which anybody on
     * the path can force by dropping frames), audited, logged at most once per interval with a count.
     */
    private Optional<Outcome> refuse(Peer peer, Resumption.Request request, String fingerprint, String reason) {
        refused(peer, request, fingerprint, reason, "it authenticates in full");
        return Optional.of(
                new Outcome(Resumptions.encode(new Resumption.Reply(request.nonce(), null)), Optional.empty()));
    }

    /** Counts, logs and audits a refusal; {@code then} says what follows it. */
    private void refused(Peer peer, Resumption.Request request, String fingerprint, String reason, String then) {
        refused.incrementAndGet();
        long suppressed = refusals.due();
        if (suppressed >= 0) {
            LOG.info(
                    "Minion {} ({}): resumption refused: {}; {}{}",
                    request.id(),
                    peer.remoteAddress(),
                    reason,
                    then,
                    suppressed > 0 ? " (and " + suppressed + " more refusals since the last line)" : "");
        }
        writes.audit(
                "brine resume",
                request.id() + " (" + peer.remoteAddress() + ")",
                () -> audit.record(AuditEvent.builder("auth-refused", "master")
                        .id(request.id())
                        .fingerprint(fingerprint)
                        .reason("resumption refused: " + reason)
                        .source(peer.remoteAddress())
                        .build()));
    }
}
