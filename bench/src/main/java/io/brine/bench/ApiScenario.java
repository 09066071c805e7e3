package io.brine.bench;

import static io.brine.bench.Figures.percentile;
import static io.brine.bench.Figures.round;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.bench.PingScenario.PingRound;
import io.brine.client.BrineClient;
import io.brine.store.api.ApiTokens;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The HTTP API under load (issue 28, "Measured"): a test.ping to every minion published through {@code POST
 * /api/jobs} and waited for with {@code GET /api/jobs/JID?wait=} against the same through {@link BrineClient}, in
 * alternate rounds; then test.ping rounds without and with {@code --api-subscribers} readers of {@code GET
 * /api/events} (master CPU, events each reader got against those emitted); then a reader that never reads, which
 * the master must cut off without its pings slowing down.
 */
final class ApiScenario {

    /** The API's section of the bench master's master.yaml: loopback, and no per-token rate to measure. */
    static String yaml(int port) {
        return String.join(
                "\n",
                "# The API scenario: loopback (no TLS), the per-token request rate lifted (every",
                "# subscriber uses the bench's one token).",
                "api:",
                "  interface: 127.0.0.1",
                "  port: " + port,
                "  requests_per_second: 100000",
                "");
    }

    /** The receive buffer of the reader that never reads: small, so the master's own buffer fills. */
    static final int SLOW_RECEIVE_BUFFER = 4096;
    /** Ping rounds at most while waiting for the slow reader to be cut off. */
    static final int SLOW_ROUNDS_MAX = 40;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final BenchRun run;
    private final int port;
    private final String token;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final PingScenario ping;
    private final Map<String, Object> figures = new LinkedHashMap<>();

    ApiScenario(BenchRun run, int port) throws IOException {
        this.run = run;
        this.port = port;
        this.ping = new PingScenario(run);
        // As brine-key api-token create does: the master reads the token file again when it changes.
        this.token = ApiTokens.create(
                        run.master().pkiDir(),
                        "bench",
                        List.of(Bench.PREFIX + "*"),
                        List.of("test.*"),
                        false,
                        Duration.ofDays(1),
                        Clock.systemUTC())
                .token();
    }

    void run(BrineClient client) throws Exception {
        run.scenarios().put("api", figures);
        publish(client);
        List<PingRound> without = events(client);
        slowReader(client, without);
    }

    // ---------------------------------------------------------------- publish: API against BrineClient

    private void publish(BrineClient client) throws Exception {
        int rounds = run.options().apiRounds();
        Duration timeout = Duration.ofSeconds(60 + run.minions() / 100);
        List<Long> brine = new ArrayList<>();
        List<Long> api = new ArrayList<>();
        apiRound(timeout); // warm-up of the API's paths
        for (int i = 0; i < rounds; i++) {
            PingRound round = ping.pingRound(client, timeout);
            if (round.missing() > 0) {
                throw new IOException("publish through brine: " + round.missing() + " minions did not return");
            }
            brine.add((long) (round.lastMs() * 1000));
            api.add(apiRound(timeout));
        }
        Comparison comparison = Comparison.of(brine, api);
        Map<String, Object> publish = new LinkedHashMap<>();
        publish.put("rounds", rounds);
        publish.put("brine_last_ms_p50", round(comparison.brineP50Ms(), 1));
        publish.put("brine_last_ms_p99", round(comparison.brineP99Ms(), 1));
        publish.put("api_last_ms_p50", round(comparison.apiP50Ms(), 1));
        publish.put("api_last_ms_p99", round(comparison.apiP99Ms(), 1));
        publish.put("api_to_brine_p50", round(comparison.ratioP50(), 2));
        publish.put("api_to_brine_p99", round(comparison.ratioP99(), 2));
        publish.put(
                "how",
                "test.ping to every minion, alternately through BrineClient (publish, then each return) and"
                        + " the API (POST /api/jobs, then GET /api/jobs/JID?wait= answering with every return), from the"
                        + " publication to the last return; percentiles over the rounds");
        figures.put("publish", publish);
        System.out.printf(
                "api      test.ping to %,d minions, last return over %d rounds each: brine p50 %.0f ms, p99 "
                        + "%.0f ms; API (POST /api/jobs + ?wait) p50 %.0f ms, p99 %.0f ms; API/brine %.2f (p50), %.2f "
                        + "(p99)%n",
                run.minions(),
                rounds,
                comparison.brineP50Ms(),
                comparison.brineP99Ms(),
                comparison.apiP50Ms(),
                comparison.apiP99Ms(),
                comparison.ratioP50(),
                comparison.ratioP99());
    }

