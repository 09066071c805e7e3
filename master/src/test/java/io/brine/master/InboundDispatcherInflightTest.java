package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.daemon.config.MasterConfig;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import io.brine.transport.tcp.TcpServerOptions;
import io.brine.transport.tcp.TcpServerTransport;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every frame the transport counts in flight is handed back with {@code handled()}, even when the dispatcher fails
 * on it: bytes left counted would pause the connection, and in the end every connection, for good.
 */
class InboundDispatcherInflightTest {

    @TempDir
    Path dir;

    WiredMaster master;

    @AfterEach
    void stop() {
        if (master != null) {
            master.close();
        }
    }

    @Test
    void aFrameTheDispatcherFailsOnIsStillHandedBack() throws Exception {
        Recording[] recording = new Recording[1];
        master = WiredMaster.start(
                dir,
                config -> config.acceptance(MasterConfig.Acceptance.builder().build()),
                undelivered -> recording[0] = new Recording(
                        new TcpServerTransport("127.0.0.1", 0, TcpServerOptions.defaults(), null, null, undelivered)));
        Peer failing = new Peer() {
            @Override
            public String remoteAddress() {
                return "127.0.0.9";
            }

            @Override
            public Framing framing() {
                throw new IllegalStateException("a bug on the way in");
            }
        };

        assertThatThrownBy(() -> recording[0].handler.onFrame(failing, new byte[100]))
                .hasMessageContaining("a bug on the way in");
        assertThat(recording[0].handled).containsExactly(100);
    }

    /** The real transport, recording handled() instead of passing it on, and the dispatcher it is started with. */
    static final class Recording extends ForwardingTransport {
        final List<Integer> handled = new CopyOnWriteArrayList<>();
        volatile InboundHandler handler;

        Recording(ServerTransport inner) {
            super(inner);
        }

        @Override
        public void start(InboundHandler handler) throws IOException {
            this.handler = handler;
            inner.start(handler);
        }

        @Override
        public void handled(Peer peer, int bytes) {
            // Recorded only: the peer of this test is not one of the real transport's connections.
            handled.add(bytes);
        }
    }
}
