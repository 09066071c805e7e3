package io.brine.transport.server;

import io.brine.transport.Peer;
import io.brine.transport.ServerTransport.InboundHandler;
import org.slf4j.Logger;

/**
 * The master's inbound handler as a server transport's event loop calls it: a handler that throws is logged as the
 * bug it is and the loop goes on, so one bad frame never stops a transport.
 */
public final class GuardedInbound implements InboundHandler {

    private final InboundHandler handler;
    private final Logger log;

    /** @param log the transport's logger */
    public GuardedInbound(InboundHandler handler, Logger log) {
        this.handler = handler;
        this.log = log;
    }

    @Override
    public void onFrame(Peer peer, byte[] frame) {
        try {
            handler.onFrame(peer, frame);
        } catch (RuntimeException e) {
            log.error("Request channel: the inbound handler failed on a frame from {}", peer, e);
        }
    }

    @Override
    public void onDisconnect(Peer peer) {
        try {
            handler.onDisconnect(peer);
        } catch (RuntimeException e) {
            log.error("Request channel: the inbound handler failed on a disconnect of {}", peer, e);
        }
    }
}
