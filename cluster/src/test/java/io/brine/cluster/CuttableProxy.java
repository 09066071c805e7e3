package io.brine.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on a loopback port (0, read back) to one ZooKeeper server, that a test can cut and heal: a network
 * partition between one master and the ensemble. While cut, open connections are closed and new ones are closed as
 * soon as they are accepted.
 */
final class CuttableProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean cut;

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
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                // closed, or the target refused: the client sees its connection end
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(
                () -> {
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        in.transferTo(out);
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
