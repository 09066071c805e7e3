package io.brine.bench;

import io.brine.transport.ClientTransport;
import io.brine.transport.tcp.TcpClientOptions;
import io.brine.transport.tcp.TcpClientTransport;
import io.brine.transport.tcp.TcpIo;
import io.netty.channel.EventLoopGroup;
import java.util.concurrent.TimeUnit;

/**
 * Many minions' TCP transports on one Netty event loop group: each minion gets the real
 * {@link TcpClientTransport} with its defaults (one connection to {@code tcp_port}), sharing the group's threads
 * instead of owning one each.
 */
final class TcpSwarmTransports implements SwarmTransports {

    private final EventLoopGroup group;

    TcpSwarmTransports(int ioThreads) {
        this.group = TcpIo.AUTO.newGroup(ioThreads, "bench-tcp");
    }

    @Override
    public ClientTransport open(String host, int port) {
        return new TcpClientTransport(host, port, TcpClientOptions.defaults(), null, group);
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
}
