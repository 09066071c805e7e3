package io.brine.bench;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.Suite;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A hostile auth flood (issue 30 item 3): {@code sources} TCP connections, from 127.0.0.2 on (every loopback address
 * is this host's), each sending {@code perSecond} brine auth requests a second that each cost a signed refusal on a
 * master without the auth work budget: half not signed by the key they offer, half offering an unusable key. One
 * thread sends; one per connection counts the answers it gets.
 */
final class AuthFlood implements AutoCloseable {

    /** The shipped {@code auth_rate_per_source}: what one source gets past a master with the default limits. */
    static final int PER_SOURCE_PER_SECOND = 20;

    private static final long TICK_NANOS = TimeUnit.SECONDS.toNanos(1) / PER_SOURCE_PER_SECOND;

    private final List<Socket> sockets = new ArrayList<>();
    private final List<DataOutputStream> outs = new ArrayList<>();
    private final byte[][] frames;
    private final Thread thread;
    private volatile boolean running = true;
    private long sent;
    private final AtomicLong answered = new AtomicLong();
    private long failed;

    private AuthFlood(byte[][] frames) {
        this.frames = frames;
        this.thread = new Thread(this::run, "bench-auth-flood");
        this.thread.setDaemon(true);
    }

    /** Connects {@code sources} sources to {@code port} on 127.0.0.1 and starts sending. */
    static AuthFlood start(int port, int sources) throws IOException {
        KeyPair key = RsaKeys.generate(2048);
        KeyPair other = RsaKeys.generate(2048);
        byte[] nonce = new byte[32];
        new SecureRandom().nextBytes(nonce);
        byte[] der = key.getPublic().getEncoded();
        // The same bytes each time: a bad signature or key is refused before the master remembers the nonce.
        byte[] notSignedByItsKey = Codec.encodeSigned(
                new AuthRequest(
                        Suite.RSA_OAEP_PSS_AES256GCM,
                        "flood",
                        der,
                        nonce,
                        System.currentTimeMillis(),
                        Map.of(),
                        null,
                        null),
                other.getPrivate());
        byte[] badKey = Codec.encodeSigned(
                new AuthRequest(
                        Suite.RSA_OAEP_PSS_AES256GCM,
                        "flood",
                        Arrays.copyOf(der, der.length + 16),
                        nonce,
                        System.currentTimeMillis(),
                        Map.of(),
                        null,
                        null),
                key.getPrivate());
        AuthFlood flood = new AuthFlood(new byte[][] {notSignedByItsKey, badKey});
        try {
            for (int i = 0; i < sources; i++) {
                Socket socket = new Socket();
                flood.sockets.add(socket);
                socket.bind(new InetSocketAddress(
                        InetAddress.getByName("127.0." + ((i + 2) / 256) + "." + ((i + 2) % 256)), 0));
                socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
                socket.setTcpNoDelay(true);
                flood.outs.add(new DataOutputStream(socket.getOutputStream()));
                DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 1 << 16));
                Thread reader = new Thread(() -> flood.countAnswers(in), "bench-auth-flood-answers-" + i);
                reader.setDaemon(true);
                reader.start();
            }
        } catch (IOException e) {
            flood.close();
            throw e;
        }
        flood.thread.start();
        return flood;
    }

    private void run() {
        long next = System.nanoTime();
        int tick = 0;
        while (running) {
            for (int i = 0; i < outs.size(); i++) {
                try {
                    DataOutputStream out = outs.get(i);
                    byte[] frame = frames[(tick + i) % frames.length];
                    out.writeInt(frame.length);
                    out.write(frame);
                    out.flush();
                    sent++;
                } catch (IOException e) {
                    failed++;
                }
            }
            tick++;
            next += TICK_NANOS;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(wait);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /** Counts the answers one connection gets, until it is closed: on a reader thread of its own. */
    private void countAnswers(DataInputStream in) {
        try {
            while (true) {
                in.skipNBytes(in.readInt());
                answered.incrementAndGet();
            }
        } catch (IOException e) {
            // closed: the flood is over
        }
    }

    /** Stops sending: {requests sent, answers received, sends that failed}. */
    long[] stop() throws InterruptedException {
        running = false;
        thread.join(10_000);
        return new long[] {sent, answered.get(), failed};
    }

    @Override
    public void close() {
        running = false;
        for (Socket socket : sockets) {
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
