package io.brine.master.publish;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.brine.cluster.ClusterHealth;
import io.brine.cluster.ZkPublications;
import io.brine.master.jobs.Delivery;
import io.brine.master.jobs.JobRecord;
import io.brine.master.jobs.SharedJobs;
import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.Aead;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionMessage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link SharedPublications} through ZooKeeper ({@link ZkPublications}). The master a job is published through
 * writes an announcement: the job's load sealed (AES-256-GCM) with a fresh key wrapped (RSA-OAEP) for the cluster's
 * master key, the targeted minions and the issue time, all signed (RSA-PSS) with the master key. Every other master
 * verifies it, opens the load and publishes it to the targets it holds sessions for as its own publication (its own
 * serial, the cluster's generation, the origin's issue time, so the minion's {@code publish_max_age} counts from the
 * origin), then reports whom it reached. So whoever can write to ZooKeeper but has no master key can neither read a
 * job's load there nor make the masters publish anything.
 *
 * <p>Threads: ZooKeeper's events are handed to one thread of this class ({@code brine-cluster-publications}), which
 * verifies, unwraps, signs and sends. The publishing worker waits at most {@link #ANNOUNCE_WAIT} for the
 * announcement's write and {@link #REPORT_WAIT} for the reports, and refuses a job at once while the cluster cannot
 * be written ({@link #unavailable()}), so a publisher's answer comes within
 * {@link io.brine.protocol.message.SessionMessage.PublishReply#ANSWER_WITHIN}.
 */
public final class ClusterPublications implements SharedPublications {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterPublications.class);
    /** How long the publishing master waits for the other masters' reports before it calls the rest unreachable. */
    static final Duration REPORT_WAIT = Duration.ofSeconds(3);
    /**
     * How long the publishing master waits for ZooKeeper to answer the announcement's write; unanswered, the targets
     * other masters hold are reported unconfirmed (the write may still land and be delivered).
     */
    static final Duration ANNOUNCE_WAIT = Duration.ofSeconds(2);
    /** An announcement older than this is not delivered (a master starting late must not run old jobs). */
    static final Duration MAX_AGE = Duration.ofMinutes(2);
    /** Announcements and reports are removed after this. */
    static final Duration KEEP = Duration.ofMinutes(10);

    private static final int MAX_INFLATED = 16 * 1024 * 1024;
    private static final byte[] CONTEXT = "brine-cluster-publication-v1".getBytes(StandardCharsets.US_ASCII);

    private final ZkPublications zk;
    private final SharedJobs jobs;
    private final KeyPair masterKeys;
    private final Clock clock;
    private final String name;
    /** What a write to the cluster would meet now. */
    private final Supplier<ClusterHealth> health;

    private final ObjectMapper json = new ObjectMapper();
    /** Jids heard (announced by any master): each is delivered once. */
    private final Cache<String, Boolean> heard = Caffeine.newBuilder()
            .maximumSize(100_000)
            .expireAfterWrite(KEEP.multipliedBy(2))
            .build();

    private final Object reportsArrived = new Object();
    private final ScheduledThreadPoolExecutor worker;
    private volatile Deliverer deliverer;

    /**
     * @param name this master's name in the cluster (reports and logs)
     * @param health what a write to the cluster meets now ({@code ClusterStores::awaitWritable})
     */
    public ClusterPublications(
            ZkPublications zk,
            SharedJobs jobs,
            KeyPair masterKeys,
            Clock clock,
            String name,
            Supplier<ClusterHealth> health) {
        this.health = health;
        this.zk = zk;
        this.jobs = jobs;
        this.masterKeys = masterKeys;
        this.clock = clock;
        this.name = name;
        this.worker = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "brine-cluster-publications");
            t.setDaemon(true);
            return t;
        });
        worker.setRemoveOnCancelPolicy(true);
    }

    @Override
    public void start(Deliverer deliver) throws IOException {
        this.deliverer = deliver;
        zk.start(new ZkPublications.Listener() {
            @Override
            public void announced(String jid, byte[] data) {
                if (heard.asMap().putIfAbsent(jid, Boolean.TRUE) == null) {
                    worker.execute(() -> heard(jid, data, deliverer));
                }
            }

            @Override
            public void reported(String jid, String master, byte[] data) {
                synchronized (reportsArrived) {
                    reportsArrived.notifyAll();
                }
            }
        });
        try {
            if (!zk.awaitPresence(Duration.ofSeconds(30))) {
                throw new IOException("cannot register this master in the cluster within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while registering this master in the cluster", e);
        }
    }

    @Override
    public Optional<String> unavailable() {
        ClusterHealth now = health.get();
        return now.writable() ? Optional.empty() : Optional.of(now.describe());
    }

    @Override
    public Announced announce(
            JobRecord record, PublishLoad load, long issuedMs, Consumer<SessionMessage.ReturnEvent> watcher) {
        String jid = record.jid();
        heard.put(jid, Boolean.TRUE);
        ZkPublications.Written written;
        try {
            written = zk.announce(jid, encode(record, load, issuedMs), ANNOUNCE_WAIT);
        } catch (IOException | RuntimeException e) {
            LOG.warn(
                    "Job {}: not forwarded to the cluster's other masters ({}); only minions connected here get it",
                    jid,
                    e.getMessage());
            return Delivery::unreachable;
        }
        if (watcher != null) {
            watchReturns(record, watcher);
        }
        if (written == ZkPublications.Written.UNKNOWN) {
            LOG.warn(
                    "Job {}: ZooKeeper did not answer its announcement within {} s (quorum lost?); the targets not"
                            + " connected here are reported unconfirmed: the other masters deliver it if the write lands"
                            + " within {} s of its issue",
                    jid,
                    ANNOUNCE_WAIT.toSeconds(),
                    MAX_AGE.toSeconds());
            return Delivery::unconfirmed;
        }
        return notHere -> confirm(record, notHere);
    }

    /** Feeds {@code watcher} the returns stored on any master, until the job's time is up. */
    private void watchReturns(JobRecord record, Consumer<SessionMessage.ReturnEvent> watcher) {
        Set<String> targets = Set.copyOf(record.minions());
        AutoCloseable watch = jobs.watchReturns(record.jid(), ret -> {
            if (targets.contains(ret.id())) {
                worker.execute(() -> watcher.accept(new SessionMessage.ReturnEvent(
                        record.jid(), ret.id(), ret.returnValue(), ret.retcode(), ret.success(), ret.durationMs())));
            }
        });
        long seconds = Math.max(record.timeoutSeconds(), 60) + 60;
        worker.schedule(
                () -> {
                    try {
                        watch.close();
                    } catch (Exception e) {
                        LOG.debug("Job {}: closing the returns watch failed", record.jid(), e);
                    }
                },
                seconds,
                TimeUnit.SECONDS);
    }

    private Delivery confirm(JobRecord record, Set<String> notHere) {
        String jid = record.jid();
        Set<String> deliveredHere = new TreeSet<>(record.minions());
        deliveredHere.removeAll(notHere);
        try {
            zk.reportInBackground(
                    jid,
                    encodeIds(deliveredHere),
                    failed -> LOG.warn("Job {}: this master's delivery report not written: {}", jid, failed));
        } catch (IOException | RuntimeException e) {
            LOG.warn("Job {}: this master's delivery report not written: {}", jid, e.getMessage());
        }
        if (notHere.isEmpty()) {
            return new Delivery(Set.of(), Set.of());
        }
        long deadline = System.nanoTime() + REPORT_WAIT.toNanos();
        try {
            while (true) {
                Optional<Delivery> known = delivery(jid, notHere, name);
                long left = deadline - System.nanoTime();
                if (known.isPresent() && (known.get().unconfirmed().isEmpty() || left <= 0)) {
                    Delivery delivery = known.get();
                    if (!delivery.unconfirmed().isEmpty()) {
                        LOG.warn(
                                "Job {}: no delivery report from {} within {} s; {} minions reported unconfirmed"
                                        + " (not unreachable)",
                                jid,
                                silent(jid, name),
                                REPORT_WAIT.toSeconds(),
                                delivery.unconfirmed().size());
                    }
                    return delivery;
                }
                synchronized (reportsArrived) {
                    // A report that came between the read above and here is read at the next turn (50 ms at most).
                    reportsArrived.wait(Math.max(1, Math.min(50, TimeUnit.NANOSECONDS.toMillis(left))));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Delivery.unconfirmed(notHere);
        }
    }

    /** The running masters, but {@code self}, that have not reported on {@code jid}. */
    private Set<String> silent(String jid, String self) {
        Set<String> silent = new TreeSet<>(zk.masters());
        silent.removeAll(zk.reports(jid).keySet());
        if (self != null) {
            silent.remove(self);
        }
        return silent;
    }

    /**
     * What the reports on {@code jid} say of {@code targets}; {@code self}, when given, counts as having reported
     * (its own report may still be on its way). Empty when there is no report at all.
     */
    private Optional<Delivery> delivery(String jid, Collection<String> targets, String self) {
        Map<String, byte[]> reports = zk.reports(jid);
        if (reports.isEmpty() && self == null) {
            return Optional.empty();
        }
        Set<String> notReached = new TreeSet<>(targets);
        for (Map.Entry<String, byte[]> report : reports.entrySet()) {
            try {
                notReached.removeAll(decodeIds(report.getValue()));
            } catch (IOException e) {
                LOG.warn("Job {}: unreadable delivery report of {}: {}", jid, report.getKey(), e.getMessage());
            }
        }
        boolean allReported = silent(jid, self).isEmpty();
        return Optional.of(allReported ? Delivery.unreachable(notReached) : Delivery.unconfirmed(notReached));
    }

    /**
     * On the worker thread: {@link #deliver}, and any error it meets logged. The executor would keep an exception
     * where nobody reads it: the job's master would wait for this master's report and call its minions unconfirmed,
     * and nothing here would say why. No report is written: what reached which minion is not known.
     */
    void heard(String jid, byte[] data, Deliverer deliverer) {
        try {
            deliver(jid, data, deliverer);
        } catch (RuntimeException e) {
            LOG.warn(
                    "Job {}: announced by another master, not delivered here ({}); its master counts this master's"
                            + " minions unconfirmed",
                    MinionIds.printable(jid),
                    e.toString(),
                    e);
        }
    }

    /** On the worker thread: verify, open, deliver, report. */
    private void deliver(String jid, byte[] data, Deliverer deliverer) {
        Heard job;
        try {
            job = decode(jid, data);
        } catch (IOException e) {
            LOG.warn("Job {}: announcement in the cluster refused: {}", jid, e.getMessage());
            return;
        }
        if (job == null) {
            return; // this master's own, or too old to deliver
        }
        Set<String> delivered = deliverer.deliver(job.record(), job.load(), job.issuedMs());
        try {
            zk.report(jid, encodeIds(delivered));
        } catch (IOException | RuntimeException e) {
            LOG.warn(
                    "Job {}: delivery report not written ({}); master {} will count them unreachable",
                    jid,
                    e.getMessage(),
                    job.origin());
        }
    }

    @Override
    public Optional<Delivery> delivery(String jid, Collection<String> targets) {
        return delivery(jid, targets, null);
    }

    @Override
    public void sweep() {
        try {
            int removed = zk.sweep(KEEP);
            if (removed > 0) {
                LOG.debug("Cluster publications: removed {} old announcements", removed);
            }
        } catch (IOException e) {
            LOG.warn("Cannot sweep the cluster's publications: {}", e.getMessage());
        }
    }

    @Override
    public void close() {
        zk.close();
        worker.shutdownNow();
    }

    // ------------------------------------------------------------------ encoding

    /** A verified announcement. */
    record Heard(String origin, long issuedMs, JobRecord record, PublishLoad load) {}

    /** {@code u16 signature length || RSA-PSS signature || gzip(JSON body)}. */
    byte[] encode(JobRecord record, PublishLoad load, long issuedMs) throws IOException {
        SessionKey key = SessionKey.random();
        try {
            ObjectNode body = json.createObjectNode();
            body.put("v", 1)
                    .put("jid", record.jid())
                    .put("origin", name)
                    .put("issued_ms", issuedMs)
                    .put("time", record.time());
            body.putArray("minions")
                    .addAll(record.minions().stream().map(body::textNode).toList());
            body.put("key", Base64.getEncoder().encodeToString(Rsa.wrap(masterKeys.getPublic(), key.bytes())));
            body.put(
                    "load",
                    Base64.getEncoder().encodeToString(Aead.seal(key, context(record.jid()), Codec.encodeLoad(load))));
            byte[] packed = gzip(json.writeValueAsBytes(body));
            byte[] signature = Rsa.sign(masterKeys.getPrivate(), packed);
            return ByteBuffer.allocate(2 + signature.length + packed.length)
                    .putShort((short) signature.length)
                    .put(signature)
                    .put(packed)
                    .array();
        } finally {
            key.wipe();
        }
    }

    /**
     * The announcement, verified and opened; null, after the signature check alone, for one of this master's own or
     * one too old to deliver.
     */
    Heard decode(String jid, byte[] data) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(data);
        if (buffer.remaining() < 2) {
            throw new IOException("too short");
        }
        int signatureLength = buffer.getShort() & 0xffff;
        if (signatureLength > buffer.remaining()) {
            throw new IOException("truncated");
        }
        byte[] signature = new byte[signatureLength];
        buffer.get(signature);
        byte[] packed = new byte[buffer.remaining()];
        buffer.get(packed);
        if (!Rsa.verify(masterKeys.getPublic(), packed, signature)) {
            throw new IOException("not signed by the cluster's master key");
        }
        JsonNode body = json.readTree(gunzip(packed));
        if (body.path("v").asInt() != 1 || !jid.equals(body.path("jid").asText())) {
            throw new IOException("not an announcement of this jid");
        }
        // Before the private-key unwrap: a master catching up re-reads every announcement of MAX_AGE, its own too.
        String origin = body.path("origin").asText();
        long issuedMs = body.path("issued_ms").asLong();
        long age = clock.millis() - issuedMs;
        if (origin.equals(name)) {
            return null;
        }
        if (age > MAX_AGE.toMillis()) {
            LOG.debug("Job {}: announced {} ms ago by {}: too old to deliver", jid, age, origin);
            return null;
        }
        List<String> minions = new ArrayList<>();
        for (JsonNode node : body.path("minions")) {
            if (!MinionIds.isValid(node.asText())) {
                throw new IOException("not a minion id in the targets");
            }
            minions.add(node.asText());
        }
        SessionKey key = null;
        try {
            key = SessionKey.of(Rsa.unwrap(
                    masterKeys.getPrivate(),
                    Base64.getDecoder().decode(body.path("key").asText(""))));
            PublishLoad load = Codec.decodeLoad(Aead.open(
                    key,
                    context(jid),
                    Base64.getDecoder().decode(body.path("load").asText(""))));
            if (!load.jid().equals(jid)) {
                throw new IOException("the load names another jid");
            }
            JobRecord record = new JobRecord(
                    jid,
                    body.path("time").asText(),
                    load.publisher(),
                    load.target().type(),
                    load.target().expression(),
                    load.fun(),
                    load.args(),
                    load.kwargs(),
                    load.timeoutSeconds(),
                    minions);
            return new Heard(origin, issuedMs, record, load);
        } catch (CryptoException | MalformedException | IllegalArgumentException e) {
            throw new IOException("cannot open: " + e.getMessage(), e);
        } finally {
            if (key != null) {
                key.wipe();
            }
        }
    }

    private static byte[] context(String jid) {
        byte[] id = jid.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(CONTEXT.length + id.length)
                .put(CONTEXT)
                .put(id)
                .array();
    }

    private static byte[] encodeIds(Set<String> ids) throws IOException {
        return gzip(String.join("\n", ids).getBytes(StandardCharsets.UTF_8));
    }

    private static Set<String> decodeIds(byte[] report) throws IOException {
        String text = new String(gunzip(report), StandardCharsets.UTF_8);
        Set<String> ids = new HashSet<>();
        for (String id : text.split("\n")) {
            if (!id.isEmpty()) {
                ids.add(id);
            }
        }
        return ids;
    }

    private static byte[] gzip(byte[] plain) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(plain.length / 4 + 64);
        try (GZIPOutputStream zip = new GZIPOutputStream(out)) {
            zip.write(plain);
        }
        return out.toByteArray();
    }

    private static byte[] gunzip(byte[] packed) throws IOException {
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(packed))) {
            byte[] plain = in.readNBytes(MAX_INFLATED + 1);
            if (plain.length > MAX_INFLATED) {
                throw new IOException("inflates over " + MAX_INFLATED + " bytes");
            }
            return plain;
        }
    }
}
