package io.brine.master.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.channel.TcpClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.http.MetricsServer;
import io.brine.master.WiredMaster;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code /metrics}, {@code /healthz} and {@code /readyz} of a master wired as the daemon wires it, over HTTP. */
class MetricsEndpointTest {

    private static final int WEB1_KEY = 1;
    private static final int DB1_KEY = 3;

    @TempDir
    Path dir;

    WiredMaster master;
    final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeEach
    void start() throws Exception {
        Path autosign = dir.resolve("autosign.conf");
        Files.writeString(autosign, "web1\n");
        Files.setPosixFilePermissions(autosign, PosixFilePermissions.fromString("rw-------"));
        master = WiredMaster.start(
                dir,
                config -> config.httpPort(0)
                        .acceptance(MasterConfig.Acceptance.builder()
                                .autosignFile(autosign)
                                .build()));
    }

    @AfterEach
    void stop() {
        master.close();
    }

    @Test
    void countersMoveAfterAnAuthAndAJob() throws Exception {
        String before = get("/metrics").body();
        assertThat(value(before, "brine_auth_answers_total", "outcome=\"accepted\""))
                .isZero();
        assertThat(before)
                .contains(
                        "jvm_memory_used_bytes",
                        "brine_minions_connected{transport=\"tcp\"} 0.0",
                        "brine_minions_reachable 0.0");

        try (TcpClientChannel web1 = master.connect()) {
            assertThat(auth(web1, "web1", WEB1_KEY)).isEqualTo(AuthStatus.ACCEPTED);
            assertThat(auth(master.connect(), "db1", DB1_KEY)).isEqualTo(AuthStatus.PENDING);
            String after = get("/metrics").body();
            assertThat(value(after, "brine_auth_answers_total", "outcome=\"accepted\",rule=\"autosign_file\""))
                    .as(after)
                    .isEqualTo(1);
            assertThat(value(after, "brine_auth_answers_total", "outcome=\"pending\""))
                    .isEqualTo(1);
            // An auth's latency is recorded once its reply is on its way, so the reply can arrive first.
            await().untilAsserted(
                            () -> assertThat(value(get("/metrics").body(), "brine_auth_latency_seconds_count", ""))
                                    .isEqualTo(2));
            assertThat(value(after, "brine_keys", "state=\"minions_pre\"")).isEqualTo(1);
            assertThat(value(after, "brine_minions_connected", "transport=\"tcp\""))
                    .isEqualTo(1);
            // On TCP publications go down the session's own connection: reachable as soon as connected.
            assertThat(value(after, "brine_minions_reachable", "")).isEqualTo(1);

            try (BrineClient root = master.root()) {
                root.publish(BrineClient.Job.of("glob", "*", "test.ping"));
            }
            await().untilAsserted(() -> assertThat(value(get("/metrics").body(), "brine_publications_total", ""))
                    .isEqualTo(1));
        }
    }

    @Test
    void healthAndReadinessAnswer() throws Exception {
        assertThat(get("/healthz").statusCode()).isEqualTo(200);
        HttpResponse<String> ready = get("/readyz");
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        assertThat(http.send(
                                HttpRequest.newBuilder(uri("/metrics"))
                                        .POST(HttpRequest.BodyPublishers.noBody())
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .statusCode())
                .isEqualTo(405);
    }

    @Test
    void theMasterIsNotReadyOnceItsKeyStoreIsUnreadable() throws Exception {
        Path accepted = master.config().pkiDir().resolve("minions");
        Files.setPosixFilePermissions(accepted, PosixFilePermissions.fromString("-w-------"));
        try {
            HttpResponse<String> ready = get("/readyz");
            if (!Files.isReadable(accepted)) { // root reads everything: nothing to see then
                assertThat(ready.statusCode()).isEqualTo(503);
                assertThat(ready.body()).contains("key store not readable");
            }
        } finally {
            Files.setPosixFilePermissions(accepted, PosixFilePermissions.fromString("rwx------"));
        }
    }

    @Test
    void aClientThatNeverFinishesItsRequestDoesNotBlockTheNextScrapes() throws Exception {
        // As many idle half-requests as the endpoint has threads but one: the scrape still answers.
        Socket[] idle = new Socket[MetricsServer.MAX_THREADS - 1];
        try {
            for (int i = 0; i < idle.length; i++) {
                idle[i] = new Socket("127.0.0.1", master.httpPort());
                idle[i].getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes());
            }
            assertThat(get("/healthz").statusCode()).isEqualTo(200);
        } finally {
            for (Socket socket : idle) {
                if (socket != null) {
                    socket.close();
                }
            }
        }
    }

    private static AuthStatus auth(TcpClientChannel channel, String id, int key) throws Exception {
        channel.send(WiredMaster.authRequest(id, key, WiredMaster.nonce()));
        byte[] frame = channel.receive(Duration.ofSeconds(10));
        return ((AuthReply) ((Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_FRAME)).message()).status();
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + master.httpPort() + path);
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(uri(path))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The sum of the samples of {@code name} whose labels contain {@code labels}. */
    static double value(String exposition, String name, String labels) {
        Matcher sample = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$")
                .matcher(exposition);
        double sum = 0;
        while (sample.find()) {
            if (sample.group(1) == null ? labels.isEmpty() : sample.group(1).contains(labels)) {
                sum += Double.parseDouble(sample.group(2));
            }
        }
        return sum;
    }
}
