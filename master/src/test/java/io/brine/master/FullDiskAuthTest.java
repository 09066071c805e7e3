package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.client.channel.TcpClientChannel;
import io.brine.daemon.testing.LogCapture;
import io.brine.master.jobs.JobCache;
import io.brine.master.jobs.JobRecord;
import io.brine.master.jobs.SharedJobs;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.testing.TinyFileSystem;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master whose pki dir and cache dir (audit log, job cache) are on a full file system: a real one, a 1 MiB tmpfs
 * mounted for the test ({@link TinyFileSystem}, as keytool's FullDiskTest mounts it). Every auth path answers,
 * signed; the master says it is not ready.
 */
class FullDiskAuthTest {

    private static final int WEB1_KEY = 1;
    private static final int WEB2_KEY = 2;

    @TempDir
    Path tmp;

    TinyFileSystem fs;
    WiredMaster master;
    final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeEach
    void mountSmallFileSystem() throws Exception {
        fs = TinyFileSystem.mount(tmp.resolve("fs"), "1m");
    }

    @AfterEach
    void unmount() throws Exception {
        if (master != null) {
            master.close();
        }
        if (fs != null) {
            fs.close();
        }
    }

    @Test
    void aPendingMinionAndAPublisherGetASignedAnswerAndTheMasterIsNotReady() throws Exception {
        master = WiredMaster.start(fs.root(), config -> config.httpPort(0));
        Path jobs = master.config().cachedir().resolve("jobs");
        try (TcpClientChannel first = master.connect();
                TcpClientChannel other = master.connect()) {
            assertThat(((AuthReply) auth(first, "web1", WEB1_KEY).message()).status())
                    .isEqualTo(AuthStatus.PENDING);
            assertThat(((AuthReply) auth(other, "web2", WEB2_KEY).message()).status())
                    .isEqualTo(AuthStatus.PENDING);
        }
        master.keyStore().accept("web2", null, "test-admin");
        try (BrineClient signedIn = master.root();
                LogCapture logs = LogCapture.ofPackage("io.brine.master")) {
            // The audit log's next line needs a page the file system no longer has; auth_requests has room left.
            TinyFileSystem.endAtPage(master.config().cachedir().resolve("audit.log"));
            fs.fill();

            // The pending minion offers its key again: answered (its answer changes nothing), signed.
            try (TcpClientChannel again = master.connect()) {
                Decoded.Ok reply = auth(again, "web1", WEB1_KEY);
                assertThat(reply.verify(WiredMaster.masterKey()))
                        .as("signed by the master's key")
                        .isTrue();
                assertThat(((AuthReply) reply.message()).status()).isEqualTo(AuthStatus.PENDING);
            }
            // The accepted minion: no session without its audit line, a signed "try later".
            try (TcpClientChannel accepted = master.connect()) {
                Decoded.Ok reply = auth(accepted, "web2", WEB2_KEY);
                assertThat(reply.verify(WiredMaster.masterKey()))
                        .as("signed by the master's key")
                        .isTrue();
                AuthReply answer = (AuthReply) reply.message();
                assertThat(answer.status()).isEqualTo(AuthStatus.REFUSED);
                assertThat(answer.reason()).contains("try later");
                assertThat(answer.retryAfterSeconds()).isPositive();
                assertThat(master.master().sessions().byMinion("web2")).isEmpty();
            }
            // A publisher signing in: no session without its audit line, a signed "try later".
            assertThatThrownBy(() -> master.root().close())
                    .isInstanceOf(ClientException.class)
                    .hasMessageContaining("refused publisher root")
                    .hasMessageContaining("try later");
            // A publish on the session opened before: refused with the reason, nothing left in the job cache.
            assertThatThrownBy(() -> signedIn.publish(BrineClient.Job.of("glob", "*", "test.ping")))
                    .isInstanceOf(ClientException.class)
                    .hasMessageContaining("No space left on device");
            try (Stream<Path> left = Files.list(jobs)) {
                assertThat(left).isEmpty();
            }

            HttpResponse<String> ready = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + master.httpPort() + "/readyz"))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(ready.statusCode()).isEqualTo(503);
            assertThat(ready.body()).contains("No space left on device");

            List<String> warnings = logs.at(Level.WARN).stream()
                    .filter(line -> line.contains("No space left"))
                    .toList();
            assertThat(warnings)
                    .anyMatch(line -> line.startsWith("brine auth web1"))
                    .anyMatch(line -> line.startsWith("publisher sign-in root"));
            assertThat(logs.at(Level.ERROR)).isEmpty();
        }
    }

    @Test
    void aJobTheCacheCannotRecordLeavesNoDirectory() throws Exception {
        Path dir = fs.root().resolve("jobs");
        JobCache cache = new JobCache(dir, Duration.ofHours(1), 1 << 20, Clock.systemUTC(), SharedJobs.alone());
        try {
            fs.fill();
            JobRecord job = new JobRecord(
                    "20261128175800000001",
                    "2026-11-28T17:58:00Z",
                    "root",
                    "glob",
                    "*",
                    "test.ping",
                    List.of(),
                    Map.of(),
                    5,
                    List.of("web1"));

            assertThatThrownBy(() -> cache.create(job))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("No space left on device");
            try (Stream<Path> left = Files.list(dir)) {
                assertThat(left).isEmpty();
            }
        } finally {
            cache.close();
        }
    }

    private static Decoded.Ok auth(TcpClientChannel channel, String id, int key) throws Exception {
        channel.send(WiredMaster.authRequest(id, key, WiredMaster.nonce()));
        return (Decoded.Ok) Codec.decode(channel.receive(Duration.ofSeconds(10)), FrameLimits.MAX_FRAME);
    }
}
