package io.brine.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on a loopback port (0, read back) to one ZooKeeper server, that a test can cut and heal: a network
 * partition between one master and the ensemble. While cut, open connections are closed and new ones are closed as
 * soon as they are accepted. {@link #cutAfter} cuts it right after a request holding given bytes was passed on: a
 * connection lost while a write was sent, its answer never seen.
 */
final class CuttableProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean cut;
    private volatile byte[] cutAfter;

    CuttableProxy(String targetHostPort) throws IOException {
        int colon = targetHostPort.lastIndexOf(':');
        this.target = new InetSocketAddress(
                targetHostPort.substring(0, colon), Integer.parseInt(targetHostPort.substring(colon + 1)));
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String connectString() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    void cut() {
        cut = true;
        closeAll();
    }

    void heal() {
        cut = false;
    }

    /** Cuts once the client has sent bytes holding {@code marker} (in one read), after passing them on. */
    void cutAfter(String marker) {
        cutAfter = marker.getBytes(StandardCharsets.UTF_8);
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (cut) {
                    client.close();
                    continue;
                }
                Socket server = new Socket(target.getAddress(), target.getPort());
                sockets.add(client);
                sockets.add(server);
                pump(client, server, true);
                pump(server, client, false);
            } catch (IOException e) {
                // closed, or the target refused: the client sees its connection end
            }
        }
    }

    private void pump(Socket from, Socket to, boolean fromClient) {
        Thread t = new Thread(
                () -> {
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        byte[] buffer = new byte[64 * 1024];
                        for (int n; (n = in.read(buffer)) >= 0; ) {
                            byte[] marker = cutAfter;
                            boolean last = fromClient && marker != null && contains(buffer, n, marker);
                            if (last) {
                                // Cut before the request is passed on: its answer can never come back, however
                                // fast the server is and however late this thread runs again.
                                cutAfter = null;
                                cut = true;
                            } else if (!fromClient && cut) {
                                break;
                            }
                            out.write(buffer, 0, n);
                            out.flush();
                            if (last) {
                                cut();
                            }
                        }
                    } catch (IOException e) {
                        // either side closed
                    } finally {
                        close(from);
                        close(to);
                    }
                },
                "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static boolean contains(byte[] buffer, int length, byte[] marker) {
        for (int i = 0; i + marker.length <= length; i++) {
            if (Arrays.equals(buffer, i, i + marker.length, marker, 0, marker.length)) {
                return true;
            }
        }
        return false;
    }

    private void closeAll() {
        sockets.forEach(CuttableProxy::close);
        sockets.clear();
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        closeAll();
    }
}
