package io.brine.bench;

import static io.brine.bench.Figures.round;

import io.brine.protocol.salt.SaltDialect;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltMsgpack;
import io.brine.protocol.salt.SaltValue;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * {@code test.ping} to every simulated minion of a real salt-master, as {@code salt 'bench-*' test.ping} asks for
 * it: the clear {@code publish} request of Salt's LocalClient on the request port, with the master's
 * {@code .root_key} as the user key (ClearFuncs.publish: the user {@code root} with the key the master wrote), glob
 * target. A return counts when the master has written it to its job cache ({@code jobs/<sha256 of the jid>/<id>/
 * return.p}, Salt's local_cache returner, written by a rename): the time the master has the return, as brine's
 * figure is the time its client receives the master's return event.
 */
final class SaltPing implements AutoCloseable {

    /** One round: milliseconds from the publish request to each return the master holds, sorted; and who is missing. */
    record Round(String jid, List<Double> returnsMs, int expected, long masterCpuMs) {

        int missing() {
            return expected - returnsMs.size();
        }

        double lastMs() {
            return returnsMs.isEmpty() ? -1 : returnsMs.get(returnsMs.size() - 1);
        }

        Map<String, Object> figures() {
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("jid", jid);
            figures.put("first_ms", returnsMs.isEmpty() ? -1 : round(returnsMs.get(0), 1));
            figures.put("p50_ms", returnsMs.isEmpty() ? -1 : round(returnsMs.get(returnsMs.size() / 2), 1));
            figures.put("last_ms", round(lastMs(), 1));
            figures.put("returned", returnsMs.size());
            figures.put("missing", missing());
            figures.put("master_cpu_ms", masterCpuMs);
            return figures;
        }
    }

    private static final long POLL_MS = 20;
    /** What {@link #answerTimeout} allows a salt-master: this, plus {@link #ANSWER_MS_PER_MINION} per minion. */
    static final Duration ANSWER_BASE = Duration.ofSeconds(60);

    static final Duration ANSWER_MS_PER_MINION = Duration.ofMillis(300);

    /**
     * How long the bench waits for a salt-master's answer to a publish request, and then for the returns: its
     * request workers take the publish in turn with every minion's requests, so right after N minions signed in it
     * waits behind their start-up {@code _pillar} and {@code minion_start} (a 3008.2 master with 1,000 fresh
     * minions took over 120 s to answer at a load of 35 on 2 cores), and after a restart behind their sign-ins.
     */
    static Duration answerTimeout(int minions) {
        return ANSWER_BASE.plus(ANSWER_MS_PER_MINION.multipliedBy(Math.max(0, minions)));
    }

    private final MasterProcess master;
    private final ZContext context = new ZContext(1);
    private final ZMQ.Socket request;
    private final String rootKey;

    /** A client of {@code master} with {@code minions} simulated minions (the answer's bound grows with them). */
    SaltPing(MasterProcess master, int minions) throws IOException {
        this.master = master;
        this.rootKey =
                Files.readString(master.rootKey(), StandardCharsets.UTF_8).trim();
        this.request = context.createSocket(SocketType.REQ);
        request.setLinger(0);
        request.setReceiveTimeOut(
                (int) Math.min(Integer.MAX_VALUE, answerTimeout(minions).toMillis()));
        request.connect("tcp://127.0.0.1:" + master.retPort);
    }

    /** The clear {@code publish} request of Salt's LocalClient ({@code salt/client/__init__.py} _prep_pub). */
    static byte[] publishRequest(String rootKey, String glob, String fun) {
        SaltValue.Map load = SaltValue.Map.builder()
                .put("cmd", "publish")
                .put("tgt", glob)
                .put("fun", fun)
                .put("arg", new SaltValue.Array(List.of()))
                .put("key", rootKey)
                .put("tgt_type", "glob")
                .put("ret", "")
                .put("jid", "")
                .put("user", "root")
                .put(
                        "kwargs",
                        SaltValue.Map.builder()
                                .put("show_jid", false)
                                .put("show_timeout", true)
                                .build())
                .build();
        // A 3008.2 master refuses any request below minimum_auth_version (3) with "bad load", this one too.
        return SaltMsgpack.write(
                SaltValue.Map.builder()
                        .put("enc", "clear")
                        .put("load", load)
                        .put("version", 3)
                        .build(),
                SaltDialect.PAYLOAD);
    }

    /**
     * The jid of the master's answer to a publish request, or an IOException with what the master said instead (an
     * {@code error}, no minion matched, anything unreadable).
     */
    static String jidOf(byte[] reply) throws IOException {
        SaltValue value;
        try {
            value = SaltMsgpack.read(reply, SaltLimits.SESSION);
        } catch (Exception e) {
            throw new IOException("the salt-master's answer to publish is not msgpack: " + e.getMessage());
        }
        if (value instanceof SaltValue.Map envelope && envelope.get("load").orElse(null) instanceof SaltValue.Map l) {
            value = l;
        }
        if (!(value instanceof SaltValue.Map load)) {
            throw new IOException("the salt-master's answer to publish is not a map: " + value.kind()
                    + value.text()
                            .map(text -> " \"" + text + "\" (see its master.log)")
                            .orElse(""));
        }
        if (load.has("error")) {
            throw new IOException(
                    "the salt-master refused the publish: " + load.get("error").get());
        }
        return load.get("jid")
                .flatMap(SaltValue::text)
                .filter(jid -> !jid.isEmpty())
                .orElseThrow(() -> new IOException("the salt-master's answer to publish has no jid: " + load));
    }

    /** Salt's job cache directory of {@code jid} ({@code salt.utils.jid.jid_dir}, hash_type sha256). */
    static Path jidDir(Path cachedir, String jid) {
        try {
            String hash = HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(jid.getBytes(StandardCharsets.UTF_8)));
            return cachedir.resolve("jobs").resolve(hash.substring(0, 2)).resolve(hash.substring(2));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * One test.ping to {@code glob}: until {@code expected} returns are in the job cache or {@code timeout} after the
     * master answered the publish request.
     */
    Round ping(String glob, int expected, Duration timeout) throws IOException {
        return publish(glob, "test.ping", expected, timeout);
    }

    /**
     * A job of {@code fun} to {@code glob}: until {@code expected} returns are in the job cache or {@code timeout}
     * after the master answered the publish request (the times are from the request).
     */
    Round publish(String glob, String fun, int expected, Duration timeout) throws IOException {
        long cpu0 = master.cpuMillis();
        long t0 = System.nanoTime();
        if (!request.send(publishRequest(rootKey, glob, fun))) {
            throw new IOException("cannot send the publish request to the salt-master");
        }
        byte[] reply = request.recv();
        if (reply == null) {
            throw new IOException("the salt-master did not answer the publish request within "
                    + request.getReceiveTimeOut() / 1000 + " s (--against salt allows " + ANSWER_BASE.toSeconds()
                    + " s + " + ANSWER_MS_PER_MINION.toMillis() + " ms per minion)");
        }
        String jid = jidOf(reply);
        Path dir = jidDir(master.dir.resolve("cache"), jid);
        List<Double> returns = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (seen.size() < expected && System.nanoTime() < deadline) {
            MasterProcess.sleep(POLL_MS);
            double now = (System.nanoTime() - t0) / 1e6;
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> minions = Files.list(dir)) {
                minions.filter(m -> !seen.contains(m.getFileName().toString()))
                        .filter(m -> Files.isRegularFile(m.resolve("return.p")))
                        .forEach(m -> {
                            seen.add(m.getFileName().toString());
                            returns.add(now);
                        });
            }
        }
        return new Round(jid, returns, expected, master.cpuMillis() - cpu0);
    }

    @Override
    public void close() {
        context.close();
    }
}
