package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.client.BrineClient;
import io.brine.client.channel.TcpClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.master.publish.JobPublisher;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import io.brine.transport.tcp.TcpServerOptions;
import io.brine.transport.tcp.TcpServerTransport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A publication the transport took but lost later, on its own thread, reaches the jobs in flight: the minion is
 * recorded as unreachable for that job, as one refused at once is.
 */
class UndeliveredPublicationTest {

    static final int MINION_KEY = 1;
    static final int MAX_QUEUED = 1024 * 1024;
    static final String BIG = "x".repeat(200 * 1024);

    @Test
    void aPublicationLostOnTheTransportThreadIsRecordedWithItsJob(@TempDir Path dir) throws Exception {
        TcpServerOptions options = TcpServerOptions.defaults()
                .withFrameLimits(FrameLimits.MAX_UNAUTHENTICATED, 512 * 1024)
                .withMaxQueuedBytes(MAX_QUEUED);
        try (WiredMaster wired = WiredMaster.start(
                        dir,
                        config -> config.acceptance(MasterConfig.Acceptance.builder()
                                .autoAccept(true)
                                .build()),
                        undelivered -> new TcpServerTransport("127.0.0.1", 0, options, null, null, undelivered));
                TcpClientChannel minion = wired.connect();
                BrineClient root = wired.root()) {
            byte[] nonce = WiredMaster.nonce();
            minion.send(WiredMaster.authRequest("web1", MINION_KEY, nonce));
            Decoded.Ok ok = (Decoded.Ok) Codec.decode(minion.receive(Duration.ofSeconds(10)), FrameLimits.MAX_FRAME);
            assertThat(((AuthReply) ok.message()).status()).isEqualTo(AuthStatus.ACCEPTED);

            // From here on the minion reads nothing: once the kernel's buffers are full, its queue on the master
            // grows until a publication would take it over the limit, which closes the connection.
            JobPublisher jobs = wired.master().jobs();
            List<JobPublisher.Published> published = new ArrayList<>();
            JobPublisher.Published last;
            do {
                last = jobs.publish(
                        "test", "list", "web1", List.of("web1"), "test.echo", List.of(BIG), Map.of(), 10, null);
                published.add(last);
            } while (last.unreachable().isEmpty() && published.size() < 1000);
            assertThat(last.unreachable())
                    .as("refused at once: over the queue limit")
                    .containsExactly("web1");

            // What was queued but not written when the connection closed was lost on the transport's thread.
            List<String> queued = published.subList(0, published.size() - 1).stream()
                    .map(JobPublisher.Published::jid)
                    .toList();
            assertThat(published.subList(0, published.size() - 1))
                    .allMatch(p -> p.unreachable().isEmpty());
            await().until(() -> queued.stream()
                    .anyMatch(jid -> jobs.active().unreachable(jid).contains("web1")));
            String lost = queued.stream()
                    .filter(jid -> jobs.active().unreachable(jid).contains("web1"))
                    .findFirst()
                    .orElseThrow();
            assertThat(root.job(lost)).containsEntry("unreachable", List.of("web1"));
        }
    }
}
