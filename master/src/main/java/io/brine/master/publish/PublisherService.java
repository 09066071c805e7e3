package io.brine.master.publish;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.files.AtomicFiles;
import io.brine.master.auth.AuthWorkBudget;
import io.brine.master.auth.StoreWrites;
import io.brine.master.jobs.Delivery;
import io.brine.master.jobs.JobIds;
import io.brine.master.jobs.JobRecord;
import io.brine.master.jobs.StoredReturn;
import io.brine.master.session.PublisherSession;
import io.brine.master.session.SessionTable;
import io.brine.protocol.MinionIds;
import io.brine.protocol.RootPublisher;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Signed;
import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.ClientAuth;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.Suite;
import io.brine.protocol.targeting.Glob;
import io.brine.protocol.targeting.Nodegroups;
import io.brine.protocol.targeting.Target;
import io.brine.protocol.targeting.TargetException;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.transport.Peer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishers: the local administrator, proven by the key in {@code cachedir/root.pem} that only the master's user
 * can read (Salt's {@code .root_key}), and remote publishers registered as {@code pki_dir/publishers/NAME} with an
 * entry in {@code publisher_acl}. A publisher authenticates like a minion (its own signed request, a signed reply
 * carrying a request key wrapped for it) and then speaks in sealed session frames, so nothing it sends can be
 * replayed: its session is in the one {@link SessionTable}, and the dispatcher hands this service what it asks.
 * Every refusal names its reason and is audited.
 */
public final class PublisherService {

    private static final Logger LOG = LoggerFactory.getLogger(PublisherService.class);
    public static final String PUBLISHERS_DIR = "publishers";
    private static final int MAX_LIST = 1000;

    private final Path publishersDir;
    private final RSAPublicKey rootKey;
    private final Map<String, MasterConfig.PublisherAcl> acls;
    private final Nodegroups nodegroups;
    private final SessionTable sessions;
    private final JobPublisher jobs;
    private final Supplier<KeyPair> masterKeys;
    private final AuditLog audit;
    /** Failed writes (readiness) and audit lines that could not be written. */
    private final StoreWrites writes;

    private final Clock clock;
    private final AuthWorkBudget budget;
    /**
     * Nonces of every signed request checked, whatever the answer, each kept until its timestamp can no longer pass
     * the skew check (and at least twice the skew), as for minions (AuthService): a request refused for being dated
     * ahead must not be accepted when replayed once the master's clock has caught up.
     */
    private final Cache<String, Long> seenNonces;
    /** Publisher nonces remembered at most (PROTOCOL.md section 10). */
    static final int MAX_NONCES = 100_000;
    /** The answer to a publisher whose sign-in cannot be audited now (a full disk): signed, and no session. */
    public static final String TRY_LATER = "the master cannot write its audit log now; try later";

    /**
     * @param nodegroups master.yaml's, expanded in each target before it is parsed
     * @param budget pays for refusals (an accepted publisher's answer is not counted against it)
     */
    public PublisherService(
            Path pkiDir,
            RSAPublicKey rootKey,
            Map<String, MasterConfig.PublisherAcl> acls,
            Nodegroups nodegroups,
            SessionTable sessions,
            JobPublisher jobs,
            Supplier<KeyPair> masterKeys,
            AuditLog audit,
            Clock clock,
            AuthWorkBudget budget,
            StoreWrites writes) {
        this.writes = writes;
        this.budget = budget;
        this.publishersDir = pkiDir.resolve(PUBLISHERS_DIR);
        this.rootKey = rootKey;
        this.acls = Map.copyOf(acls);
        this.nodegroups = nodegroups;
        this.sessions = sessions;
        this.jobs = jobs;
        this.masterKeys = masterKeys;
        this.audit = audit;
        this.clock = clock;
        this.seenNonces = Caffeine.newBuilder()
                .maximumSize(MAX_NONCES)
                .ticker(() -> clock.millis() * 1_000_000L)
                .expireAfter(Expiry.<String, Long>creating((nonce, timestampMs) -> {
                    long passableUntilMs = timestampMs + Timestamps.MAX_CLOCK_SKEW.toMillis();
                    long keepMs = Math.max(
                            passableUntilMs - clock.millis(),
                            Timestamps.MAX_CLOCK_SKEW.multipliedBy(2).toMillis());
                    return Duration.ofMillis(Math.min(keepMs, Long.MAX_VALUE / 2_000_000L));
                }))
                .build();
    }

    /** Loads the local administrator's key pair, creating it (0400, master's user only) on first start. */
    public static KeyPair loadOrCreateRootKey(Path cachedir, int keysize) throws IOException, KeyFormatException {
        Path file = cachedir.resolve(RootPublisher.KEY_FILE);
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return Pem.readPrivateKey(
                    new String(AtomicFiles.readSmall(file, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII));
        }
        KeyPair pair = RsaKeys.generate(keysize);
        AtomicFiles.create(file, Pem.bytes(Pem.privateKeyPkcs1(pair.getPrivate())), AtomicFiles.OWNER_READ);
        LOG.info("Created the local publisher key {} (readable by the master's user only)", file);
        return pair;
    }

    /** The one refusal for an unknown publisher and a known one with another key (PROTOCOL.md 8.7). */
    public static final String NOT_REGISTERED = "not a registered publisher with this key";

    /**
     * A signed reply to a publisher's auth request.
     *
     * @param opened a session was opened: the connection may now send the authenticated frame limit
     */
    public record Answer(byte[] reply, boolean opened) {}

    /** Answers a publisher's decoded auth request with a signed reply; empty when it deserves no answer. */
    public Optional<Answer> authenticate(Peer peer, Signed<ClientAuth> signed) {
        ClientAuth request = signed.message();
        String name = request.name();
        RSAPublicKey offered;
        try {
            offered = RsaKeys.publicKeyFromDer(request.publicKey());
        } catch (KeyFormatException e) {
            return refuse(peer, request, "unusable key: " + e.getMessage());
        }
        if (!signed.by(offered)) {
            LOG.info("Publisher {} ({}): auth dropped: not signed by the key it offers", name, peer.remoteAddress());
            return Optional.empty();
        }
        // Remembered before the skew check, whatever the answer (PROTOCOL.md 8.7).
        if (seenNonces
                        .asMap()
                        .putIfAbsent(name + ":" + HexFormat.of().formatHex(request.nonce()), request.timestampMs())
                != null) {
            LOG.info("Publisher {} ({}): replayed auth dropped", name, peer.remoteAddress());
            return Optional.empty();
        }
        if (!Timestamps.withinSkew(request.timestampMs(), clock)) {
            return refuse(peer, request, "clock skew over " + Timestamps.MAX_CLOCK_SKEW.toSeconds() + " s");
        }
        Optional<RSAPublicKey> registered = registeredKey(name);
        if (registered.isEmpty() || !Arrays.equals(registered.get().getEncoded(), offered.getEncoded())) {
            // One answer for both, so that names cannot be enumerated; the log and the audit say which.
            return refuse(
                    peer,
                    request,
                    NOT_REGISTERED,
                    registered.isEmpty()
                            ? "unknown publisher " + name
                            : "key does not match the registered key of publisher " + name);
        }
        Optional<MasterConfig.PublisherAcl> acl =
                name.equals(RootPublisher.NAME) && Arrays.equals(rootKey.getEncoded(), offered.getEncoded())
                        ? Optional.empty()
                        : Optional.ofNullable(acls.get(name));
        if (!name.equals(RootPublisher.NAME) && acl.isEmpty()) {
            return refuse(peer, request, "publisher " + name + " has no entry in publisher_acl");
        }
        // Written before the session opens: no publisher session without its audit line.
        if (!writes.audit(
                "publisher sign-in",
                name + " (" + peer.remoteAddress() + ")",
                () -> audit.record(AuditEvent.builder("publisher-auth", name)
                        .reason("session opened")
                        .source(peer.remoteAddress())
                        .build()))) {
            if (!budget.trySpend(peer.remoteAddress(), "a publisher's 'try later'")) {
                return Optional.empty();
            }
            return Optional.of(reply(request, AuthStatus.REFUSED, TRY_LATER, 1, null));
        }
        PublisherSession session = sessions.openPublisher(name, acl, peer);
        byte[] raw = session.requestKey().bytes();
        AuthReply.Session granted =
                new AuthReply.Session(session.sessionId().bytes(), 0, new byte[0], Rsa.wrap(offered, raw), 0, 0);
        Arrays.fill(raw, (byte) 0);
        LOG.info("Publisher {} ({}): session opened", name, peer.remoteAddress());
        return Optional.of(reply(request, AuthStatus.ACCEPTED, "accepted", 0, granted));
    }

    /** A reply to {@code request}, signed by the master key in force; a session opens only with an accepted one. */
    private Answer reply(
            ClientAuth request, AuthStatus status, String reason, int retryAfterSeconds, AuthReply.Session granted) {
        KeyPair keys = masterKeys.get(); // once: a rotation in between must not pair one key's name with another's
        AuthReply reply = new AuthReply(
                Suite.RSA_OAEP_PSS_AES256GCM,
                status,
                request.nonce(),
                clock.millis(),
                keys.getPublic().getEncoded(),
                reason,
                retryAfterSeconds,
                granted);
        return new Answer(Codec.encodeSigned(reply, keys.getPrivate()), status == AuthStatus.ACCEPTED);
    }

    private Optional<Answer> refuse(Peer peer, ClientAuth request, String reason) {
        return refuse(peer, request, reason, reason);
    }

    /**
     * Refuses with {@code answer} in the reply and {@code reason} in the log and the audit; the reply is paid from
     * the auth work budget, and not sent when it is spent.
     */
    private Optional<Answer> refuse(Peer peer, ClientAuth request, String answer, String reason) {
        LOG.warn("Publisher {} ({}): refused: {}", request.name(), peer.remoteAddress(), reason);
        writes.audit(
                "publisher sign-in",
                request.name() + " (" + peer.remoteAddress() + ")",
                () -> audit.record(AuditEvent.builder("publisher-refused", request.name())
                        .reason(reason)
                        .source(peer.remoteAddress())
                        .build()));
        if (!budget.trySpend(peer.remoteAddress(), "a publisher's refusal")) {
            return Optional.empty();
        }
        return Optional.of(reply(request, AuthStatus.REJECTED, answer, 0, null));
    }

    private Optional<RSAPublicKey> registeredKey(String name) {
        if (name.equals(RootPublisher.NAME)) {
            return Optional.of(rootKey);
        }
        if (!MinionIds.isValid(name)) {
            return Optional.empty();
        }
        Path file = MinionIds.resolveInside(publishersDir, name);
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        try {
            return Optional.of(Pem.readPublicKey(
                    new String(AtomicFiles.readSmall(file, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII)));
        } catch (IOException | KeyFormatException e) {
            LOG.warn("Publisher {}: unusable key file {}: {}", name, file, e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * Publishes what {@code session}'s publisher asks, if its ACL allows; the answer says to whom, or why not.
     * {@code watcher} hears each return of the job as it is stored.
     */
    public SessionMessage.PublishReply publish(
            PublisherSession session,
            SessionMessage.PublishRequest request,
            Consumer<SessionMessage.ReturnEvent> watcher) {
        return publish(session.name(), session.acl(), request, watcher);
    }

    /**
     * Publishes for publisher {@code name} (a session's, or an API token's {@code api:NAME}) under {@code acl}
     * (empty: the local administrator's, who may do anything): the one path every publication takes.
     */
    public SessionMessage.PublishReply publish(
            String name,
            Optional<MasterConfig.PublisherAcl> acl,
            SessionMessage.PublishRequest request,
            Consumer<SessionMessage.ReturnEvent> watcher) {
        try {
            // Minions parse the target again and know no nodegroups: they get each one's definition.
            Nodegroups.Expanded expanded = expand(request.targetType(), request.target());
            Target target = JobPublisher.parse(expanded.type(), expanded.expression());
            List<String> minions = jobs.resolve(target);
            if (acl.isPresent()) {
                checkAcl(name, acl.get(), request.fun(), minions);
            }
            JobPublisher.Published published = jobs.publish(
                    name,
                    expanded.type(),
                    expanded.expression(),
                    minions,
                    request.fun(),
                    request.args(),
                    request.kwargs(),
                    request.timeoutSeconds(),
                    watcher);
            return new SessionMessage.PublishReply(published.jid(), published.minions(), published.unreachable(), null);
        } catch (PublishException e) {
            LOG.info("Publisher {}: publication refused: {}", name, e.getMessage());
            writes.audit(
                    "publish",
                    name,
                    () -> audit.record(AuditEvent.builder("publish-refused", name)
                            .reason(e.getMessage())
                            .build()));
            return new SessionMessage.PublishReply(null, List.of(), List.of(), e.getMessage());
        }
    }

    /**
     * Why {@code request} would be refused for {@code name} under {@code acl} today (bad target, ACL), checked as
     * {@link #publish} checks it and audited as its refusal; empty when it would be published. The API's batch runs
     * ask before their first {@code test.ping}, so a job the ACL refuses never starts a run.
     */
    public Optional<String> refusal(
            String name, Optional<MasterConfig.PublisherAcl> acl, SessionMessage.PublishRequest request) {
        try {
            Nodegroups.Expanded expanded = expand(request.targetType(), request.target());
            List<String> minions = jobs.resolve(JobPublisher.parse(expanded.type(), expanded.expression()));
            if (acl.isPresent()) {
                checkAcl(name, acl.get(), request.fun(), minions);
            }
            return Optional.empty();
        } catch (PublishException e) {
            LOG.info("Publisher {}: publication refused: {}", name, e.getMessage());
            writes.audit(
                    "publish",
                    name,
                    () -> audit.record(AuditEvent.builder("publish-refused", name)
                            .reason(e.getMessage())
                            .build()));
            return Optional.of(e.getMessage());
        }
    }

    private Nodegroups.Expanded expand(String type, String expression) throws PublishException {
        try {
            return nodegroups.expand(type, expression);
        } catch (TargetException e) {
            throw new PublishException("bad target: " + e.getMessage());
        }
    }

    private static void checkAcl(String name, MasterConfig.PublisherAcl acl, String fun, List<String> minions)
            throws PublishException {
        if (acl.functions().stream().noneMatch(glob -> Glob.compile(glob).matches(fun))) {
            throw new PublishException("publisher_acl: " + name + " may not run " + fun);
        }
        List<Glob> allowed = acl.targets().stream().map(Glob::compile).toList();
        List<String> outside = minions.stream()
                .filter(id -> allowed.stream().noneMatch(g -> g.matches(id)))
                .limit(5)
                .toList();
        if (!outside.isEmpty()) {
            throw new PublishException(
                    "publisher_acl: " + name + " may not target " + outside + (outside.size() == 5 ? " and more" : ""));
        }
    }

    /** Answers a job query from the job cache: every job for root, a publisher's own jobs for the others. */
    public SessionMessage.JobReply query(PublisherSession session, SessionMessage.JobQuery query) {
        return query(session.name(), session.acl().isEmpty(), query);
    }

    /** As {@link #query(PublisherSession, SessionMessage.JobQuery)} for publisher {@code name}; root sees all. */
    public SessionMessage.JobReply query(String name, boolean root, SessionMessage.JobQuery query) {
        if (query.jid() == null) {
            List<JobRecord> all = jobs.cache().list();
            List<Object> listed = new ArrayList<>();
            int limit = query.limit() <= 0 ? MAX_LIST : Math.min(query.limit(), MAX_LIST);
            for (JobRecord job : all.subList(Math.max(0, all.size() - limit), all.size())) {
                if (root || job.publisher().equals(name)) {
                    listed.add(summary(job));
                }
            }
            return new SessionMessage.JobReply(Map.of("jobs", listed), null);
        }
        Optional<JobRecord> job = JobIds.isValid(query.jid()) ? jobs.cache().job(query.jid()) : Optional.empty();
        if (job.isEmpty() || !(root || job.get().publisher().equals(name))) {
            return new SessionMessage.JobReply(Map.of(), "no job " + query.jid() + " in the job cache");
        }
        Map<String, Object> document = summary(job.get());
        Map<String, Object> returns = new LinkedHashMap<>();
        for (StoredReturn ret : jobs.cache().returns(query.jid())) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("return", ret.returnValue());
            entry.put("retcode", (long) ret.retcode());
            entry.put("success", ret.success());
            entry.put("duration_ms", ret.durationMs());
            returns.put(ret.id(), entry);
        }
        document.put("args", job.get().args());
        document.put("kwargs", job.get().kwargs());
        document.put("returns", returns);
        // Each target that has not returned is in one of three lists (PROTOCOL.md 8.7); "missing" is all of them.
        List<String> missing = job.get().minions().stream()
                .filter(id -> !returns.containsKey(id))
                .sorted()
                .toList();
        Delivery delivery = jobs.delivery(job.get());
        List<String> unreachable =
                missing.stream().filter(delivery.unreachable()::contains).toList();
        List<String> unconfirmed = missing.stream()
                .filter(id -> !delivery.unreachable().contains(id)
                        && delivery.unconfirmed().contains(id))
                .toList();
        document.put(
                "running",
                missing.stream()
                        .filter(id -> !delivery.unreachable().contains(id)
                                && !delivery.unconfirmed().contains(id))
                        .toList());
        document.put("not_confirmed", unconfirmed);
        document.put("unreachable", unreachable);
        document.put("missing", missing);
        return new SessionMessage.JobReply(document, null);
    }

    private Map<String, Object> summary(JobRecord job) {
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("jid", job.jid());
        summary.put("time", job.time());
        summary.put("publisher", job.publisher());
        summary.put("target_type", job.targetType());
        summary.put("target", job.target());
        summary.put("fun", job.fun());
        summary.put("minions", List.copyOf(job.minions()));
        return summary;
    }
}
