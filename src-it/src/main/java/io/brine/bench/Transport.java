package io.brine.bench;

import java.util.Locale;

/**
 * The transports the benchmark can run, with what one connected minion costs in file descriptors: in the master
 * (which must stay under the per-process limit) and in a swarm worker (which sizes the number of worker JVMs).
 * The figures are checked against what {@code /proc/PID/fd} shows during a run and printed next to it.
 */
enum Transport {

    /**
     * Master: one TCP connection on the ROUTER and one on the XPUB per minion; jeromq adds no descriptor per
     * connection. Worker: a DEALER and a SUB per minion, each one TCP connection plus its jeromq mailbox, which is
     * a pipe (two descriptors) and a selector (an epoll descriptor and its wake-up pipe): five per socket.
     */
    ZEROMQ("zeromq", 2, 10),
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
