package io.brine.transport;

import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client transport's listener as its transport thread calls it: a listener that throws is logged as the bug it is
 * and the thread goes on, so one bad frame never stops a transport.
 */
public final class GuardedListener implements ClientTransport.Listener {

    private static final Logger LOG = LoggerFactory.getLogger(GuardedListener.class);

    private final ClientTransport.Listener listener;
    private final String transport;

    /** @param transport how log lines name the transport, e.g. "TCP transport" */
    public GuardedListener(ClientTransport.Listener listener, String transport) {
        this.listener = Objects.requireNonNull(listener, "listener");
        this.transport = transport;
    }

    @Override
    public void onReply(byte[] frame) {
        guard("a reply", () -> listener.onReply(frame));
    }

    @Override
    public void onPublication(byte[] frame) {
        guard("a publication", () -> listener.onPublication(frame));
    }

    @Override
    public void onDisconnected() {
        guard("a disconnection", listener::onDisconnected);
    }

    @Override
    public void onConnected() {
        guard("a connection", listener::onConnected);
    }

    private void guard(String event, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            LOG.error("{}: the listener failed on {}", transport, event, e);
        }
    }
}
