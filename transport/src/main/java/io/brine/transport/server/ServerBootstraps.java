package io.brine.transport.server;

import io.brine.transport.tcp.TcpIo;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import java.util.concurrent.TimeUnit;

/** The listening side both server transports on Netty set up alike: socket options, water marks, event loops. */
public final class ServerBootstraps {

    private ServerBootstraps() {}

    /** {@code shared} when given (the caller owns it), else a new group of {@link ServerOptions#ioThreads()}. */
    public static EventLoopGroup group(EventLoopGroup shared, ServerOptions options, String threadName) {
        return shared != null ? shared : options.io().newGroup(options.ioThreads(), threadName);
    }

    /** A server bootstrap on {@code group}: backlog, address reuse, no Nagle, keep-alive, the water marks. */
    public static ServerBootstrap of(EventLoopGroup group, ServerOptions options, ChannelHandler childHandler) {
        return new ServerBootstrap()
                .group(group)
                .channel(TcpIo.serverChannel(group))
                .option(ChannelOption.SO_BACKLOG, options.backlog())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(
                        ChannelOption.WRITE_BUFFER_WATER_MARK,
                        new WriteBufferWaterMark(options.writeBufferLowWaterMark(), options.writeBufferHighWaterMark()))
                .childHandler(childHandler);
    }

    /** "epoll" or "NIO", for the start-up log line. */
    public static String ioName(EventLoopGroup group) {
        return TcpIo.serverChannel(group).getSimpleName().startsWith("Epoll") ? "epoll" : "NIO";
    }

    /** Shuts {@code group} down unless it is {@code shared} (the caller's) or was never made. */
    public static void shutDown(EventLoopGroup group, EventLoopGroup shared) {
        if (shared == null && group != null) {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }
}
