package io.brine.transport.server;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;

/**
 * The sources the unauthenticated reserve ({@link ServerOptions#reservedUnauthenticated()}) is kept for: this host,
 * that is a connection whose source address is the address it reached (the local CLI over loopback, 127.0.0.1 to
 * 127.0.0.1 or ::1 to ::1, or a host address to itself; 127.0.0.2 to 127.0.0.1 is another source), and the addresses
 * minions were bound from since the transport started, at most {@code capacity} of them (the least used are
 * forgotten first). Thread-safe.
 */
final class ReservedSources {

    private final Cache<String, Boolean> minionAddresses;

    ReservedSources(int capacity) {
        this.minionAddresses = Caffeine.newBuilder().maximumSize(capacity).build();
    }

    /** Whether {@code channel}, from {@code source} ({@link ServerConnection#remoteAddressOf}), is one of them. */
    boolean contains(Channel channel, String source) {
        return sameHost(channel) || minionAddresses.getIfPresent(source) != null;
    }

    /** A minion was bound to a connection from {@code source}. */
    void minionBound(String source) {
        if (!source.equals(ServerConnection.UNKNOWN) && minionAddresses.getIfPresent(source) == null) {
            minionAddresses.put(source, Boolean.TRUE);
        }
    }

    private static boolean sameHost(Channel channel) {
        return channel.remoteAddress() instanceof InetSocketAddress remote
                && channel.localAddress() instanceof InetSocketAddress local
                && remote.getAddress() != null
                && remote.getAddress().equals(local.getAddress());
    }
}
