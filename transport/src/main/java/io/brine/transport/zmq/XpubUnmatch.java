package io.brine.transport.zmq;

import java.lang.reflect.Field;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZMQ;
import zmq.socket.pubsub.Dist;
import zmq.socket.pubsub.XPub;

/**
 * Works around a jeromq XPUB bug (0.5.4 and 0.6.0 alike): when a non-blocking send with {@code ZMQ_XPUB_NODROP}
 * fails with EAGAIN (one subscriber's queue is full), XPUB keeps that subscriber "matched", so every later send,
 * whatever its topic, is refused while that queue stays full, and the next one that succeeds is also copied to it.
 * One stalled minion would block publications to all others. libzmq fixed this in 2020 (zeromq/libzmq#3996: unmatch
 * before matching the first part); jeromq has not. We clear the matched set after each refused send, which is
 * exactly that fix, by reaching the private distributor. If a later jeromq renames it, we log once and go on.
 */
final class XpubUnmatch {

    private static final Logger LOG = LoggerFactory.getLogger(XpubUnmatch.class);

    private XpubUnmatch() {
    }

    /** What to run on the XPUB's owner thread after a refused send. */
    static Runnable forSocket(ZMQ.Socket xpub) {
        try {
            Field field = XPub.class.getDeclaredField("dist");
            field.setAccessible(true);
            Dist dist = (Dist) field.get(xpub.base());
            return dist::unmatch;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn("Publish channel: cannot apply the jeromq XPUB unmatch workaround ({}); a minion whose queue is "
                    + "full may hold up publications to others", e.toString());
            return () -> {
            };
        }
    }
}
