package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.store.audit.AuditLog;
import io.brine.master.jobs.JobCache;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.crypto.Pem;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionUnknown;
import io.brine.protocol.testing.TestKeys;
import io.brine.protocol.codec.FrameLimits;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MasterStartTest {

    private static final int MASTER_KEY = 140;

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
        public void bind(String minionId, Peer peer) {
        }

        @Override
        public void unbind(String minionId) {
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aFrameArrivingWhileTheMasterStartsIsAnswered(@TempDir Path dir) throws Exception {
        Path pki = dir.resolve("pki");
        Path cache = dir.resolve("cache");
        AtomicFiles.ensureDirectory(pki);
        AtomicFiles.write(pki.resolve("master.pem"), Pem.bytes(TestKeys.privatePem(MASTER_KEY)),
                AtomicFiles.OWNER_READ);
        Clock clock = Clock.systemUTC();
        byte[] sessionId = new byte[16];
        byte[] unknownSession = Codec.encode(new SessionFrame(sessionId, SessionFrame.Direction.MINION_TO_MASTER, 3,
                new byte[28]));
        EagerTransport transport = new EagerTransport(unknownSession);
        try (AuditLog audit = AuditLog.open(cache, clock);
                KeyStore keys = FileKeyStore.open(KeyStoreOptions.builder(pki).auditLog(audit)
                        .pollInterval(Duration.ZERO).build());
                JobCache jobs = new JobCache(cache.resolve("jobs"), Duration.ofHours(1), 1 << 20, clock);
                Master master = new Master(keys, transport, new Master.Settings(Duration.ofDays(1), 100, 100, 2, 0,
                        new AcceptancePolicies(List.of(), List.of()), Map.of(), null), audit, jobs, clock)) {
            master.start();
            // The minion of a session the master does not know is told so, even this early.
            await().until(() -> !transport.sent.isEmpty());
            Decoded.Ok ok = (Decoded.Ok) Codec.decode(transport.sent.get(0), FrameLimits.MAX_FRAME);
            assertThat(ok.message()).isInstanceOf(SessionUnknown.class);
            assertThat(((SessionUnknown) ok.message()).counter()).isEqualTo(3);
            assertThat(ok.verify(TestKeys.pair(MASTER_KEY).getPublic())).isTrue();
        }
    }
}
