package io.brine.daemon.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A daemon's operator endpoint: {@code GET /metrics} (Prometheus text), {@code /healthz} (200 while the process
 * answers) and {@code /readyz} (200 when {@code readiness} finds no problem, else 503 with one problem a line). The
 * JDK's HTTP server, on threads of its own, never the daemon's request pools.
 *
 * <p>Bounded: at most {@value #MAX_THREADS} handler threads (the JDK server reads a request on the handler
 * thread), no queue (an exchange beyond them is dropped, and its connection closed by the server's timer); a
 * request must arrive whole and its answer be taken within the JDK server's {@code sun.net.httpserver.maxReqTime}
 * / {@code maxRspTime}, which {@link #limitSlowClients()} sets to {@value #CLIENT_SECONDS} s unless the operator
 * set them. So a client that trickles bytes (slow loris) holds a thread for that long at most, and it takes more
 * than {@value #MAX_THREADS} such clients at once to delay a scrape. The endpoint binds loopback by default.
 */
public final class MetricsServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MetricsServer.class);
    public static final int MAX_THREADS = 16;
    static final String CLIENT_SECONDS = "5";

    private final HttpServer server;
    private final ThreadPoolExecutor executor;

    private MetricsServer(HttpServer server, ThreadPoolExecutor executor) {
        this.server = server;
        this.executor = executor;
    }

    /**
     * Binds {@code host:port} (0: a port the system chooses) and serves.
     *
     * @param metrics the Prometheus text exposition, made at each scrape
     * @param readiness what keeps the daemon from being ready; empty when it is
     */
    public static MetricsServer start(
            String host, int port, String name, Supplier<String> metrics, Supplier<List<String>> readiness)
            throws IOException {
        limitSlowClients();
        HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 16);
        AtomicInteger count = new AtomicInteger();
        ThreadPoolExecutor executor = new ThreadPoolExecutor(
                1,
                MAX_THREADS,
                60,
                TimeUnit.SECONDS,
                new SynchronousQueue<>(),
                runnable -> {
                    Thread thread = new Thread(runnable, name + "-http-" + count.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                },
                (runnable, pool) -> LOG.debug("HTTP request dropped: {} being served already", MAX_THREADS));
        server.setExecutor(executor);
        server.createContext(
                "/metrics",
                exchange -> answer(
                        exchange, () -> new Answer(200, "text/plain; version=0.0.4; charset=utf-8", metrics.get())));
        server.createContext("/healthz", exchange -> answer(exchange, () -> new Answer(200, "text/plain", "ok\n")));
        server.createContext(
                "/readyz",
                exchange -> answer(exchange, () -> {
                    List<String> problems = readiness.get();
                    return problems.isEmpty()
                            ? new Answer(200, "text/plain", "ready\n")
                            : new Answer(503, "text/plain", String.join("\n", problems) + "\n");
                }));
        server.start();
        LOG.info(
                "Metrics and health on http://{}:{}/metrics, /healthz, /readyz",
                host,
                server.getAddress().getPort());
        return new MetricsServer(server, executor);
    }

    /** The JDK server reads these once; an operator's {@code -D} wins. */
    private static void limitSlowClients() {
        for (String property : List.of("sun.net.httpserver.maxReqTime", "sun.net.httpserver.maxRspTime")) {
            if (System.getProperty(property) == null) {
                System.setProperty(property, CLIENT_SECONDS);
            }
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private record Answer(int status, String contentType, String body) {}

    private static void answer(HttpExchange exchange, Supplier<Answer> answer) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            exchange.getRequestBody().close();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            Answer made;
            try {
                made = answer.get();
            } catch (RuntimeException e) {
                LOG.error("Bug: {} failed", exchange.getRequestURI().getPath(), e);
                made = new Answer(500, "text/plain", "internal error\n");
            }
            byte[] body = made.body().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", made.contentType());
            exchange.getResponseHeaders().set("Cache-Control", "no-store");
            if (method.equals("HEAD")) {
                exchange.sendResponseHeaders(made.status(), -1);
                return;
            }
            exchange.sendResponseHeaders(made.status(), body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
