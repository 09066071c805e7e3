package io.brine.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

/**
 * A TCP relay on loopback whose connections a test can cut, as a network loss would. It holds its own port (bound
 * to 0) for as long as it lives, so it can also stand in front of a master that is not up yet: while the target is
 * 0, a connection is closed at once, as a refused one would be.
 */
final class CuttableProxy implements AutoCloseable {

    private final ServerSocket server;
    private final IntSupplier target;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    final AtomicInteger connections = new AtomicInteger();
    private volatile CountDownLatch held = new CountDownLatch(0);

    CuttableProxy(int target) throws IOException {
        this(() -> target);
    }

    /** @param target the port to relay each new connection to, read as it arrives; 0 for none yet */
    CuttableProxy(IntSupplier target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /**
     * From now on, bytes from clients are held (not passed on) until {@link #release}: connections are still made
     * to the target, which sees them open and silent.
     */
    void hold() {
        held = new CountDownLatch(1);
    }

    /** Passes on what was held, and from then on everything again. */
    void release() {
        held.countDown();
    }

    /** Closes every connection through the proxy; new ones are relayed again. */
    void cut() {
        for (Socket socket : open) {
            close(socket);
        }
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return;
            }
            int port = target.getAsInt();
            if (port == 0) {
                close(client);
                continue;
            }
            try {
                Socket upstream = new Socket();
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                open.add(client);
                open.add(upstream);
                connections.incrementAndGet();
                pump(client, upstream, true);
                pump(upstream, client, false);
            } catch (IOException e) {
                // The target refused: the client sees its connection end.
                close(client);
            }
        }
    }

    private void pump(Socket from, Socket to, boolean holdable) {
        Thread thread = new Thread(
                () -> {
                    byte[] buffer = new byte[64 * 1024];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int read;
                        while ((read = in.read(buffer)) >= 0) {
                            if (holdable) {
                                held.await();
                            }
                            out.write(buffer, 0, read);
                        }
                    } catch (IOException e) {
                        // cut
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        close(from);
                        close(to);
                    }
                },
                "proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    private void close(Socket socket) {
        open.remove(socket);
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        cut();
    }
}
