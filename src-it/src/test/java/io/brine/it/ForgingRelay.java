package io.brine.it;

import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.FrameType;
import io.brine.protocol.message.Suite;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.KeyPair;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An on-path attacker on brine's TCP transport, on loopback: it relays whole frames between minions and a master
 * ({@code length:u32be || frame}) and, as told, answers each auth request it sees with a reply of its own. The nonce
 * travels in clear, so its replies answer the minion's request; they carry and are signed by the forger's key. It
 * can also hold back a publication from the master and deliver it later ({@link #withholdNextPublication}), send the
 * last one again ({@link #replayLastPublication}) or a copy of it with a broken signature
 * ({@link #forgeLastPublication}).
 */
final class ForgingRelay implements AutoCloseable {

    /** What the relay does with an auth request. */
    enum Mode {
        /** Passes it on, and the master's answer back. */
        PASS,
        /** Answers it with a forged reply and withholds it from the master. */
        FORGE,
        /** Answers it with a forged reply first, and passes it on: the master's reply comes second. */
        RACE
    }

    private final ServerSocket server;
    private final int target;
    private final KeyPair forger;
    private final AuthStatus forgedStatus;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private volatile Mode mode = Mode.FORGE;
    final AtomicInteger authRequests = new AtomicInteger();
    final AtomicInteger forged = new AtomicInteger();
    private volatile boolean withholding;
    private final AtomicReference<byte[]> withheld = new AtomicReference<>();
    private final AtomicReference<byte[]> lastPublication = new AtomicReference<>();
    private volatile DataOutputStream lastToMinion;

    /**
     * @param target       the master's TCP port
     * @param forger       the key the forged replies carry and are signed with
     * @param forgedStatus what the forged replies say
     */
    ForgingRelay(int target, KeyPair forger, AuthStatus forgedStatus) throws IOException {
        this.target = target;
        this.forger = forger;
        this.forgedStatus = forgedStatus;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "forger-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    void mode(Mode mode) {
        this.mode = mode;
    }

    /** Holds back the next publication the master sends, until {@link #deliverWithheld}. */
    void withholdNextPublication() {
        withholding = true;
    }

    boolean holdsPublication() {
        return withheld.get() != null;
    }

    /** Delivers the publication held back, on the minion's latest connection. */
    void deliverWithheld() throws IOException {
        write(lastToMinion, withheld.getAndSet(null));
    }

    /** Sends the last publication the master sent the minion again: a replay. */
    void replayLastPublication() throws IOException {
        write(lastToMinion, lastPublication.get());
    }

    /** Sends a copy of the last publication the master sent the minion with one bit of its signature flipped. */
    void forgeLastPublication() throws IOException {
        byte[] forged = lastPublication.get().clone();
        forged[forged.length - 1] ^= 1; // the signature ends the frame
        write(lastToMinion, forged);
    }

    private void fromMaster(byte[] frame, DataOutputStream toMinion) throws IOException {
        boolean publication = frame.length > 1 && (frame[1] & 0xff) == FrameType.PUBLISH.code();
        if (publication && !withholding) {
            lastPublication.set(frame);
        }
        if (withholding && publication) {
            withholding = false;
            withheld.set(frame);
            return;
        }
        write(toMinion, frame);
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket minion = server.accept();
                Socket master = new Socket();
                master.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target));
                open.add(minion);
                open.add(master);
                DataOutputStream toMinion = new DataOutputStream(minion.getOutputStream());
                DataOutputStream toMaster = new DataOutputStream(master.getOutputStream());
                pump(minion, master, frame -> fromMinion(frame, toMinion, toMaster));
                lastToMinion = toMinion;
                pump(master, minion, frame -> fromMaster(frame, toMinion));
            } catch (IOException e) {
                // closed, or the master is not there: the minion sees its connection end
            }
        }
    }

    private void fromMinion(byte[] frame, DataOutputStream toMinion, DataOutputStream toMaster) throws IOException {
        if (frame.length > 1
                && (frame[1] & 0xff) == FrameType.AUTH_REQUEST.code()
                && Codec.decode(frame, FrameLimits.MAX_FRAME) instanceof Decoded.Ok ok
                && ok.message() instanceof AuthRequest request) {
            authRequests.incrementAndGet();
            Mode now = mode;
            if (now != Mode.PASS) {
                write(
                        toMinion,
                        Codec.encodeSigned(
                                new AuthReply(
                                        Suite.RSA_OAEP_PSS_AES256GCM,
                                        forgedStatus,
                                        request.nonce(),
                                        System.currentTimeMillis(),
                                        forger.getPublic().getEncoded(),
                                        "forged by the relay",
                                        0,
                                        null),
                                forger.getPrivate()));
                forged.incrementAndGet();
            }
            if (now == Mode.FORGE) {
                return;
            }
        }
        write(toMaster, frame);
    }

    private interface FrameSink {
        void accept(byte[] frame) throws IOException;
    }

    private void pump(Socket from, Socket to, FrameSink sink) {
        Thread thread = new Thread(
                () -> {
                    try (DataInputStream in = new DataInputStream(from.getInputStream())) {
                        while (true) {
                            int length = in.readInt();
                            if (length <= 0 || length > FrameLimits.MAX_FRAME) {
                                return;
                            }
                            byte[] frame = new byte[length];
                            in.readFully(frame);
                            sink.accept(frame);
                        }
                    } catch (IOException e) {
                        // cut
                    } finally {
                        close(from);
                        close(to);
                    }
                },
                "forger-pump");
        thread.setDaemon(true);
        thread.start();
    }

    /** Whole frames only, one writer at a time: forged replies and relayed ones share the minion's connection. */
    private static void write(DataOutputStream out, byte[] frame) throws IOException {
        synchronized (out) {
            out.writeInt(frame.length);
            out.write(frame);
            out.flush();
        }
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
        open.forEach(this::close);
    }
}
