package io.brine.master;

import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import java.io.IOException;
import java.util.Collection;
import java.util.Set;

/** A real transport with every call passed on: a test overrides the one it watches or changes. */
abstract class ForwardingTransport implements ServerTransport {

    final ServerTransport inner;

    ForwardingTransport(ServerTransport inner) {
        this.inner = inner;
    }

    @Override
    public void start(InboundHandler handler) throws IOException {
        inner.start(handler);
    }

    @Override
    public Addresses addresses() {
        return inner.addresses();
    }

    @Override
    public boolean send(Peer peer, byte[] frame) {
        return inner.send(peer, frame);
    }

    @Override
    public Set<String> publish(Collection<String> minionIds, byte[] frame) {
        return inner.publish(minionIds, frame);
    }

    @Override
    public int publishPort(Peer peer) {
        return inner.publishPort(peer);
    }

    @Override
    public void authenticated(Peer peer) {
        inner.authenticated(peer);
    }

    @Override
    public void bind(String minionId, Peer peer) {
        inner.bind(minionId, peer);
    }

    @Override
    public void handled(Peer peer, int bytes) {
        inner.handled(peer, bytes);
    }

    @Override
    public void disconnect(Peer peer) {
        inner.disconnect(peer);
    }

    @Override
    public Set<String> reachableMinions() {
        return inner.reachableMinions();
    }

    @Override
    public void unbind(String minionId) {
        inner.unbind(minionId);
    }

    @Override
    public void close() {
        inner.close();
    }
}
