package io.brine.transport.zmtp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * One ZMTP connection, client side (we connect: DEALER or REQ to a ROUTER, SUB to a PUB), as a ZeroMQ socket does it:
 * <ol>
 * <li>sends our whole greeting as soon as the connection opens, and our READY (Socket-Type, no Identity) once the
 * server's greeting is in; the server's READY must name a type ours may talk to;</li>
 * <li>then passes whole messages on, answers each PING with a PONG carrying its context, sends a PING of its own
 * every heartbeat interval and closes when nothing came back within the heartbeat timeout after one;</li>
 * <li>frames outbound {@link ZmtpEvent.Subscribe} and {@link ZmtpEvent.Cancel} as the server's version expects.</li>
 * </ol>
 * A handshake not done in time, bad bytes, an unfit server or its ERROR become one {@link ZmtpEvent.Refused},
 * fired before the connection is closed; nothing after it is passed on. Nothing is logged here.
 */
final class ZmtpClientHandler extends ChannelDuplexHandler {

    private static final byte[] NO_CONTEXT = new byte[0];

    private enum Stage {
        GREETING,
        READY,
        TRAFFIC,
        CLOSED
    }

    private final SocketType ours;
    private final ZmtpClientPipeline.Timers timers;
    private Stage stage = Stage.GREETING;
    private int peerMinor;
    private long lastRead;
    private ScheduledFuture<?> handshakeTimer;
    private ScheduledFuture<?> heartbeat;
    private ScheduledFuture<?> heartbeatTimeout;

    ZmtpClientHandler(SocketType ours, ZmtpClientPipeline.Timers timers) {
        if (ours != SocketType.DEALER && ours != SocketType.REQ && ours != SocketType.SUB) {
            throw new IllegalArgumentException("the ZMTP client is a DEALER, REQ or SUB, not " + ours);
        }
        this.ours = ours;
        this.timers = timers;
    }

    /** Added to a connection already open (a pipeline built after connect): it starts now, as on activation. */
    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (ctx.channel().isActive()) {
            start(ctx);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (handshakeTimer == null) {
            start(ctx);
        }
        ctx.fireChannelActive();
    }

