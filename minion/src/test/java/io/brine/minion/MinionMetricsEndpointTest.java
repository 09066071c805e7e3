package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.MinionConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.daemon.files.AtomicFiles;
import io.brine.minion.auth.MinionKeys;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.testing.TestKeys;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The minion's optional {@code /metrics}, {@code /healthz} and {@code /readyz}, over HTTP. */
class MinionMetricsEndpointTest {

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Test
    void aMinionTheMasterHasNotAcceptedIsAliveButNotReady(@TempDir Path dir) throws Exception {
        // A master that takes the connection and never answers.
        try (ServerSocket silentMaster = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            MinionConfig config = MinionConfig.builder(dir, "web1")
                    .master("127.0.0.1")
                    .transport(TransportKind.TCP)
                    .tcpPort(silentMaster.getLocalPort())
                    .httpPort(0)
                    .build();
            AtomicFiles.ensureDirectory(config.pkiDir());
            AtomicFiles.write(
                    config.pkiDir().resolve(MinionKeys.PRIVATE_FILE),
                    Pem.bytes(TestKeys.privatePem(MinionFixture.MINION_KEY)),
                    AtomicFiles.OWNER_READ);
            try (MinionDaemon minion = MinionDaemon.start(config, Clock.systemUTC())) {
                assertThat(get(minion, "/healthz").statusCode()).isEqualTo(200);
                HttpResponse<String> ready = get(minion, "/readyz");
                assertThat(ready.statusCode()).isEqualTo(503);
                assertThat(ready.body()).contains("not accepted by the master: connecting");
                assertThat(get(minion, "/metrics").body())
                        .contains(
                                "brine_minion_state{state=\"connecting\"} 1",
                                "brine_minion_state{state=\"accepted\"} 0",
                                "process_uptime_seconds",
                                "brine_minion_jobs_total 0",
                                "brine_minion_jobs_failed_total 0",
                                "brine_minion_returns_queued 0",
                                "brine_minion_returns_resent_total 0",
                                "brine_minion_stale_publications_total 0",
                                "brine_build_info{commit=\"",
                                "# TYPE process_cpu_seconds_total counter",
                                "process_files_open_files ");
            }
        }
    }

    @Test
    void withoutHttpPortNothingIsServed(@TempDir Path dir) throws Exception {
        try (ServerSocket silentMaster = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            MinionConfig config = MinionConfig.builder(dir, "web1")
                    .master("127.0.0.1")
                    .transport(TransportKind.TCP)
                    .tcpPort(silentMaster.getLocalPort())
                    .build();
            AtomicFiles.ensureDirectory(config.pkiDir());
            AtomicFiles.write(
                    config.pkiDir().resolve(MinionKeys.PRIVATE_FILE),
                    Pem.bytes(TestKeys.privatePem(MinionFixture.MINION_KEY)),
                    AtomicFiles.OWNER_READ);
            try (MinionDaemon minion = MinionDaemon.start(config, Clock.systemUTC())) {
                assertThat(minion.httpPort()).isZero();
            }
        }
    }

    private HttpResponse<String> get(MinionDaemon minion, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + minion.httpPort() + path))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
