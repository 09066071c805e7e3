package io.brine.transport.tcp;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/** Which Netty I/O the TCP transport runs on, master and minion alike: epoll where the platform has it, NIO everywhere. */
public enum TcpIo {
    /** Epoll when {@link Epoll#isAvailable()}, else NIO. */
    AUTO,
    NIO,
    /** Epoll, or an error at start where it is not available. */
    EPOLL;

    /** Epoll or NIO, as this mode resolves on this platform. */
    TcpIo resolve() {
        if (this == AUTO) {
            return Epoll.isAvailable() ? EPOLL : NIO;
        }
        if (this == EPOLL && !Epoll.isAvailable()) {
            throw new IllegalStateException("epoll is not available here: " + Epoll.unavailabilityCause());
        }
        return this;
    }

    /**
     * A new group of {@code threads} daemon threads (0: Netty's default, twice the cores), for one transport or to
     * share among many (a swarm of simulated minions in one JVM): the caller closes it after them.
     */
    public EventLoopGroup newGroup(int threads, String threadName) {
        IoHandlerFactory factory = resolve() == EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(threadName, true), factory);
    }

    /** The server channel class that fits {@code group}'s I/O. */
    public static Class<? extends ServerChannel> serverChannel(EventLoopGroup group) {
        return group instanceof IoEventLoopGroup io && io.isIoType(EpollIoHandler.class)
                ? EpollServerSocketChannel.class
                : NioServerSocketChannel.class;
    }

    /** The socket channel class that fits {@code group}'s I/O. */
    public static Class<? extends Channel> socketChannel(EventLoopGroup group) {
        return group instanceof IoEventLoopGroup io && io.isIoType(EpollIoHandler.class)
                ? EpollSocketChannel.class
                : NioSocketChannel.class;
    }
}
