package io.brine.transport.tcp;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** A minion's side of the TCP transport in a few blocking calls, byte by byte when a test needs that. */
final class RawPeer implements AutoCloseable {

    final Socket socket;
    private final DataOutputStream out;
    private final DataInputStream in;

    private RawPeer(Socket socket) throws IOException {
        this.socket = socket;
        this.out = new DataOutputStream(socket.getOutputStream());
        this.in = new DataInputStream(socket.getInputStream());
    }

    static RawPeer connect(int port) throws IOException {
        return connect(port, 0);
    }

    /** @param receiveBuffer SO_RCVBUF to ask for before connecting; 0 for the system's */
    static RawPeer connect(int port, int receiveBuffer) throws IOException {
        Socket socket = new Socket();
        if (receiveBuffer > 0) {
            socket.setReceiveBufferSize(receiveBuffer);
        }
        socket.setSoTimeout(10_000);
        socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        return new RawPeer(socket);
    }

    RawPeer send(String text) throws IOException {
        return send(text.getBytes(StandardCharsets.US_ASCII));
    }

    RawPeer send(byte[] frame) throws IOException {
        out.writeInt(frame.length);
        out.write(frame);
        out.flush();
        return this;
    }

    RawPeer sendRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    RawPeer sendPrefix(long length) throws IOException {
        out.writeInt((int) length);
        out.flush();
        return this;
    }

    byte[] receive() throws IOException {
        int length = in.readInt();
        byte[] frame = new byte[length];
        in.readFully(frame);
        return frame;
    }

    String receiveText() throws IOException {
        return new String(receive(), StandardCharsets.US_ASCII);
    }

    /** True when the server closes the connection within {@code within}; bytes sent meanwhile are skipped. */
    boolean closedWithin(Duration within) throws IOException {
        long deadline = System.nanoTime() + within.toNanos();
        InputStream raw = socket.getInputStream();
        byte[] skip = new byte[8192];
        while (System.nanoTime() < deadline) {
            socket.setSoTimeout((int) Math.max(1, Math.min(200, (deadline - System.nanoTime()) / 1_000_000)));
            try {
                if (raw.read(skip) < 0) {
                    return true;
                }
            } catch (SocketTimeoutException e) {
                // still open
            } catch (SocketException | EOFException e) {
                return true; // reset
            }
        }
        return false;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
