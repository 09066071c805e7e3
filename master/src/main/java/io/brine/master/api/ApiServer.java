package io.brine.master.api;

import io.brine.daemon.WarnInterval;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.files.TrustedPath;
import io.brine.master.auth.SourceRateLimiter;
import io.brine.master.events.EventStream;
import io.brine.master.jobs.ActiveJobs;
import io.brine.master.publish.PublisherService;
import io.brine.master.session.SessionTable;
import io.brine.protocol.ReservedIds;
import io.brine.store.api.ApiTokens;
import io.brine.store.keys.KeyStore;
import io.brine.transport.tcp.TcpIo;
import io.brine.transport.tcp.TcpTls;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's HTTP API ({@code api:} in master.yaml): JSON under {@code /api/} on Netty, HTTPS unless bound to
 * loopback, and the web console's files at {@code /} ({@link ConsoleFiles}), which call the API with its tokens. One event loop ({@code brine-api}) reads requests whole, within the request timeout and the body limit,
 * and sends answers; two workers ({@code brine-api-worker}) check tokens and run the routes, which touch the disk and
 * the key store. With {@code client_ca}, TLS verifies client certificates, each standing for the API token its CN
 * names ({@link ApiHandler}). The pipeline, in order: TLS, the connection cap, HTTP/1.1, the body aggregator, {@link ApiHandler}.
 */
