package io.brine.transport.tcp;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import javax.net.ServerSocketFactory;

/** A master's side of the TCP framing over plain blocking sockets: accepts, records frames, answers on demand. */
final class FakeMaster implements AutoCloseable {

    /** One accepted connection. */
    static final class Connection {
        final Socket socket;
        final BlockingQueue<String> frames = new LinkedBlockingQueue<>();
        private final DataOutputStream out;

        Connection(Socket socket) throws IOException {
            this.socket = socket;
            this.out = new DataOutputStream(socket.getOutputStream());
        }

        synchronized void send(String text) throws IOException {
            send(text.getBytes(StandardCharsets.US_ASCII));
        }

        synchronized void send(byte[] frame) throws IOException {
            out.writeInt(frame.length);
            out.write(frame);
            out.flush();
        }

        synchronized void sendPrefix(int length) throws IOException {
            out.writeInt(length);
            out.flush();
        }
    }

    final ServerSocket server;
    final List<Connection> connections = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    FakeMaster(ServerSocketFactory factory, int port) throws IOException {
        server = factory.createServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        acceptor = new Thread(this::accept, "fake-master");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    static FakeMaster plain(int port) throws IOException {
        return new FakeMaster(ServerSocketFactory.getDefault(), port);
    }

    int port() {
        return server.getLocalPort();
    }

    Connection last() {
        return connections.get(connections.size() - 1);
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                Connection connection = new Connection(socket);
                connections.add(connection);
                Thread reader = new Thread(() -> read(connection), "fake-master-reader");
                reader.setDaemon(true);
                reader.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void read(Connection connection) {
        try (DataInputStream in = new DataInputStream(connection.socket.getInputStream())) {
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                connection.frames.add(new String(frame, StandardCharsets.US_ASCII));
            }
        } catch (IOException e) {
            // closed
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Connection connection : connections) {
            connection.socket.close();
        }
    }
}
