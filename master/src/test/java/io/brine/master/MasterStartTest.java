package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionUnknown;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MasterStartTest {

    /** A transport that hands the master a frame from inside start(), as a bound port can. */
    private static final class EagerTransport implements ServerTransport {
        private final byte[] first;
        final List<byte[]> sent = new CopyOnWriteArrayList<>();

        EagerTransport(byte[] first) {
            this.first = first;
        }

        @Override
        public void start(InboundHandler handler) {
            handler.onFrame(() -> "127.0.0.1", first);
        }

        @Override
        public Addresses addresses() {
            return new Addresses(new InetSocketAddress("127.0.0.1", 4506), new InetSocketAddress("127.0.0.1", 4505));
        }

        @Override
        public boolean send(Peer peer, byte[] frame) {
            sent.add(frame);
            return true;
        }

        @Override
        public Set<String> publish(Collection<String> minionIds, byte[] frame) {
            return Set.of();
        }

        @Override
        public void authenticated(Peer peer) {}

        @Override
        public void bind(String minionId, Peer peer) {}

        @Override
        public void unbind(String minionId) {}

        @Override
        public Set<String> reachableMinions() {
            return Set.of();
        }

        @Override
        public void close() {}
    }

    @Test
    void aFrameArrivingWhileTheMasterStartsIsAnswered(@TempDir Path dir) throws Exception {
        byte[] sessionId = new byte[16];
        byte[] unknownSession =
                Codec.encode(new SessionFrame(sessionId, SessionFrame.Direction.MINION_TO_MASTER, 3, new byte[28]));
        EagerTransport transport = new EagerTransport(unknownSession);
        try (WiredMaster master = WiredMaster.start(dir, UnaryOperator.identity(), undelivered -> transport)) {
            // The minion of a session the master does not know is told so, even this early.
            await().until(() -> !transport.sent.isEmpty());
            Decoded.Ok ok = (Decoded.Ok) Codec.decode(transport.sent.get(0), FrameLimits.MAX_FRAME);
            assertThat(ok.message()).isInstanceOf(SessionUnknown.class);
            assertThat(((SessionUnknown) ok.message()).counter()).isEqualTo(3);
            assertThat(ok.verify(WiredMaster.masterKey())).isTrue();
        }
    }
}
