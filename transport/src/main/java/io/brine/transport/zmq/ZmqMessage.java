package io.brine.transport.zmq;

import org.zeromq.ZMQ;
import zmq.Msg;

/**
 * One ZeroMQ message read whole (ZeroMQ hands a multipart message over only complete): its first three parts, as
 * many as it has, and how many parts it had. Parts past the third are read and dropped.
 */
public record ZmqMessage(Msg first, Msg second, Msg third, int parts) {

    /** The next message on {@code socket}, or null when none is waiting. Never blocks. */
    public static ZmqMessage receive(ZMQ.Socket socket) {
        Msg first = socket.base().recv(ZMQ.DONTWAIT);
        if (first == null) {
            return null;
        }
        Msg second = null;
        Msg third = null;
        int parts = 1;
        Msg last = first;
        while (last != null && last.hasMore()) {
            last = socket.base().recv(ZMQ.DONTWAIT);
            parts++;
            if (parts == 2) {
                second = last;
            } else if (parts == 3) {
                third = last;
            }
        }
        return new ZmqMessage(first, second, third, parts);
    }

    /** The frame of a reply from the master, {@code [frame]} or {@code [empty][frame]}; null for any other shape. */
    public byte[] reply() {
        if (parts == 1) {
            return first.data();
        }
        return parts == 2 && first.size() == 0 && second != null ? second.data() : null;
    }

    /** The frame of a publication, {@code [topic][frame]}; null for any other shape. */
    public byte[] publication() {
        return parts == 2 && second != null ? second.data() : null;
    }
}
