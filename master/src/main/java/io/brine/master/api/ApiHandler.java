package io.brine.master.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.brine.master.api.ApiRoutes.Answer;
import io.brine.master.api.ApiRoutes.Caller;
import io.brine.protocol.MinionIds;
import io.brine.store.api.ApiTokens;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.Certificate;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One API connection: a request must arrive whole within {@code request_timeout} (else 408), is routed on the event
 * loop (404, 405), then authenticated, rate-limited and answered on a worker. One request at a time per connection
 * (reading pauses until the answer is sent), so answers keep the order of requests. Every refusal is a JSON error
 * with its status, logged at most once a minute per kind with the count of those not logged; a bug is a 500 whose
 * body says nothing but that, and whose trace goes to the log.
 */
final class ApiHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger LOG = LoggerFactory.getLogger(ApiHandler.class);
    private static final String BEARER = "Bearer ";
    /** How often an open event stream's token is checked again. */
    static final int STREAM_TOKEN_CHECK_SECONDS = 2;

    private final ApiServer.Shared shared;
    private ScheduledFuture<?> deadline;
    private boolean busy;

    ApiHandler(ApiServer.Shared shared) {
        super(true);
        this.shared = shared;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        armDeadline(ctx);
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancelDeadline();
        super.channelInactive(ctx);
    }

    /** The next request must arrive whole within the request timeout. */
    private void armDeadline(ChannelHandlerContext ctx) {
        cancelDeadline();
        deadline = ctx.executor()
                .schedule(
                        () -> {
                            if (!busy && ctx.channel().isActive()) {
                                refuse(
                                        ctx,
                                        null,
                                        new ApiError(
                                                HttpResponseStatus.REQUEST_TIMEOUT,
                                                "the request did not arrive" + " within "
                                                        + shared.config()
                                                                .requestTimeout()
                                                                .toSeconds() + " s"),
                                        false);
                            }
                        },
                        shared.config().requestTimeout().toMillis(),
                        TimeUnit.MILLISECONDS);
    }

    private void cancelDeadline() {
        if (deadline != null) {
            deadline.cancel(false);
            deadline = null;
        }
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        cancelDeadline();
        busy = true;
        ctx.channel().config().setAutoRead(false);
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        if (request.decoderResult().isFailure()) {
            refuse(
                    ctx,
                    null,
                    ApiError.badRequest(
                            "malformed HTTP request (a line or the headers over their limit," + " or not HTTP/1.1)"),
                    false);
            return;
        }
        QueryStringDecoder uri;
        List<String> segments = new ArrayList<>();
        try {
            uri = new QueryStringDecoder(request.uri(), StandardCharsets.UTF_8, true, 64);
            for (String segment : uri.rawPath().split("/", -1)) {
                segments.add(QueryStringDecoder.decodeComponent(segment, StandardCharsets.UTF_8));
            }
        } catch (IllegalArgumentException e) {
            refuse(ctx, request, ApiError.badRequest("malformed request URI"), keepAlive);
            return;
        }
        segments.remove(0); // before the leading slash
        if (!uri.rawPath().startsWith("/api/")) {
            console(ctx, request, uri.rawPath(), keepAlive);
            return;
        }
        Optional<ApiRoutes.Route> route = ApiRoutes.route(segments);
        if (route.isEmpty()) {
            refuse(
                    ctx,
                    request,
                    ApiError.notFound("no such route: " + printablePath(uri.rawPath())
                            + " (the routes are listed in /api/openapi.json)"),
                    keepAlive);
            return;
        }
        HttpMethod method = request.method();
        if (!route.get().methods().contains(method.name())) {
            FullHttpResponse response = json(
                    HttpResponseStatus.METHOD_NOT_ALLOWED,
                    error(
                            HttpResponseStatus.METHOD_NOT_ALLOWED,
                            method.name() + " is not allowed on " + route.get().pattern() + "; allowed: "
                                    + String.join(", ", route.get().methods())));
            response.headers()
                    .set(HttpHeaderNames.ALLOW, String.join(", ", route.get().methods()));
            log(ctx, request, HttpResponseStatus.METHOD_NOT_ALLOWED, "method not allowed");
            send(ctx, response, keepAlive);
            return;
        }
        if (route.get().pattern().equals("/api/openapi.json")) {
            FullHttpResponse response = new DefaultFullHttpResponse(
                    HttpVersion.HTTP_1_1, HttpResponseStatus.OK, Unpooled.wrappedBuffer(shared.openapi()));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json");
            send(ctx, response, keepAlive);
            return;
        }
        if (method.equals(HttpMethod.POST)) {
            String type = request.headers().get(HttpHeaderNames.CONTENT_TYPE, "");
            if (!type.toLowerCase(Locale.ROOT).strip().startsWith("application/json")) {
                refuse(
                        ctx,
                        request,
                        new ApiError(
                                HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE,
                                "the body must be" + " JSON: Content-Type: application/json"),
                        keepAlive);
                return;
            }
        }
        String authorization = request.headers().get(HttpHeaderNames.AUTHORIZATION);
        Optional<X509Certificate> certificate = clientCertificate(ctx);
        Optional<String> lastEventId = Optional.ofNullable(request.headers().get("Last-Event-ID"));
        byte[] body = ByteBufUtil.getBytes(request.content());
        Map<String, List<String>> parameters = uri.parameters();
        String source = source(ctx);
        try {
            shared.workers()
                    .execute(() -> answer(
                            ctx,
                            request.method(),
                            route.get(),
                            segments,
                            parameters,
                            body,
                            authorization,
                            certificate,
                            lastEventId,
                            source,
                            keepAlive,
                            uri.rawPath()));
        } catch (RejectedExecutionException e) {
            refuse(
                    ctx,
                    request,
                    new ApiError(HttpResponseStatus.SERVICE_UNAVAILABLE, "the master is busy; try" + " again"),
                    false);
        }
    }

    /**
     * A file of the console, on the event loop (its files are in memory): no token, since they hold none; the
     * console's pages ask the API for everything with the token the admin gives them.
     */
    private void console(ChannelHandlerContext ctx, FullHttpRequest request, String path, boolean keepAlive) {
        Optional<ConsoleFiles.File> file = shared.console().find(path);
        if (file.isEmpty()) {
            refuse(
                    ctx,
                    request,
                    ApiError.notFound("no such page: " + printablePath(path) + " (the console is at /,"
                            + " the API under /api/)"),
                    keepAlive);
            return;
        }
        if (!request.method().equals(HttpMethod.GET)) {
            FullHttpResponse response = json(
                    HttpResponseStatus.METHOD_NOT_ALLOWED,
                    error(
                            HttpResponseStatus.METHOD_NOT_ALLOWED,
                            request.method().name() + " is not allowed on the" + " console's files; allowed: GET"));
            response.headers().set(HttpHeaderNames.ALLOW, "GET");
            log(ctx, request, HttpResponseStatus.METHOD_NOT_ALLOWED, "method not allowed");
            send(ctx, response, keepAlive);
            return;
        }
        FullHttpResponse response = new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1,
                HttpResponseStatus.OK,
                Unpooled.wrappedBuffer(file.get().body()));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, file.get().contentType());
        response.headers().set(HttpHeaderNames.CONTENT_SECURITY_POLICY, ConsoleFiles.POLICY);
        send(ctx, response, keepAlive);
    }

    /** On a worker: the token, its rate, the route. */
    private void answer(
            ChannelHandlerContext ctx,
            HttpMethod method,
            ApiRoutes.Route route,
            List<String> segments,
            Map<String, List<String>> parameters,
            byte[] body,
            String authorization,
            Optional<X509Certificate> certificate,
            Optional<String> lastEventId,
            String source,
            boolean keepAlive,
            String path) {
        String what = method.name() + " " + printablePath(path);
        try {
            if (!shared.perSource().tryAcquire(source)) {
                throw new ApiError(
                        HttpResponseStatus.TOO_MANY_REQUESTS, "too many requests from this address;" + " slow down");
            }
            Caller caller = authenticate(authorization, certificate);
            if (!shared.perToken().tryAcquire(caller.token().name())) {
                throw new ApiError(
                        HttpResponseStatus.TOO_MANY_REQUESTS,
                        "token " + caller.token().name() + " is over api.requests_per_second ("
                                + shared.config().requestsPerSecond() + "); slow down");
            }
            Answer answer = shared.routes()
                    .handle(route, method, segments, new ApiRoutes.Query(parameters), body, caller, lastEventId);
            if (answer instanceof Answer.Json json) {
                if (json.status().code() < 300 && !method.equals(HttpMethod.GET)) {
                    LOG.info(
                            "API {} by token {}{}: {}",
                            what,
                            caller.token().name(),
                            certificate.isPresent() && authorization == null ? " (client certificate)" : "",
                            json.status().code());
                }
                send(ctx, json(json.status(), json.body()), keepAlive);
            } else if (answer instanceof Answer.Events events) {
                stream(ctx, caller, events, authorization, certificate);
            } else if (answer instanceof Answer.WaitForJob wait) {
                waitFor(ctx, caller, wait, keepAlive);
            }
        } catch (ApiError e) {
            if (e.status() == HttpResponseStatus.UNAUTHORIZED
                    || e.status() == HttpResponseStatus.TOO_MANY_REQUESTS
                    || e.status() == HttpResponseStatus.FORBIDDEN) {
                log(source, what, e.status(), e.getMessage());
            }
            FullHttpResponse response = json(e.status(), error(e.status(), e.getMessage()));
            if (e.status() == HttpResponseStatus.UNAUTHORIZED) {
                response.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"brine\"");
            }
            if (e.status() == HttpResponseStatus.TOO_MANY_REQUESTS) {
                response.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
            }
            send(ctx, response, keepAlive);
        } catch (RuntimeException e) {
            LOG.error("Bug: API {} failed", what, e);
            send(
                    ctx,
                    json(
                            HttpResponseStatus.INTERNAL_SERVER_ERROR,
                            error(
                                    HttpResponseStatus.INTERNAL_SERVER_ERROR,
                                    "internal error; the master's log has the details")),
                    false);
        }
    }

    /**
     * The token the request stands for: the bearer token it sends, or else the one its client certificate's CN names.
     * A certificate listed in {@code api.client_revoked} is refused whatever else the request sends.
     */
    private Caller authenticate(String authorization, Optional<X509Certificate> certificate) throws ApiError {
        if (certificate.isPresent()) {
            String fingerprint = sha256(certificate.get());
            if (shared.config()
                    .clientCerts()
                    .map(c -> c.clientRevoked().contains(fingerprint))
                    .orElse(false)) {
                long suppressed = shared.due("revoked " + fingerprint);
                if (suppressed >= 0) {
                    LOG.info(
                            "API: client certificate {} (SHA-256 {}) refused: listed in api.client_revoked",
                            MinionIds.printable(
                                    certificate.get().getSubjectX500Principal().getName()),
                            fingerprint);
                }
                throw new ApiError(HttpResponseStatus.UNAUTHORIZED, "client certificate revoked (api.client_revoked)");
            }
            if (authorization == null || authorization.isBlank()) {
                return byCertificate(certificate.get());
            }
        }
        if (authorization == null || authorization.isBlank()) {
            throw new ApiError(
                    HttpResponseStatus.UNAUTHORIZED,
                    "no token: send Authorization: Bearer TOKEN (make"
                            + " one with brine-key api-token create)"
                            + (shared.config().clientCerts().isPresent() ? " or a client certificate" : ""));
        }
        if (!authorization.startsWith(BEARER)) {
            throw new ApiError(HttpResponseStatus.UNAUTHORIZED, "the Authorization header must be Bearer TOKEN");
        }
        String token = authorization.substring(BEARER.length()).strip();
        Optional<ApiTokens.Entry> entry = shared.tokens().find(token);
        // One answer for unknown, revoked and expired tokens: the log says which.
        if (entry.isEmpty()) {
            throw new ApiError(HttpResponseStatus.UNAUTHORIZED, "invalid token (unknown, revoked or expired)");
        }
        return unexpired(entry.get());
    }

    /** A verified client certificate: the token its subject's CN names, as brine-key api-token made it. */
    private Caller byCertificate(X509Certificate certificate) throws ApiError {
        Optional<String> name = commonName(certificate);
        Optional<ApiTokens.Entry> entry = name.flatMap(shared.tokens()::named);
        if (entry.isEmpty()) {
            long suppressed = shared.due("certificate names no token");
            if (suppressed >= 0) {
                LOG.info(
                        "API: client certificate {} refused: its CN names no API token ({} more since the last"
                                + " line)",
                        MinionIds.printable(
                                certificate.getSubjectX500Principal().getName()),
                        suppressed);
            }
            throw new ApiError(
                    HttpResponseStatus.UNAUTHORIZED,
                    "the client certificate's CN names no API token" + " (unknown, revoked or expired)");
        }
        return unexpired(entry.get());
    }

    private Caller unexpired(ApiTokens.Entry entry) throws ApiError {
        if (entry.expired(shared.clock().millis())) {
            long suppressed = shared.due("expired " + entry.name());
            if (suppressed >= 0) {
                LOG.info("API: token {} refused: expired", entry.name());
            }
            throw new ApiError(HttpResponseStatus.UNAUTHORIZED, "invalid token (unknown, revoked or expired)");
        }
        return new Caller(entry);
    }

    /** The certificate the client sent and TLS verified against api.client_ca; empty without one. */
    private static Optional<X509Certificate> clientCertificate(ChannelHandlerContext ctx) {
        SslHandler tls = ctx.pipeline().get(SslHandler.class);
        if (tls == null) {
            return Optional.empty();
        }
        try {
            Certificate[] chain = tls.engine().getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate first
                    ? Optional.of(first)
                    : Optional.empty();
        } catch (SSLPeerUnverifiedException e) {
            return Optional.empty();
        }
    }

    /** The subject's one CN, if it is a valid token name (as strict as an id: no folding, no second CN). */
    static Optional<String> commonName(X509Certificate certificate) {
        List<String> names = new ArrayList<>();
        try {
            for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    names.add(String.valueOf(rdn.getValue()));
                }
            }
        } catch (InvalidNameException e) {
            return Optional.empty();
        }
        return names.size() == 1 && MinionIds.isValid(names.get(0)) ? Optional.of(names.get(0)) : Optional.empty();
    }

    private static String sha256(X509Certificate certificate) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(certificate.getEncoded()));
        } catch (CertificateEncodingException | NoSuchAlgorithmException e) {
            throw new IllegalStateException("a verified certificate that cannot be hashed", e);
        }
    }

    // ------------------------------------------------------------------ server-sent events

    private void stream(
            ChannelHandlerContext ctx,
            Caller caller,
            Answer.Events events,
            String authorization,
            Optional<X509Certificate> certificate) {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        head.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        securityHeaders(head.headers());
        HttpUtil.setTransferEncodingChunked(head, true);
        ctx.writeAndFlush(head);
        AtomicBoolean cut = new AtomicBoolean();
        // The events' frames wait here for the connection's event loop, which writes all that came meanwhile and
        // flushes once: one task and one flush per batch, not per event (issue 28). The queue counts against the
        // subscriber's buffer as the connection's own outbound bytes do.
        Queue<ByteBuf> queued = new ConcurrentLinkedQueue<>();
        AtomicLong queuedBytes = new AtomicLong();
        AtomicBoolean draining = new AtomicBoolean();
        Runnable drain = () -> {
            draining.set(false);
            boolean wrote = false;
            for (ByteBuf frame = queued.poll(); frame != null; frame = queued.poll()) {
                queuedBytes.addAndGet(-frame.readableBytes());
                ctx.write(new DefaultHttpContent(frame));
                wrote = true;
            }
            if (wrote) {
                ctx.flush();
            }
        };
        AutoCloseable subscription = shared.events()
                .subscribe(
                        "api:" + caller.token().name(), caller.acl(), events.tag(), events.after(), (number, event) -> {
                            if (!ctx.channel().isActive()) {
                                return false;
                            }
                            if (ctx.channel().bytesBeforeUnwritable() <= queuedBytes.get()) {
                                if (cut.compareAndSet(false, true)) {
                                    long suppressed = shared.due("slow subscriber");
                                    if (suppressed >= 0) {
                                        LOG.warn(
                                                "API: event subscriber {} (token {}) cut off: {} bytes of events unread"
                                                        + " ({} more since the last line)",
                                                source(ctx),
                                                caller.token().name(),
                                                ApiServer.SUBSCRIBER_BUFFER_BYTES,
                                                suppressed);
                                    }
                                    ctx.close();
                                }
                                return false;
                            }
                            // Encoded once for every subscriber the event goes to; each writes its own duplicate.
                            ByteBuf frame = shared.frames().of(number, event);
                            queuedBytes.addAndGet(frame.readableBytes());
                            queued.add(frame);
                            if (draining.compareAndSet(false, true)) {
                                try {
                                    ctx.executor().execute(drain);
                                } catch (RejectedExecutionException e) {
                                    return false; // the API is closing
                                }
                            }
                            return true;
                        });
        // A stream is one long request: its token is checked again while it lasts, so that a token revoked or
        // expired meanwhile stops seeing events within seconds (its reconnect is then refused, 401).
        ScheduledFuture<?> recheck = ctx.executor()
                .scheduleAtFixedRate(
                        () -> {
                            try {
                                shared.workers().execute(() -> {
                                    try {
                                        authenticate(authorization, certificate);
                                    } catch (ApiError e) {
                                        ctx.close();
                                    }
                                });
                            } catch (RejectedExecutionException e) {
                                // busy: checked at the next turn
                            }
                        },
                        STREAM_TOKEN_CHECK_SECONDS,
                        STREAM_TOKEN_CHECK_SECONDS,
                        TimeUnit.SECONDS);
        ctx.channel().closeFuture().addListener(future -> {
            recheck.cancel(false);
            subscription.close();
        });
        ctx.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer(": subscribed\n\n", StandardCharsets.UTF_8)));
        // A subscriber sends nothing more; reading resumes only to notice that it closed.
        ctx.channel().config().setAutoRead(true);
    }

    // ------------------------------------------------------------------ waiting for a job

    private void waitFor(ChannelHandlerContext ctx, Caller caller, Answer.WaitForJob wait, boolean keepAlive)
            throws ApiError {
        AtomicBoolean answered = new AtomicBoolean();
        ReturnsAwaited awaited = new ReturnsAwaited();
        Runnable finish = () -> {
            if (answered.compareAndSet(false, true)) {
                try {
                    shared.workers().execute(() -> {
                        try {
                            send(
                                    ctx,
                                    json(
                                            HttpResponseStatus.OK,
                                            shared.routes()
                                                    .show(wait.jid(), caller)
                                                    .body()),
                                    keepAlive);
                        } catch (ApiError e) {
                            send(ctx, json(e.status(), error(e.status(), e.getMessage())), keepAlive);
                        }
                    });
                } catch (RejectedExecutionException e) {
                    send(
                            ctx,
                            json(
                                    HttpResponseStatus.SERVICE_UNAVAILABLE,
                                    error(HttpResponseStatus.SERVICE_UNAVAILABLE, "the master is busy; try again")),
                            false);
                }
            }
        };
        boolean watching = shared.active().watch(wait.jid(), ret -> {
            if (awaited.returned(ret.minionId())) {
                finish.run();
            }
        });
        // After the watcher is in place, so that no return falls between the two.
        Answer.Json shown = shared.routes().show(wait.jid(), caller);
        Object stillMissing = ((Map<?, ?>) shown.body()).get("missing");
        List<String> missing = stillMissing instanceof List<?> list
                ? list.stream().map(String::valueOf).toList()
                : List.of();
        if (!watching || missing.isEmpty()) {
            if (answered.compareAndSet(false, true)) {
                send(ctx, json(HttpResponseStatus.OK, shown.body()), keepAlive);
            }
            return;
        }
        if (awaited.known(missing)) {
            finish.run(); // the rest returned while the job was read: shown again, with them
            return;
        }
        ctx.executor().schedule(finish, wait.seconds(), TimeUnit.SECONDS);
        ctx.channel().closeFuture().addListener(future -> answered.set(true));
    }

    // ------------------------------------------------------------------ answers

    static Map<String, Object> error(HttpResponseStatus status, String message) {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("status", status.code());
        document.put("error", status.reasonPhrase());
        document.put("message", message);
        return document;
    }

    static FullHttpResponse json(HttpResponseStatus status, Object body) {
        byte[] bytes;
        try {
            bytes = JsonBody.JSON.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("an answer that cannot be written as JSON", e);
        }
        FullHttpResponse response =
                new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(bytes));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json; charset=utf-8");
        return response;
    }

    /** Sends {@code response} on the channel's loop; then reads the next request, or closes. */
    private void send(ChannelHandlerContext ctx, FullHttpResponse response, boolean keepAlive) {
        HttpHeaders headers = response.headers();
        headers.set(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
        headers.set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        securityHeaders(headers);
        headers.set(HttpHeaderNames.CONNECTION, keepAlive ? HttpHeaderValues.KEEP_ALIVE : HttpHeaderValues.CLOSE);
        ctx.executor().execute(() -> {
            if (!ctx.channel().isActive()) {
                response.release();
                return;
            }
            if (keepAlive) {
                ctx.writeAndFlush(response);
                busy = false;
                armDeadline(ctx);
                ctx.channel().config().setAutoRead(true);
            } else {
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            }
        });
    }

    /**
     * On every answer: no sniffing of its type, no referrer sent from the console, no framing; a policy under which
     * nothing runs unless it is a console file, which has its own.
     */
    private static void securityHeaders(HttpHeaders headers) {
        headers.set("X-Content-Type-Options", "nosniff");
        headers.set("Referrer-Policy", "no-referrer");
        headers.set("X-Frame-Options", "DENY");
        if (!headers.contains(HttpHeaderNames.CONTENT_SECURITY_POLICY)) {
            headers.set(HttpHeaderNames.CONTENT_SECURITY_POLICY, ConsoleFiles.NONE);
        }
    }

    private void refuse(ChannelHandlerContext ctx, FullHttpRequest request, ApiError error, boolean keepAlive) {
        log(ctx, request, error.status(), error.getMessage());
        send(ctx, json(error.status(), error(error.status(), error.getMessage())), keepAlive);
    }

    private void log(ChannelHandlerContext ctx, FullHttpRequest request, HttpResponseStatus status, String why) {
        log(
                source(ctx),
                request == null
                        ? "request"
                        : request.method().name() + " "
                                + printablePath(new QueryStringDecoder(request.uri()).rawPath()),
                status,
                why);
    }

    private void log(String source, String what, HttpResponseStatus status, String why) {
        long suppressed = shared.due("status " + status.code());
        if (suppressed >= 0) {
            LOG.info(
                    "API {} from {}: {} {} ({} more {} since the last line)",
                    what,
                    source,
                    status.code(),
                    MinionIds.printable(why),
                    suppressed,
                    status.code());
        }
    }

    private static String printablePath(String path) {
        return MinionIds.printable(path.length() > 200 ? path.substring(0, 200) + "..." : path);
    }

    private static String source(ChannelHandlerContext ctx) {
        return ctx.channel().remoteAddress() instanceof InetSocketAddress address
                ? address.getAddress().getHostAddress()
                : String.valueOf(ctx.channel().remoteAddress());
    }

    /** A TLS handshake refused (a client certificate the CA does not verify, or none where one is required). */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof SslHandshakeCompletionEvent done && !done.isSuccess()) {
            long suppressed = shared.due("handshake");
            if (suppressed >= 0) {
                LOG.info(
                        "API connection from {}: TLS handshake failed: {} ({} more since the last line)",
                        source(ctx),
                        MinionIds.printable(String.valueOf(done.cause().getMessage())),
                        suppressed);
            }
        }
        super.userEventTriggered(ctx, event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // TLS handshakes that fail, connections reset: the peer's doing, not the master's.
        LOG.debug("API connection {}: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }

    /**
     * The body, whole, up to {@code api.max_body_bytes}: a larger one (announced or arriving) is answered 413 and its
     * connection closed without decoding the rest ({@link #closeAfterDraining}).
     */
    static final class BodyLimit extends HttpObjectAggregator {
        private final ApiServer.Shared shared;

        BodyLimit(int maxBodyBytes, ApiServer.Shared shared) {
            super(maxBodyBytes, true);
            this.shared = shared;
        }

        @Override
        protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
            long suppressed = shared.due("status 413");
            if (suppressed >= 0) {
                LOG.info(
                        "API request from {}: 413 body over api.max_body_bytes ({}) ({} more since the last line)",
                        source(ctx),
                        shared.config().maxBodyBytes(),
                        suppressed);
            }
            FullHttpResponse response = json(
                    HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                    error(
                            HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                            "the body is over " + shared.config().maxBodyBytes() + " bytes (api.max_body_bytes)"));
            response.headers()
                    .set(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            securityHeaders(response.headers());
            ctx.writeAndFlush(response).addListener(future -> closeAfterDraining(ctx.channel()));
        }
    }

    /** How long a connection refused with its body unread is drained before it is closed. */
    static final long DRAIN_MILLIS = 2_000;

    /**
     * Closes a connection whose request was answered without reading its body: what still arrives is read and dropped
     * (never decoded: no later request on it is served) until the client closes or {@link #DRAIN_MILLIS} pass, and a
     * plain connection's output is shut at once so the client sees the answer end. Closing at once, with the body's
     * bytes unread, makes the kernel answer them with a reset, which can destroy the answer before the client reads
     * it (the client then sees no answer at all).
     */
    static void closeAfterDraining(Channel channel) {
        if (!channel.isActive()) {
            return;
        }
        channel.pipeline().addFirst("drain", new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ReferenceCountUtil.release(msg);
            }
        });
        channel.eventLoop().schedule(() -> channel.close(), DRAIN_MILLIS, TimeUnit.MILLISECONDS);
        if (channel instanceof DuplexChannel duplex && channel.pipeline().get(SslHandler.class) == null) {
            duplex.shutdownOutput();
        }
    }
}
