package io.brine.bench;

import io.brine.transport.ClientTransport;
import java.util.ArrayList;
import java.util.List;

/**
 * The transport of one simulated minion under test: every frame it sends, kept in order, and the listener the test
 * hands the master's frames (and connection events) to. Nothing reaches a network.
 */
final class RecordingTransport implements ClientTransport {

    final List<byte[]> sent = new ArrayList<>();
    /** The minion's listener, once it has started the transport. */
    Listener listener;

    @Override
    public void start(Listener started) {
        listener = started;
    }

    @Override
    public boolean send(byte[] frame) {
        sent.add(frame);
        return true;
    }

    @Override
    public void subscribe(String minionId, int publishPort) {}

    @Override
    public void close() {}
}
