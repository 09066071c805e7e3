package io.brine.bench;

import java.util.Locale;

/**
 * The transports the benchmark can run, with what one connected minion costs in file descriptors: in the master
 * (which must stay under the per-process limit) and in a swarm worker (which sizes the number of worker JVMs).
 * The figures are checked against what {@code /proc/PID/fd} shows during a run and printed next to it.
 */
enum Transport {

    /**
     * Master: one TCP connection on the ROUTER and one on the PUB per minion. Worker: as many as the jeromq client
     * needs ({@link ZmqClient#workerFdsPerMinion}; the Netty client needs fewer).
     */
    ZEROMQ("zeromq", 2, ZmqClient.JEROMQ.workerFdsPerMinion),
    /** One TCP connection per minion, on both sides. */
    TCP("tcp", 1, 1);

    final String configValue;
    final int masterFdsPerMinion;
    final int workerFdsPerMinion;

    Transport(String configValue, int masterFdsPerMinion, int workerFdsPerMinion) {
        this.configValue = configValue;
        this.masterFdsPerMinion = masterFdsPerMinion;
        this.workerFdsPerMinion = workerFdsPerMinion;
    }

    static Transport of(String name) {
        for (Transport transport : values()) {
            if (transport.configValue.equals(name.toLowerCase(Locale.ROOT))) {
                return transport;
            }
        }
        throw new IllegalArgumentException("unknown transport " + name + "; expected zeromq or tcp");
    }
}
