package io.brine.client.channel;

import io.brine.protocol.codec.FrameLimits;
import io.brine.transport.zmq.ZmqSockets;
import java.io.IOException;
import java.time.Duration;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** A DEALER socket to the master's ROUTER, used only by the thread that made it. */
public final class ZmqClientChannel implements ClientChannel {

    private final ZContext context = new ZContext(1);
    private final ZMQ.Socket socket;

    public ZmqClientChannel(String host, int port) {
        socket = context.createSocket(SocketType.DEALER);
        socket.setLinger(0);
        socket.setMaxMsgSize(FrameLimits.MAX_FRAME);
        socket.setRcvHWM(100_000);
        // ZMTP heartbeats keep a publisher that waits for returns longer than the master's unauthenticated
        // timeout (60 s without a whole ZMTP event) connected, as a minion's do.
        socket.setHeartbeatIvl(10_000);
        socket.setHeartbeatTimeout(30_000);
        socket.connect(ZmqSockets.endpoint(socket, host, port));
    }

    @Override
    public void send(byte[] frame) throws IOException {
        if (!socket.send(frame, 0)) {
            throw new IOException("cannot send to the master");
        }
    }

    @Override
    public byte[] receive(Duration timeout) {
        socket.setReceiveTimeOut((int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis())));
        while (true) {
            byte[] frame = socket.recv(0);
            if (frame == null) {
                return null;
            }
            // A reply to a REQ-style peer may carry an empty delimiter; skip it.
            if (frame.length > 0) {
                return frame;
            }
        }
    }

    @Override
    public void close() {
        context.close();
    }
}
