package io.brine.transport.testing;

import io.brine.transport.ClientTransport;
import java.util.concurrent.atomic.AtomicInteger;

/** A test's client listener that counts connections and disconnections; subclasses record the frames. */
public abstract class CountingListener implements ClientTransport.Listener {

    public final AtomicInteger connected = new AtomicInteger();
    public final AtomicInteger disconnected = new AtomicInteger();

    @Override
    public void onConnected() {
        connected.incrementAndGet();
    }

    @Override
    public void onDisconnected() {
        disconnected.incrementAndGet();
    }
}
