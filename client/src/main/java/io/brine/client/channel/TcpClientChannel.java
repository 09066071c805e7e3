package io.brine.client.channel;

import io.brine.protocol.codec.FrameLimits;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.Instant;

/** One TCP connection to the master, frames with a 4-byte big-endian length prefix (PROTOCOL.md, "TCP"). */
public final class TcpClientChannel implements ClientChannel {

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;

    public TcpClientChannel(String host, int port, Duration connectTimeout) throws IOException {
        socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(host, port), (int) connectTimeout.toMillis());
            in = new DataInputStream(socket.getInputStream());
            out = new DataOutputStream(socket.getOutputStream());
        } catch (IOException e) {
            close();
            throw new IOException("cannot connect to the master at " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void send(byte[] frame) throws IOException {
        try {
            out.writeInt(frame.length);
            out.write(frame);
            out.flush();
        } catch (IOException e) {
            throw new IOException("connection to the master lost: " + e.getMessage(), e);
        }
    }

    @Override
    public byte[] receive(Duration timeout) throws IOException {
        Instant deadline = Instant.now().plus(timeout);
        try {
            socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis())));
            int length = in.readInt();
            if (length < 0 || length > FrameLimits.MAX_FRAME) {
                throw new IOException("the master sent a frame of " + length + " bytes: over the limit");
            }
            byte[] frame = new byte[length];
            // The rest of a started frame gets what is left of the timeout.
            socket.setSoTimeout(
                    (int) Math.max(1, Duration.between(Instant.now(), deadline).toMillis()));
            in.readFully(frame);
            return frame;
        } catch (SocketTimeoutException e) {
            return null;
        } catch (EOFException e) {
            throw new IOException("the master closed the connection");
        } catch (IOException e) {
            throw new IOException("connection to the master lost: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
