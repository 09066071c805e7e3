package io.brine.master.salt;

import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.salt.SaltDialect;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltMsgpack;
import io.brine.protocol.salt.SaltRequest;
import io.brine.protocol.salt.SaltTcpFrame;
import io.brine.protocol.salt.SaltValue;
import io.brine.transport.Peer;
import io.brine.transport.ServerTransport;
import java.util.function.Consumer;

/**
 * Stock Salt minions' frames on the master's ports ({@code salt_minions: true}): read once with Salt's bounds, on the
 * transport thread, and handed to {@link SaltService} on the dispatcher's lanes ({@code _auth} and Salt's other clear
 * commands rate-limited as strangers, encrypted requests with the session frames), with a {@link SaltReplyPath} that
 * answers in the request's transport form.
 */
public final class SaltFrames implements SaltInbound {

    private final SaltService salt;
    private final ServerTransport transport;

    public SaltFrames(SaltService salt, ServerTransport transport) {
        this.salt = salt;
        this.transport = transport;
    }

    /**
     * A brine frame starts with its version byte (1); a Salt payload on the ZeroMQ request channel is a msgpack map
     * ({@code fixmap}, {@code map16}, {@code map32}) or, for a bare reply string, never sent by a minion.
     */
    @Override
    public boolean claims(byte[] payload) {
        return SaltMsgpack.isMap(payload);
    }

    @Override
    public boolean onFrame(Peer from, byte[] frame, Lanes lanes) {
        return switch (from.framing()) {
            case MESSAGE -> onPayload(from, frame, lanes);
            case SALT_TCP_PUBLISH -> onHello(from, frame, lanes);
            case SALT_TCP_REQUEST -> onTcpRequest(from, frame, lanes);
        };
    }

    /**
     * A payload on the ZeroMQ request channel: only {@code _auth} (and Salt's refusal of other clear commands) without
     * a key.
     */
    private boolean onPayload(Peer from, byte[] payload, Lanes lanes) {
        SaltReplyPath path = zmqPath(from);
        SaltRequest request;
        try {
            request = SaltRequest.read(payload, 0, payload.length);
        } catch (MalformedException e) {
            lanes.drop(from, "Salt request: " + e.getMessage());
            path.reply(SaltValue.str("bad load")); // a REQ peer waits for an answer; Salt sends this one
            return false;
        }
        return handle(from, payload.length, request, path, lanes);
    }

    /** On the publish port, the minion's hello, which says (and proves) whose publications the connection takes. */
    private boolean onHello(Peer from, byte[] bytes, Lanes lanes) {
        SaltTcpFrame frame;
        try {
            frame = SaltTcpFrame.decode(bytes, SaltLimits.UNAUTHENTICATED);
        } catch (MalformedException e) {
            lanes.drop(from, "Salt publish hello: " + e.getMessage());
            transport.disconnect(from);
            return false;
        }
        SaltReplyPath path = replyPath(from, value -> {}); // a hello is not answered
        return lanes.unauthenticated(from, bytes.length, () -> salt.hello(frame.body(), path));
    }

    /** On the request port a request, answered with the frame's head echoed. */
    private boolean onTcpRequest(Peer from, byte[] bytes, Lanes lanes) {
        SaltTcpFrame.Request request;
        try {
            request = SaltTcpFrame.decodeRequest(bytes, 0, bytes.length);
        } catch (MalformedException e) {
            // Salt would answer "bad load" when it can read the head; a peer that sends what no minion sends loses
            // its connection instead (SALT.md open question 4).
            lanes.drop(from, "Salt TCP request: " + e.getMessage());
            transport.disconnect(from);
            return false;
        }
        return handle(from, bytes.length, request.request(), tcpPath(from, request.frame()), lanes);
    }

    private boolean handle(Peer from, int size, SaltRequest request, SaltReplyPath path, Lanes lanes) {
        if (request instanceof SaltRequest.Encrypted) {
            return lanes.session(from, size, () -> salt.handle(request, path));
        }
        return lanes.unauthenticated(from, size, () -> salt.handle(request, path));
    }

    /** Answers on a Salt TCP connection: {@code {head, body}} with the request's head. */
    private SaltReplyPath tcpPath(Peer from, SaltTcpFrame request) {
        return replyPath(from, value -> transport.send(from, SaltTcpFrame.encode(request.reply(value))));
    }

    /** Answers on the ZeroMQ request channel: the whole payload in Salt's payload dialect. */
    private SaltReplyPath zmqPath(Peer from) {
        return replyPath(from, value -> transport.send(from, SaltMsgpack.write(value, SaltDialect.PAYLOAD)));
    }

    /** A reply path to {@code from} that answers by {@code reply} and binds or disconnects the peer itself. */
    private SaltReplyPath replyPath(Peer from, Consumer<SaltValue> reply) {
        return new SaltReplyPath() {
            @Override
            public void reply(SaltValue value) {
                reply.accept(value);
            }

            @Override
            public void bind(String id) {
                transport.bind(id, from);
            }

            @Override
            public void disconnect() {
                transport.disconnect(from);
            }

            @Override
            public void keepUnproven() {
                transport.keepUnproven(from);
            }

            @Override
            public String remoteAddress() {
                return from.remoteAddress();
            }
        };
    }
}
