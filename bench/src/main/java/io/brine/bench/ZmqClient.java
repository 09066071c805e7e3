package io.brine.bench;

import java.util.Locale;

/**
 * Which ZeroMQ client the swarm's simulated minions use ({@code --zmq-client}); the real brine-minion and
 * {@code BrineClient} always use jeromq. Both speak the same ZMTP 3.1 to the master, with the same options
 * ({@code ZmqClientOptions.defaults()}); they differ only in what they cost the load generator, including file
 * descriptors per minion in a worker, which sizes the number of worker JVMs.
 */
enum ZmqClient {

    /** {@link NettyZmtpSwarmTransports}: one TCP connection per socket, two per minion. */
    NETTY("netty", 2),
    /**
     * {@link ZmqSwarmTransports}: a DEALER and a SUB per minion, each one TCP connection plus its jeromq mailbox, a
     * pipe (two descriptors) and a selector (an epoll descriptor and its wake-up pipe): five per socket.
     */
    JEROMQ("jeromq", 10);

    final String configValue;
    final int workerFdsPerMinion;

    ZmqClient(String configValue, int workerFdsPerMinion) {
        this.configValue = configValue;
        this.workerFdsPerMinion = workerFdsPerMinion;
    }

    static ZmqClient of(String name) {
        for (ZmqClient client : values()) {
            if (client.configValue.equals(name.toLowerCase(Locale.ROOT))) {
                return client;
            }
        }
        throw new IllegalArgumentException("unknown ZeroMQ client " + name + "; expected netty or jeromq");
    }
}
