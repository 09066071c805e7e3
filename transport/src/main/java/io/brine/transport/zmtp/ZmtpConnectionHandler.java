package io.brine.transport.zmtp;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One ZMTP connection, server side (we bind: ROUTER on {@code ret_port}, PUB or XPUB on {@code publish_port}):
 * <ol>
 * <li>sends our whole greeting as soon as the connection opens, so a peer that sends its signature and waits for
 * ours (RFC 23's version detection, which libzmq does) goes on as well as one that sends all 64 bytes at once;</li>
 * <li>on the peer's greeting (checked by {@link ZmtpDecoder}) waits for its READY; checks its Socket-Type against
 * ours, and a ROUTER peer's Identity; answers with our READY (RFC 37: the server replies once it has validated),
 * or with an ERROR and a close;</li>
 * <li>then passes whole messages on, turns subscriptions of either form into {@link ZmtpEvent.Subscribe} and
 * {@link ZmtpEvent.Cancel}, and answers each PING with a PONG carrying its context.</li>
 * </ol>
 * Everything that goes wrong becomes one {@link ZmtpEvent.Refused}, fired before the connection is closed; nothing
 * after it is passed on. Nothing is logged here: the transport logs the refusal once.
 */
final class ZmtpConnectionHandler extends ChannelInboundHandlerAdapter {

    private static final int MAX_IDENTITY = 255;

    private enum Stage {
        GREETING,
        READY,
        TRAFFIC,
        CLOSED
    }

    private final SocketType ours;
    private Stage stage = Stage.GREETING;

    ZmtpConnectionHandler(SocketType ours) {
        if (ours != SocketType.ROUTER && !ours.publishes()) {
            throw new IllegalArgumentException("brine serves ROUTER, PUB and XPUB, not " + ours);
        }
        this.ours = ours;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(ZmtpEncoder.greeting());
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (stage == Stage.CLOSED) {
            return; // the rest of a read that came with the refused bytes
        }
        if (msg instanceof Greeting) {
            stage = Stage.READY;
        } else if (msg instanceof Command command) {
            command(ctx, command);
        } else if (msg instanceof ZmtpEvent.Message message) {
            message(ctx, message);
        } else if (msg instanceof ZmtpEvent.Refused refused) {
            refuse(ctx, refused, null);
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    private void command(ChannelHandlerContext ctx, Command command) {
        if (stage != Stage.TRAFFIC) {
            // NULL handshake grammar: READY, or ERROR, and nothing else.
            if (command instanceof Command.Ready ready) {
                handshake(ctx, ready.metadata());
            } else if (command instanceof Command.Error error) {
                refuse(ctx, new ZmtpEvent.Refused("the peer sent ERROR", error.reason()), null);
            } else {
                refuse(ctx, nameOf(command) + " before READY", null);
            }
        } else if (command instanceof Command.Ping ping) {
            ctx.writeAndFlush(ZmtpEncoder.pong(ctx.alloc(), ping.context()));
            ctx.fireChannelRead(new ZmtpEvent.Ping(ping.ttl(), ping.context()));
        } else if (command instanceof Command.Pong pong) {
            ctx.fireChannelRead(new ZmtpEvent.Pong(pong.context()));
        } else if (command instanceof Command.Subscribe subscribe && ours.publishes()) {
            ctx.fireChannelRead(new ZmtpEvent.Subscribe(subscribe.topic()));
        } else if (command instanceof Command.Cancel cancel && ours.publishes()) {
            ctx.fireChannelRead(new ZmtpEvent.Cancel(cancel.topic()));
        } else if (command instanceof Command.Error error) {
            refuse(ctx, new ZmtpEvent.Refused("the peer sent ERROR", error.reason()), null);
        } else if (!(command instanceof Command.Unknown)) {
            refuse(ctx, nameOf(command) + " on an established " + ours + " connection", null);
        }
        // An unknown command is skipped: mechanisms and later versions add their own, and it costs no more than
        // the frame limit already allows. It is not passed on, so it does not count as activity either.
    }

    private void handshake(ChannelHandlerContext ctx, Metadata metadata) {
        byte[] typeName = metadata.get(Metadata.SOCKET_TYPE);
        if (typeName == null) {
            refuse(ctx, "a READY without Socket-Type", "Missing-Socket-Type");
            return;
        }
        SocketType peer = SocketType.named(typeName);
        if (peer == null || !ours.accepts(peer)) {
            refuse(
                    ctx,
                    new ZmtpEvent.Refused(
                            "a Socket-Type that cannot talk to " + ours, "Socket-Type " + Printable.of(typeName)),
                    "Invalid-Socket-Type");
            return;
        }
        byte[] identity = new byte[0];
        byte[] offered = metadata.get(Metadata.IDENTITY);
        // RFC 23: the Identity only means something to a ROUTER; every other socket ignores it.
        if (ours == SocketType.ROUTER && offered != null) {
            if (offered.length > MAX_IDENTITY) {
                refuse(ctx, "an Identity of " + offered.length + " bytes (at most 255)", "Invalid-Identity");
                return;
            }
            if (offered.length > 0 && offered[0] == 0) {
                // RFC 37 reserves these for the ROUTER's own names: a peer must not be able to take one.
                refuse(ctx, "an Identity that starts with a zero byte", "Invalid-Identity");
                return;
            }
            identity = offered;
        }
        stage = Stage.TRAFFIC;
        ctx.writeAndFlush(ZmtpEncoder.ready(ctx.alloc(), ours, null));
        ctx.fireChannelRead(new ZmtpEvent.Handshaken(peer, identity));
    }

    private void message(ChannelHandlerContext ctx, ZmtpEvent.Message message) {
        if (stage != Stage.TRAFFIC) {
            refuse(ctx, "a message before READY", null);
        } else if (!ours.publishes()) {
            ctx.fireChannelRead(message);
        } else {
            subscription(ctx, message.parts());
        }
    }

    /**
     * A subscriber sends nothing but subscriptions. ZMTP 3.0 peers (and libzmq's SUB talking to one) send them as
     * a one-part message {@code 0x01 topic} or {@code 0x00 topic}; ZMTP 3.1 peers as commands. Both forms are taken
     * from either version: there is no ambiguity, and a 3.0 peer may have been told by our greeting that we are 3.1.
     */
    private void subscription(ChannelHandlerContext ctx, List<byte[]> parts) {
        byte[] first = parts.get(0);
        if (parts.size() != 1 || first.length == 0 || (first[0] != 0 && first[0] != 1)) {
            refuse(ctx, "a message from a subscriber that is not a subscription", null);
            return;
        }
        byte[] topic = Arrays.copyOfRange(first, 1, first.length);
        ctx.fireChannelRead(first[0] == 1 ? new ZmtpEvent.Subscribe(topic) : new ZmtpEvent.Cancel(topic));
    }

    /** Fires the one {@link ZmtpEvent.Refused}, then closes, after an ERROR when the peer is owed one. */
    private void refuse(ChannelHandlerContext ctx, String reason, String error) {
        refuse(ctx, new ZmtpEvent.Refused(reason), error);
    }

    private void refuse(ChannelHandlerContext ctx, ZmtpEvent.Refused refusal, String error) {
        stage = Stage.CLOSED;
        ctx.fireChannelRead(refusal);
        if (error != null) {
            ctx.writeAndFlush(ZmtpEncoder.error(ctx.alloc(), error)).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.close();
        }
    }

    private static String nameOf(Command command) {
        return command instanceof Command.Unknown unknown
                ? unknown.name()
                : command.getClass().getSimpleName().toUpperCase(Locale.ROOT);
    }
}
