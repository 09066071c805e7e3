package io.brine.daemon.config;

import java.util.Locale;

/** The transport a daemon speaks, as named in its config file ({@code transport: zeromq}). */
public enum TransportKind {
    /** Request channel ROUTER/DEALER on {@code ret_port}, publish channel PUB/SUB on {@code publish_port}. */
    ZEROMQ,
    /** Both channels over one TCP connection to {@code tcp_port}. */
    TCP;

    /** The name used in config files. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