public final class ApiServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ApiServer.class);
    /** Requests waiting for a worker at most; one more is answered 503. */
    static final int MAX_QUEUED = 256;
    /** An event-stream subscriber whose unsent events exceed this is cut off (a slow reader never slows the master). */
    static final int SUBSCRIBER_BUFFER_BYTES = 1024 * 1024;
    /** Events kept for subscribers that reconnect with Last-Event-ID. */
    static final int EVENT_HISTORY = 1000;

    static final int MAX_INITIAL_LINE = 4096;
    static final int MAX_HEADERS = 8192;

    /** What every connection's handler shares. */
    record Shared(
            MasterConfig.Api config,
            ApiRoutes routes,
            TokenFile tokens,
            SourceRateLimiter perToken,
            SourceRateLimiter perSource,
            EventStream events,
            ActiveJobs active,
            ThreadPoolExecutor workers,
            byte[] openapi,
            ConsoleFiles console,
            Clock clock,
            Map<String, WarnInterval> logIntervals,
            SseFrames frames) {

        /** Whether a line about {@code what} is due (one a minute each); the lines not logged, else -1. */
        long due(String what) {
            return logIntervals
                    .computeIfAbsent(what, w -> new WarnInterval(clock, 60_000))
                    .due();
        }
    }

    private final EventLoopGroup group;
    private final Channel listening;
    private final ThreadPoolExecutor workers;
    private final ApiRoutes routes;

    private ApiServer(EventLoopGroup group, Channel listening, ThreadPoolExecutor workers, ApiRoutes routes) {
        this.group = group;
        this.listening = listening;
        this.workers = workers;
        this.routes = routes;
    }

    /**
     * Starts the API over the master's parts.
     *
     * @throws IOException when it cannot listen, its TLS files cannot be used, or it would serve plain HTTP off
     *     loopback (the message says which)
     */
    public static ApiServer start(
            MasterConfig.Api config,
            KeyStore keyStore,
            PublisherService publishers,
            SessionTable sessions,
            EventStream events,
            ActiveJobs active,
            Supplier<ReservedIds> reservedIds,
            Path cachedir,
            Clock clock)
            throws IOException {
        InetAddress address = InetAddress.getByName(config.interfaceAddress());
        if (config.tls().isEmpty() && !address.isLoopbackAddress()) {
            throw new IOException("api: interface " + config.interfaceAddress() + " is not loopback and api.tls is"
                    + " not set: the API would send tokens in clear. Set api.tls (cert and key) or bind it to"
                    + " 127.0.0.1");
        }
        SslContext tls = null;
        if (config.tls().isPresent()) {
            MasterConfig.Tls files = config.tls().get();
            tls = config.clientCerts().isPresent()
                    ? TcpTls.server(
                            files.cert(),
                            files.key(),
                            config.clientCerts().get().clientCa(),
                            config.clientCerts().get().clientAuth() == MasterConfig.ClientAuth.REQUIRED)
                    : TcpTls.server(files.cert(), files.key());
        }
        SslContext serverTls = tls;
        byte[] openapi;
        try (InputStream in = ApiServer.class.getResourceAsStream("openapi.json")) {
            openapi = in.readAllBytes();
        }
        events.keepHistory(EVENT_HISTORY);
        AtomicInteger workerNumber = new AtomicInteger();
        ThreadPoolExecutor workers =
                new ThreadPoolExecutor(2, 2, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(MAX_QUEUED), runnable -> {
                    Thread thread = new Thread(runnable, "brine-api-worker-" + workerNumber.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        Shared shared = new Shared(
                config,
                new ApiRoutes(keyStore, publishers, sessions, reservedIds, cachedir),
                new TokenFile(ApiTokens.file(keyStore.pkiDir()), TrustedPath.forThisProcess(), clock),
                new SourceRateLimiter(
                        config.requestsPerSecond(),
                        2 * config.requestsPerSecond(),
                        ApiTokens.MAX_TOKENS,
                        System::nanoTime),
                // Before a token is checked: bounds the hashing a stranger can make the workers do.
                new SourceRateLimiter(
                        10 * config.requestsPerSecond(), 20 * config.requestsPerSecond(), 100_000, System::nanoTime),
                events,
                active,
                workers,
                openapi,
                ConsoleFiles.load(),
                clock,
                new ConcurrentHashMap<>(),
                new SseFrames());
        EventLoopGroup group = TcpIo.AUTO.newGroup(1, "brine-api");
        AtomicInteger open = new AtomicInteger();
        try {
            Channel listening = new ServerBootstrap()
                    .group(group)
                    .channel(TcpIo.serverChannel(group))
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(
                            ChannelOption.WRITE_BUFFER_WATER_MARK,
                            new WriteBufferWaterMark(SUBSCRIBER_BUFFER_BYTES / 2, SUBSCRIBER_BUFFER_BYTES))
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel channel) {
                            ChannelPipeline pipeline = channel.pipeline();
                            pipeline.addLast("connections", new ConnectionCap(open, config.maxConnections(), shared));
                            if (serverTls != null) {
                                pipeline.addLast("tls", serverTls.newHandler(channel.alloc()));
                            }
                            pipeline.addLast("http", new HttpServerCodec(MAX_INITIAL_LINE, MAX_HEADERS, 8192));
                            pipeline.addLast("body", new ApiHandler.BodyLimit(config.maxBodyBytes(), shared));
                            pipeline.addLast("api", new ApiHandler(shared));
                        }
                    })
                    .bind(new InetSocketAddress(address, config.port()))
                    .syncUninterruptibly()
                    .channel();
            LOG.info(
                    "HTTP API listening on {} ({})",
                    listening.localAddress(),
                    tls == null
                            ? "HTTP, loopback only"
                            : config.clientCerts()
                                    .map(c -> "HTTPS, client certificates "
                                            + c.clientAuth().name().toLowerCase(Locale.ROOT))
                                    .orElse("HTTPS"));
            return new ApiServer(group, listening, workers, shared.routes());
        } catch (RuntimeException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            workers.shutdownNow();
            shared.routes().close();
            throw new IOException(
                    "api: cannot listen on " + config.interfaceAddress() + ":" + config.port() + ": " + e.getMessage(),
                    e);
        }
    }

    /** The port it listens on. */
    public int port() {
        return ((InetSocketAddress) listening.localAddress()).getPort();
    }

    @Override
    public void close() {
        listening.close().awaitUninterruptibly();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        workers.shutdownNow();
        routes.close();
    }

    /** Closes a connection past {@code max} open ones at once, before TLS or HTTP costs anything. */
    private static final class ConnectionCap extends ChannelInboundHandlerAdapter {
        private final AtomicInteger open;
        private final int max;
        private final Shared shared;
        private boolean counted;

        ConnectionCap(AtomicInteger open, int max, Shared shared) {
            this.open = open;
            this.max = max;
            this.shared = shared;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            if (open.incrementAndGet() > max) {
                open.decrementAndGet();
                long suppressed = shared.due("connections");
                if (suppressed >= 0) {
                    LOG.warn(
                            "API: connection from {} closed: {} connections open, the most api.max_connections"
                                    + " allows ({} more closed since the last line)",
                            ctx.channel().remoteAddress(),
                            max,
                            suppressed);
                }
                ctx.close();
                return;
            }
            counted = true;
            super.channelActive(ctx);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (counted) {
                open.decrementAndGet();
                counted = false;
            }
            super.channelInactive(ctx);
        }
    }
}
