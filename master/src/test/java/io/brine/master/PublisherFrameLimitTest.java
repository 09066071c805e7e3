package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.daemon.config.TransportKind;
import io.brine.protocol.RootPublisher;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.testing.TestKeys;
import io.brine.transport.tcp.TcpServerOptions;
import io.brine.transport.tcp.TcpServerTransport;
import io.brine.transport.zmtp.ZmtpServerOptions;
import io.brine.transport.zmtp.ZmtpServerTransport;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A publisher's connection takes the authenticated frame limit once its signed auth is accepted: a {@code cmd.run}
 * with a large argument is published over either transport, and a request over the master's limit is refused by
 * the client before it is sent, with the session still usable.
 */
class PublisherFrameLimitTest {

    private static final Pattern ENCODED = Pattern.compile("request too large: (\\d+) bytes encoded");

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(TransportKind.class)
    void aPublisherSendsRequestsUpToTheAuthenticatedLimitAndHearsWhyOnePastIsRefused(TransportKind kind)
            throws Exception {
        try (WiredMaster master = WiredMaster.start(dir, config -> config, undelivered -> switch (kind) {
                    case TCP ->
                        new TcpServerTransport("127.0.0.1", 0, TcpServerOptions.defaults(), null, null, undelivered);
                    case ZEROMQ ->
                        new ZmtpServerTransport("127.0.0.1", 0, 0, ZmtpServerOptions.defaults(), null, undelivered);
                });
                BrineClient root = BrineClient.connect(
                        kind,
                        "127.0.0.1",
                        master.port(),
                        RootPublisher.NAME,
                        TestKeys.pair(WiredMaster.ROOT_KEY),
                        (RSAPublicKey) WiredMaster.masterKey(),
                        Duration.ofSeconds(10))) {
            // Over the unauthenticated 64 KiB: the master used to close the connection on it.
            assertThat(root.publish(job("x".repeat(200 * 1024))).jid()).isNotNull();

            String over = "x".repeat(FrameLimits.MAX_FRAME);
            int encoded = encodedSize(root, over);
            assertThat(encoded).isGreaterThan(FrameLimits.MAX_FRAME);
            // The argument's length changes the frame's byte for byte (a str32 either way): one past, then at.
            String onePast = over.substring(encoded - FrameLimits.MAX_FRAME - 1);
            assertThat(encodedSize(root, onePast)).isEqualTo(FrameLimits.MAX_FRAME + 1);
            assertThat(root.publish(job(onePast.substring(1))).jid()).isNotNull();
        }
    }

    private static BrineClient.Job job(String argument) {
        return BrineClient.Job.of("list", "web1", "cmd.run", argument);
    }

    /** The encoded size the client names when it refuses {@code argument}'s job. */
    private static int encodedSize(BrineClient root, String argument) {
        Throwable refused = catchThrowable(() -> root.publish(job(argument)));
        assertThat(refused).isInstanceOf(ClientException.class).hasMessageContaining("nothing was sent");
        Matcher matcher = ENCODED.matcher(refused.getMessage());
        assertThat(matcher.find()).isTrue();
        return Integer.parseInt(matcher.group(1));
    }
}
