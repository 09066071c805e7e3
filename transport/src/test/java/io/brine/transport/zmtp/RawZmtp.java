package io.brine.transport.zmtp;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A ZMTP peer written by hand over a plain socket, for hostile and exact tests: it sends exactly the bytes it is
 * told to, from the local address it is told to, and reads the server's frames one by one.
 */
final class RawZmtp implements AutoCloseable {

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    private RawZmtp(Socket socket) throws IOException {
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.in = new DataInputStream(socket.getInputStream());
    }

    /** Connected from {@code localAddress} (any 127.x.y.z works on Linux loopback) to 127.0.0.1:{@code port}. */
    static RawZmtp connect(String localAddress, int port) throws IOException {
        Socket socket = new Socket();
        socket.bind(new InetSocketAddress(InetAddress.getByName(localAddress), 0));
        socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 10_000);
        socket.setSoTimeout(30_000);
        return new RawZmtp(socket);
    }

    /** A connection a test's own server accepted (the raw peer is then the server). */
    static RawZmtp accepted(Socket socket) throws IOException {
        socket.setSoTimeout(30_000);
        return new RawZmtp(socket);
    }

    /** The peer's 64-byte greeting. */
    byte[] readGreeting() throws IOException {
        return in.readNBytes(64);
    }

    /** Greeting and READY of {@code type}, then the server's greeting and READY read and checked. */
    static RawZmtp handshaken(String localAddress, int port, String type) throws IOException {
        RawZmtp peer = connect(localAddress, port);
        peer.send(Wire.handshake(type));
        byte[] greeting = peer.in.readNBytes(64);
        if (greeting.length != 64 || (greeting[0] & 0xff) != 0xff) {
            throw new IOException("no ZMTP greeting from the server");
        }
        Frame ready = peer.readFrame();
        if (!ready.command() || !new String(ready.body(), 1, 5, StandardCharsets.US_ASCII).equals("READY")) {
            throw new IOException("no READY from the server");
        }
        return peer;
    }

    RawZmtp send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** Sends, unless the server has closed the connection meanwhile (then false). */
    boolean trySend(byte[] bytes) {
        try {
            send(bytes);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** One frame from the server: flags and body. */
    record Frame(int flags, byte[] body) {
        boolean command() {
            return (flags & Wire.COMMAND) != 0;
        }

        boolean more() {
            return (flags & Wire.MORE) != 0;
        }

        boolean isPing() {
            return command() && body.length >= 5 && body[0] == 4 && body[1] == 'P' && body[2] == 'I';
        }
    }

    Frame readFrame() throws IOException {
        int flags = in.readUnsignedByte();
        long size = (flags & Wire.LONG) != 0 ? in.readLong() : in.readUnsignedByte();
        byte[] body = new byte[(int) size];
        in.readFully(body);
        return new Frame(flags, body);
    }

    /** The next message, skipping commands (the server's PINGs). */
    List<byte[]> readMessage() throws IOException {
        List<byte[]> parts = new ArrayList<>();
        while (true) {
            Frame frame = readFrame();
            if (frame.command()) {
                continue;
            }
            parts.add(frame.body());
            if (!frame.more()) {
                return parts;
            }
        }
    }

    /**
     * Reads until the server closes the connection; returns what came, as raw bytes. Fails (by the socket timeout)
     * if the server keeps it open.
     */
    byte[] readUntilClosed() throws IOException {
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        try {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                seen.write(buffer, 0, n);
            }
        } catch (SocketException e) {
            // reset by the server: closed too
        }
        return seen.toByteArray();
    }

    /** Whether the server has closed the connection, judged by a write that fails (after a read that ends). */
    boolean closedByServer() {
        try {
            readUntilClosed();
            return true;
        } catch (EOFException e) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
