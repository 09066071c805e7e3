package io.brine.master.publish;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.brine.cluster.ZkPublications;
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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
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
 * verifies, unwraps, signs and sends; the publishing worker waits on reports at most {@link #REPORT_WAIT}.
 */
public final class ClusterPublications implements SharedPublications {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterPublications.class);
    /** How long the publishing master waits for the other masters' reports before it calls the rest unreachable. */
    static final Duration REPORT_WAIT = Duration.ofSeconds(3);
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
    private final ObjectMapper json = new ObjectMapper();
    /** Jids heard (announced by any master): each is delivered once. */
    private final Cache<String, Boolean> heard = Caffeine.newBuilder().maximumSize(100_000)
            .expireAfterWrite(KEEP.multipliedBy(2)).build();
    private final Object reportsArrived = new Object();
    private final ScheduledThreadPoolExecutor worker;
    private volatile Deliverer deliverer;

    /** @param name this master's name in the cluster (reports and logs) */
    public ClusterPublications(ZkPublications zk, SharedJobs jobs, KeyPair masterKeys, Clock clock, String name) {
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
                    worker.execute(() -> deliver(jid, data));
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
    public Announced announce(JobRecord record, PublishLoad load, long issuedMs,
            Consumer<SessionMessage.ReturnEvent> watcher) {
        String jid = record.jid();
        heard.put(jid, Boolean.TRUE);
        boolean announced;
        try {
            zk.announce(jid, encode(record, load, issuedMs));
            announced = true;
        } catch (IOException | RuntimeException e) {
            LOG.warn("Job {}: not forwarded to the cluster's other masters ({}); only minions connected here get it",
                    jid, e.getMessage());
            announced = false;
        }
        if (announced && watcher != null) {
            watchReturns(record, watcher);
        }
        boolean forwarded = announced;
        return notHere -> forwarded ? confirm(record, notHere) : new TreeSet<>(notHere);
    }

    /** Feeds {@code watcher} the returns stored on any master, until the job's time is up. */
    private void watchReturns(JobRecord record, Consumer<SessionMessage.ReturnEvent> watcher) {
        Set<String> targets = Set.copyOf(record.minions());
        AutoCloseable watch = jobs.watchReturns(record.jid(), ret -> {
            if (targets.contains(ret.id())) {
                worker.execute(() -> watcher.accept(new SessionMessage.ReturnEvent(record.jid(), ret.id(),
                        ret.returnValue(), ret.retcode(), ret.success(), ret.durationMs())));
            }
        });
        long seconds = Math.max(record.timeoutSeconds(), 60) + 60;
        worker.schedule(() -> {
            try {
                watch.close();
            } catch (Exception e) {
                LOG.debug("Job {}: closing the returns watch failed", record.jid(), e);
            }
        }, seconds, TimeUnit.SECONDS);
    }

    private Set<String> confirm(JobRecord record, Set<String> notHere) {
        String jid = record.jid();
        Set<String> deliveredHere = new TreeSet<>(record.minions());
        deliveredHere.removeAll(notHere);
        try {
            zk.report(jid, encodeIds(deliveredHere));
        } catch (IOException | RuntimeException e) {
            LOG.warn("Job {}: this master's delivery report not written: {}", jid, e.getMessage());
        }
        Set<String> missing = new TreeSet<>(notHere);
        if (missing.isEmpty()) {
            return missing;
        }
        long deadline = System.nanoTime() + REPORT_WAIT.toNanos();
        try {
            while (true) {
                Map<String, byte[]> reports = zk.reports(jid);
                Set<String> waitingFor = new TreeSet<>(zk.masters());
                waitingFor.removeAll(reports.keySet());
                for (byte[] report : reports.values()) {
                    missing.removeAll(decodeIds(report));
                }
                long left = deadline - System.nanoTime();
                if (waitingFor.isEmpty() || missing.isEmpty() || left <= 0) {
                    if (!waitingFor.isEmpty() && !missing.isEmpty()) {
                        LOG.warn("Job {}: no delivery report from {} within {} s; {} minions counted unreachable",
                                jid, waitingFor, REPORT_WAIT.toSeconds(), missing.size());
                    }
                    return missing;
                }
                synchronized (reportsArrived) {
                    // A report that came between the read above and here is read at the next turn (50 ms at most).
                    reportsArrived.wait(Math.max(1, Math.min(50, TimeUnit.NANOSECONDS.toMillis(left))));
                }
            }
        } catch (IOException e) {
            LOG.warn("Job {}: the other masters' delivery reports cannot be read: {}", jid, e.getMessage());
            return missing;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return missing;
        }
    }

    /** On the worker thread: verify, open, deliver, report. */
    private void deliver(String jid, byte[] data) {
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
            LOG.warn("Job {}: delivery report not written ({}); master {} will count them unreachable", jid,
                    e.getMessage(), job.origin());
        }
    }

    @Override
    public Optional<Set<String>> delivered(String jid) {
        Map<String, byte[]> reports = zk.reports(jid);
        if (reports.isEmpty()) {
            return Optional.empty();
        }
        Set<String> delivered = new HashSet<>();
        for (byte[] report : reports.values()) {
            try {
                delivered.addAll(decodeIds(report));
            } catch (IOException e) {
                LOG.warn("Job {}: unreadable delivery report: {}", jid, e.getMessage());
            }
        }
        return Optional.of(delivered);
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
    record Heard(String origin, long issuedMs, JobRecord record, PublishLoad load) {
    }

    /** {@code u16 signature length || RSA-PSS signature || gzip(JSON body)}. */
    byte[] encode(JobRecord record, PublishLoad load, long issuedMs) throws IOException {
        SessionKey key = SessionKey.random();
        try {
            ObjectNode body = json.createObjectNode();
            body.put("v", 1).put("jid", record.jid()).put("origin", name).put("issued_ms", issuedMs)
                    .put("time", record.time());
            body.putArray("minions").addAll(record.minions().stream().map(body::textNode).toList());
            body.put("key", Base64.getEncoder().encodeToString(Rsa.wrap(masterKeys.getPublic(), key.bytes())));
            body.put("load", Base64.getEncoder().encodeToString(Aead.seal(key, context(record.jid()),
                    Codec.encodeLoad(load))));
            byte[] packed = gzip(json.writeValueAsBytes(body));
            byte[] signature = Rsa.sign(masterKeys.getPrivate(), packed);
            return ByteBuffer.allocate(2 + signature.length + packed.length).putShort((short) signature.length)
                    .put(signature).put(packed).array();
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
            key = SessionKey.of(Rsa.unwrap(masterKeys.getPrivate(),
                    Base64.getDecoder().decode(body.path("key").asText(""))));
            PublishLoad load = Codec.decodeLoad(Aead.open(key, context(jid),
                    Base64.getDecoder().decode(body.path("load").asText(""))));
            if (!load.jid().equals(jid)) {
                throw new IOException("the load names another jid");
            }
            JobRecord record = new JobRecord(jid, body.path("time").asText(), load.publisher(),
                    load.target().type(), load.target().expression(), load.fun(), load.args(), load.kwargs(),
                    load.timeoutSeconds(), minions);
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
        return ByteBuffer.allocate(CONTEXT.length + id.length).put(CONTEXT).put(id).array();
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
