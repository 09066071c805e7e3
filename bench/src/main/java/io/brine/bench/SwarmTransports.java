package io.brine.bench;

import io.brine.transport.ClientTransport;

/**
 * Client transports for many simulated minions in one JVM. Each minion gets its own {@link ClientTransport} with
 * its own sockets, exactly as a real minion would open them, but the threads behind them are shared: a real
 * {@code ZmqClientTransport} owns a ZeroMQ context and two threads, which at 10,000 minions is 30,000 threads.
 * Listeners are called on the shared transport threads and must not block.
 */
interface SwarmTransports extends AutoCloseable {

    /** A transport to the master's request port; nothing happens on the network before {@code start}. */
    ClientTransport open(String host, int requestPort);

    /**
     * A stock Salt minion's transport to the request port ({@code --protocol salt}): Salt payloads go out as they
     * are, and {@code subscribe} subscribes to everything, as Salt's SUB does without {@code zmq_filtering}, taking
     * each publication as one frame (the envelope).
     */
    default ClientTransport openSalt(String host, int requestPort) {
        throw new UnsupportedOperationException("simulated Salt minions speak Salt's ZeroMQ transport only");
    }

    @Override
    void close();

    static SwarmTransports create(Transport transport, ZmqClient zmqClient, int ioThreads) {
        return switch (transport) {
            case ZEROMQ ->
                zmqClient == ZmqClient.NETTY
                        ? new NettyZmtpSwarmTransports(ioThreads)
                        : new ZmqSwarmTransports(ioThreads);
            case TCP -> new TcpSwarmTransports(ioThreads);
        };
    }
}