    private void start(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(ZmtpEncoder.greeting());
        handshakeTimer = ctx.executor()
                .schedule(
                        () -> {
                            if (stage != Stage.TRAFFIC && stage != Stage.CLOSED) {
                                refuse(
                                        ctx,
                                        "no ZMTP handshake within "
                                                + timers.handshake().toMillis() + " ms");
                            }
                        },
                        timers.handshake().toMillis(),
                        TimeUnit.MILLISECONDS);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        stopTimers();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stopTimers();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (stage == Stage.CLOSED) {
            return; // the rest of a read that came with the refused bytes
        }
        lastRead = System.nanoTime();
        if (msg instanceof Greeting greeting) {
            peerMinor = greeting.minor();
            stage = Stage.READY;
            ctx.writeAndFlush(ZmtpEncoder.ready(ctx.alloc(), ours, null));
        } else if (msg instanceof Command command) {
            command(ctx, command);
        } else if (msg instanceof ZmtpEvent.Message message) {
            if (stage != Stage.TRAFFIC) {
                refuse(ctx, "a message before READY");
            } else {
                ctx.fireChannelRead(message);
            }
        } else if (msg instanceof ZmtpEvent.Refused refused) {
            refuse(ctx, refused);
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    private void command(ChannelHandlerContext ctx, Command command) {
        if (command instanceof Command.Error error) {
            refuse(ctx, "the server sent ERROR " + error.reason());
        } else if (stage != Stage.TRAFFIC) {
            if (command instanceof Command.Ready ready) {
                handshake(ctx, ready.metadata());
            } else {
                refuse(ctx, nameOf(command) + " before READY");
            }
        } else if (command instanceof Command.Ping ping) {
            ctx.writeAndFlush(ZmtpEncoder.pong(ctx.alloc(), ping.context()));
            ctx.fireChannelRead(new ZmtpEvent.Ping(ping.ttl(), ping.context()));
        } else if (command instanceof Command.Pong pong) {
            ctx.fireChannelRead(new ZmtpEvent.Pong(pong.context()));
        } else if (!(command instanceof Command.Unknown)) {
            refuse(ctx, nameOf(command) + " on an established " + ours + " connection");
        }
        // An unknown command is skipped, as the server does (mechanisms and later versions add their own).
    }

    private void handshake(ChannelHandlerContext ctx, Metadata metadata) {
        byte[] typeName = metadata.get(Metadata.SOCKET_TYPE);
        if (typeName == null) {
            refuse(ctx, "a READY without Socket-Type");
            return;
        }
        SocketType peer = SocketType.named(typeName);
        if (peer == null || !ours.accepts(peer)) {
            refuse(ctx, "Socket-Type " + Printable.of(typeName) + " cannot talk to " + ours);
            return;
        }
        stage = Stage.TRAFFIC;
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        long interval = timers.heartbeatInterval().toMillis();
        if (interval > 0) {
            heartbeat = ctx.executor().scheduleAtFixedRate(() -> ping(ctx), interval, interval, TimeUnit.MILLISECONDS);
        }
        ctx.fireChannelRead(new ZmtpEvent.Handshaken(peer, new byte[0]));
    }

    /**
     * A heartbeat, as libzmq sends it: a PING every interval, and when none is pending a check one timeout later
     * that the server sent something since this PING.
     */
    private void ping(ChannelHandlerContext ctx) {
        if (stage != Stage.TRAFFIC) {
            return;
        }
        ctx.writeAndFlush(ZmtpEncoder.ping(ctx.alloc(), 0, NO_CONTEXT));
        if (heartbeatTimeout == null || heartbeatTimeout.isDone()) {
            long sent = System.nanoTime();
            heartbeatTimeout = ctx.executor()
                    .schedule(
                            () -> {
                                if (stage == Stage.TRAFFIC && lastRead - sent < 0) {
                                    refuse(
                                            ctx,
                                            "nothing from the server within "
                                                    + timers.heartbeatTimeout().toMillis() + " ms of a heartbeat");
                                }
                            },
                            timers.heartbeatTimeout().toMillis(),
                            TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ZmtpEvent.Subscribe subscribe) {
            ctx.write(subscription(ctx, true, subscribe.topic()), promise);
        } else if (msg instanceof ZmtpEvent.Cancel cancel) {
            ctx.write(subscription(ctx, false, cancel.topic()), promise);
        } else {
            ctx.write(msg, promise);
        }
    }

    /** ZMTP 3.1 subscribes with commands; a 3.0 server expects the message {@code 0x01 topic} ({@code 0x00}: cancel). */
    private ByteBuf subscription(ChannelHandlerContext ctx, boolean subscribe, byte[] topic) {
        if (ours != SocketType.SUB || stage != Stage.TRAFFIC) {
            throw new IllegalStateException(
                    "a subscription goes on a handshaken SUB connection, not " + ours + " in " + stage);
        }
        if (peerMinor >= 1) {
            return subscribe ? ZmtpEncoder.subscribe(ctx.alloc(), topic) : ZmtpEncoder.cancel(ctx.alloc(), topic);
        }
        byte[] body = new byte[topic.length + 1];
        body[0] = (byte) (subscribe ? 1 : 0);
        System.arraycopy(topic, 0, body, 1, topic.length);
        return ZmtpEncoder.message(ctx.alloc(), body);
    }

    private void refuse(ChannelHandlerContext ctx, String reason) {
        refuse(ctx, new ZmtpEvent.Refused(reason));
    }

    private void refuse(ChannelHandlerContext ctx, ZmtpEvent.Refused refusal) {
        stage = Stage.CLOSED;
        stopTimers();
        ctx.fireChannelRead(refusal);
        ctx.close();
    }

    private void stopTimers() {
        for (ScheduledFuture<?> timer : new ScheduledFuture<?>[] {handshakeTimer, heartbeat, heartbeatTimeout}) {
            if (timer != null) {
                timer.cancel(false);
            }
        }
    }

    private static String nameOf(Command command) {
        return command instanceof Command.Unknown unknown
                ? unknown.name()
                : command.getClass().getSimpleName().toUpperCase(Locale.ROOT);
    }
}
