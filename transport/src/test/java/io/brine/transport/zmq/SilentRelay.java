package io.brine.transport.zmq;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay on loopback (port 0) to a target port, whose connections a test can make half-open: after
 * {@link #silence()}, the connections made so far stay open at both ends and pass nothing either way, as when the
 * master's host is gone or a NAT entry was dropped; connections made afterwards are relayed again.
 */
final class SilentRelay implements AutoCloseable {

    private final ServerSocket server;
    private final int target;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final List<AtomicBoolean> silenced = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicLong fromClients = new AtomicLong();

    SilentRelay(int target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "relay-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** Connections accepted so far. */
    int connections() {
        return connections.get();
    }

    /** Bytes read from the clients so far (passed on or not). */
    long bytesFromClients() {
        return fromClients.get();
    }

    /** The connections made so far pass nothing more, either way, and stay open. */
    void silence() {
        silenced.forEach(flag -> flag.set(true));
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket();
                open.add(client);
                open.add(upstream);
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target));
                AtomicBoolean silent = new AtomicBoolean();
                silenced.add(silent);
                connections.incrementAndGet();
                pump(client, upstream, silent, fromClients);
                pump(upstream, client, silent, new AtomicLong());
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void pump(Socket from, Socket to, AtomicBoolean silent, AtomicLong counted) {
        Thread thread = new Thread(
                () -> {
                    byte[] buffer = new byte[16 * 1024];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int read;
                        while ((read = in.read(buffer)) >= 0) {
                            counted.addAndGet(read);
                            if (!silent.get()) {
                                out.write(buffer, 0, read);
                            }
                        }
                    } catch (IOException e) {
                        // closed
                    }
                },
                "relay-pump");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket socket : open) {
            socket.close();
        }
    }
}