    /** One job through the API: microseconds from the POST until the answer of the wait, with every return. */
    private long apiRound(Duration timeout) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        JsonNode published = call(
                HttpRequest.newBuilder(uri("/api/jobs"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(
                                "{\"target\": \"" + Bench.PREFIX + "*\", \"fun\": " + "\"test.ping\"}")),
                202);
        String jid = published.path("jid").asText();
        JsonNode job = call(
                HttpRequest.newBuilder(uri("/api/jobs/" + jid + "?wait=" + timeout.toSeconds()))
                        .GET(),
                200);
        long micros = (System.nanoTime() - t0) / 1000;
        JsonNode missing = job.path("missing");
        if (!missing.isArray() || missing.size() > 0) {
            throw new IOException("publish through the API: job " + jid + " still misses " + missing.size()
                    + " returns after " + timeout.toSeconds() + " s");
        }
        return micros;
    }

    private JsonNode call(HttpRequest.Builder request, int expected) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(
                request.header("Authorization", "Bearer " + token)
                        .timeout(Duration.ofSeconds(120))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != expected) {
            throw new IOException("API " + response.request().method() + " "
                    + response.request().uri().getPath() + ": " + response.statusCode() + " " + response.body());
        }
        return JSON.readTree(response.body());
    }

    private URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + port + pathAndQuery);
    }

    /** Latency to the last return through brine and through the API, and their ratio. */
    record Comparison(double brineP50Ms, double brineP99Ms, double apiP50Ms, double apiP99Ms) {

        static Comparison of(Collection<Long> brineMicros, Collection<Long> apiMicros) {
            List<Long> brine = brineMicros.stream().sorted().toList();
            List<Long> api = apiMicros.stream().sorted().toList();
            return new Comparison(
                    percentile(brine, 0.50) / 1000.0,
                    percentile(brine, 0.99) / 1000.0,
                    percentile(api, 0.50) / 1000.0,
                    percentile(api, 0.99) / 1000.0);
        }

        double ratioP50() {
            return apiP50Ms / brineP50Ms;
        }

        double ratioP99() {
            return apiP99Ms / brineP99Ms;
        }
    }

    // ---------------------------------------------------------------- events to N subscribers

    private List<PingRound> events(BrineClient client) throws Exception {
        int rounds = run.options().apiRounds();
        int count = run.options().apiSubscribers();
        Duration timeout = Duration.ofSeconds(60 + run.minions() / 100);
        List<PingRound> without = new ArrayList<>();
        List<Long> cpuWithout = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            long cpu0 = run.master().cpuMillis();
            without.add(ping.pingRound(client, timeout));
            cpuWithout.add(run.master().cpuMillis() - cpu0);
        }
        List<Subscriber> subscribers = new ArrayList<>();
        Map<String, Integer> emitted = new LinkedHashMap<>();
        List<Long> cpuWith = new ArrayList<>();
        List<PingRound> with = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                subscribers.add(Subscriber.open(port, token, 0));
            }
            for (Subscriber subscriber : subscribers) {
                subscriber.awaitOpen();
            }
            for (int i = 0; i < rounds; i++) {
                long cpu0 = run.master().cpuMillis();
                PingRound round = ping.pingRound(client, timeout);
                // The job's "new" event and one per return.
                int events = 1 + round.returned();
                emitted.put(round.jid(), events);
                awaitDelivered(subscribers, round.jid(), events);
                cpuWith.add(run.master().cpuMillis() - cpu0);
                with.add(round);
            }
        } finally {
            subscribers.forEach(Subscriber::close);
        }
        Delivery delivery = Delivery.of(
                subscribers.stream().map(s -> s.byJob(emitted.keySet())).toList(), emitted);
        double cpuPerRoundWithout = median(cpuWithout);
        double cpuPerRoundWith = median(cpuWith);
        Map<String, Object> events = new LinkedHashMap<>();
        events.put("subscribers", count);
        events.put("rounds", rounds);
        events.put("master_cpu_ms_per_ping_without", cpuPerRoundWithout);
        events.put("master_cpu_ms_per_ping_with", cpuPerRoundWith);
        events.put("master_cpu_with_to_without", round(cpuPerRoundWith / Math.max(1, cpuPerRoundWithout), 2));
        events.put(
                "master_cpu_us_per_event_delivered",
                round(
                        delivery.perSubscriberEmitted() == 0
                                ? 0
                                : (cpuPerRoundWith - cpuPerRoundWithout) * 1000 * rounds / delivery.delivered(),
                        2));
        events.put(
                "ping_last_ms_p50_without",
                round(median(without.stream().map(r -> (long) r.lastMs()).toList()), 1));
        events.put(
                "ping_last_ms_p50_with",
                round(median(with.stream().map(r -> (long) r.lastMs()).toList()), 1));
        events.put("emitted", delivery.perSubscriberEmitted());
        events.put("delivered_min", delivery.min());
        events.put("delivered_max", delivery.max());
        events.put("subscribers_complete", delivery.complete());
        // An event beyond what the bench counts as emitted is a late one (a return after the round's wait), unless
        // its id came to the same reader before: only that is a duplicate.
        events.put(
                "duplicate_ids",
                subscribers.stream().mapToInt(Subscriber::repeated).sum());
        events.put("lost", delivery.lost());
        events.put(
                "how",
                "GET /api/events?tag=brine/job/* with the bench's token on one connection each, read as "
                        + "they come; per round of test.ping to every minion the master emits the job's new event and one per "
                        + "return; master CPU from the publication until every subscriber had all of the job's events (without"
                        + " subscribers: until the last return); medians of the rounds");
        figures.put("events", events);
        System.out.printf(
                "api      events to %d SSE subscribers during test.ping to %,d minions (%d rounds): master "
                        + "CPU per ping %.0f ms with, %.0f ms without (x%.2f); each subscriber got %,d-%,d of %,d events "
                        + "emitted, %d of %d all, %,d lost, %d duplicate ids%n",
                count,
                run.minions(),
                rounds,
                cpuPerRoundWith,
                cpuPerRoundWithout,
                cpuPerRoundWith / Math.max(1, cpuPerRoundWithout),
                delivery.min(),
                delivery.max(),
                delivery.perSubscriberEmitted(),
                delivery.complete(),
                count,
                delivery.lost(),
                events.get("duplicate_ids"));
        if (delivery.lost() > 0) {
            run.failures().add("api: subscribers that keep up lost " + delivery.lost() + " events");
        }
        return without;
    }

    private static void awaitDelivered(List<Subscriber> subscribers, String jid, int events) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (Subscriber subscriber : subscribers) {
            while (subscriber.count(jid) < events && !subscriber.ended()) {
                if (System.nanoTime() > deadline) {
                    return; // what is missing is counted as lost
                }
                MasterProcess.sleep(5);
            }
        }
    }

    static double median(List<Long> values) {
        List<Long> sorted = values.stream().sorted().toList();
        return sorted.isEmpty() ? 0 : percentile(sorted, 0.50);
    }

    /** What every subscriber got of the events emitted, by job. */
    record Delivery(
            int subscribers, long perSubscriberEmitted, long min, long max, int complete, long lost, long delivered) {

        static Delivery of(List<Map<String, Integer>> received, Map<String, Integer> emitted) {
            long each = emitted.values().stream().mapToLong(Integer::longValue).sum();
            long min = Long.MAX_VALUE;
            long max = 0;
            long lost = 0;
            long delivered = 0;
            int complete = 0;
            for (Map<String, Integer> byJob : received) {
                long got = 0;
                long missing = 0;
                for (Map.Entry<String, Integer> job : emitted.entrySet()) {
                    // More of a job than it emitted would be a duplicate: counted, not taken as making up a loss.
                    int n = byJob.getOrDefault(job.getKey(), 0);
                    got += n;
                    missing += Math.max(0, job.getValue() - n);
                }
                min = Math.min(min, got);
                max = Math.max(max, got);
                lost += missing;
                delivered += got;
                complete += missing == 0 ? 1 : 0;
            }
            return new Delivery(received.size(), each, received.isEmpty() ? 0 : min, max, complete, lost, delivered);
        }
    }

    // ---------------------------------------------------------------- a reader that never reads

    private void slowReader(BrineClient client, List<PingRound> baseline) throws Exception {
        Duration timeout = Duration.ofSeconds(60 + run.minions() / 100);
        Path log = run.master().dir.resolve("master.log");
        long logBefore = Files.exists(log) ? Files.size(log) : 0;
        Subscriber fast = Subscriber.open(port, token, 0);
        Subscriber slow = Subscriber.open(port, token, SLOW_RECEIVE_BUFFER);
        List<PingRound> rounds = new ArrayList<>();
        Map<String, Integer> emitted = new LinkedHashMap<>();
        boolean cut = false;
        long slowGot;
        try {
            fast.awaitOpen();
            while (!cut && rounds.size() < SLOW_ROUNDS_MAX) {
                PingRound round = ping.pingRound(client, timeout);
                rounds.add(round);
                emitted.put(round.jid(), 1 + round.returned());
                awaitDelivered(List.of(fast), round.jid(), 1 + round.returned());
                cut = cutOffLogged(log, logBefore);
            }
            slowGot = slow.drain();
        } finally {
            fast.close();
            slow.close();
        }
        Delivery fastDelivery = Delivery.of(List.of(fast.byJob(emitted.keySet())), emitted);
        double during = median(rounds.stream().map(r -> (long) r.lastMs()).toList());
        double before = median(baseline.stream().map(r -> (long) r.lastMs()).toList());
        Map<String, Object> slowFigures = new LinkedHashMap<>();
        slowFigures.put("cut_off", cut && slow.ended());
        slowFigures.put("rounds_until_cut", rounds.size());
        slowFigures.put("events_emitted", fastDelivery.perSubscriberEmitted());
        slowFigures.put("slow_reader_got", slowGot);
        slowFigures.put("reader_keeping_up_got", fastDelivery.delivered());
        slowFigures.put("ping_last_ms_p50_during", during);
        slowFigures.put("ping_last_ms_p50_without_subscribers", before);
        slowFigures.put(
                "how",
                "one reader with a " + SLOW_RECEIVE_BUFFER + "-byte receive buffer that reads nothing "
                        + "and one that keeps up, test.ping rounds until the master logs the cut (at most "
                        + SLOW_ROUNDS_MAX
                        + "); then the slow one reads what it was sent, to its end");
        figures.put("slow_reader", slowFigures);
        System.out.printf(
                "api      a reader that never reads (%d-byte receive buffer): %s after %d pings (%,d events "
                        + "emitted, it got %,d); ping last return p50 %.0f ms meanwhile, %.0f ms without subscribers; the "
                        + "reader that keeps up got %,d of %,d%n",
                SLOW_RECEIVE_BUFFER,
                cut && slow.ended() ? "cut off" : "NOT cut off",
                rounds.size(),
                fastDelivery.perSubscriberEmitted(),
                slowGot,
                during,
                before,
                fastDelivery.delivered(),
                fastDelivery.perSubscriberEmitted());
        if (!(cut && slow.ended())) {
            run.failures().add("api: the reader that never reads was not cut off after " + rounds.size() + " pings");
        }
        if (fastDelivery.lost() > 0) {
            run.failures()
                    .add("api: the reader that keeps up lost " + fastDelivery.lost() + " events next to a slow "
                            + "one");
        }
    }

    private static boolean cutOffLogged(Path log, long from) throws IOException {
        if (!Files.exists(log)) {
            return false;
        }
        byte[] all = Files.readAllBytes(log);
        String added = new String(
                all, (int) Math.min(from, all.length), (int) Math.max(0, all.length - from), StandardCharsets.UTF_8);
        return added.contains("cut off: ");
    }

    /** The job id of an event of {@code brine/job/JID/...}, from its data; empty for other events. */
    static Optional<String> jobOf(String data) {
        String marker = "\"tag\":\"brine/job/";
        int start = data.indexOf(marker);
        if (start < 0) {
            return Optional.empty();
        }
        start += marker.length();
        int end = data.indexOf('/', start);
        return end < 0 ? Optional.empty() : Optional.of(data.substring(start, end));
    }

    /** One {@code GET /api/events} connection; a reader thread counts its events by job, unless it is slow. */
    private static final class Subscriber {
        private final Socket socket;
        private final Map<String, AtomicInteger> byJob = new ConcurrentHashMap<>();
        /** The ids of the events read, and how many came again: a real duplicate, not a late event. */
        private final Set<String> ids = new HashSet<>();

        private volatile int repeated;
        private final CountDownLatch opened = new CountDownLatch(1);
        private volatile boolean ended;
        private volatile String failure;

        private Subscriber(Socket socket) {
            this.socket = socket;
        }

        /** Connects and asks for the job events; {@code receiveBuffer} above 0: a slow reader that reads nothing. */
        static Subscriber open(int port, String token, int receiveBuffer) throws IOException {
            Socket socket = new Socket();
            if (receiveBuffer > 0) {
                socket.setReceiveBufferSize(receiveBuffer);
            }
            socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET /api/events?tag=brine%2Fjob%2F%2A HTTP/1.1\r\nHost: 127.0.0.1:" + port
                            + "\r\nAuthorization: Bearer " + token + "\r\nAccept: text/event-stream\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Subscriber subscriber = new Subscriber(socket);
            if (receiveBuffer == 0) {
                Thread reader = new Thread(subscriber::read, "sse-reader");
                reader.setDaemon(true);
                reader.start();
            }
            return subscriber;
        }

        private void read() {
            try {
                SseReader reader = new SseReader(new BufferedInputStream(socket.getInputStream()));
                if (reader.status() != 200) {
                    failure = "GET /api/events: " + reader.status();
                    return;
                }
                opened.countDown();
                for (Optional<SseReader.Event> event = reader.next(); event.isPresent(); event = reader.next()) {
                    if (event.get().id().isPresent()
                            && !ids.add(event.get().id().get())) {
                        repeated++;
                    }
                    jobOf(event.get().data())
                            .ifPresent(jid -> byJob.computeIfAbsent(jid, j -> new AtomicInteger())
                                    .incrementAndGet());
                }
            } catch (IOException e) {
                if (!socket.isClosed()) {
                    failure = e.toString();
                }
            } finally {
                ended = true;
                opened.countDown();
            }
        }

        void awaitOpen() throws IOException, InterruptedException {
            if (!opened.await(60, TimeUnit.SECONDS) || failure != null || ended) {
                throw new IOException(
                        "an event subscriber did not start: " + (failure != null ? failure : "no " + "answer"));
            }
        }

        /** Reads what the master sent a slow reader, to the end: its events, and whether the master closed. */
        long drain() throws IOException {
            socket.setSoTimeout(30_000);
            long events = 0;
            try {
                SseReader reader = new SseReader(new BufferedInputStream(socket.getInputStream()));
                while (reader.next().isPresent()) {
                    events++;
                }
                ended = true;
            } catch (EOFException e) {
                ended = true; // closed inside a chunk: cut off between two writes
            } catch (SocketTimeoutException e) {
                // still open: not cut off
            }
            return events;
        }

        int count(String jid) {
            AtomicInteger n = byJob.get(jid);
            return n == null ? 0 : n.get();
        }

        int repeated() {
            return repeated;
        }

        boolean ended() {
            return ended;
        }

        Map<String, Integer> byJob(Collection<String> jids) {
            Map<String, Integer> counts = new LinkedHashMap<>();
            jids.forEach(jid -> counts.put(jid, count(jid)));
            return counts;
        }

        void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // closing
            }
        }
    }
}
