package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;
import java.util.Optional;

/**
 * One message of Salt's TCP transport (salt/transport/frame.py, {@code frame_msg}): a msgpack map
 * {@code {head, body}} in msgpack-python's default dialect, with no length prefix: frames delimit themselves
 * ({@link SaltStreamScanner} finds where one ends). A request's head carries its message id {@code mid} (a uuid4
 * string; requests are pipelined on one connection); the reply carries the same head. Publications have an empty
 * head.
 */
public record SaltTcpFrame(SaltValue.Map head, SaltValue body) {

    static final int MAX_MID_BYTES = 128;

    public Optional<String> mid() {
        try {
            return SaltFields.optionalText(head, "mid", MAX_MID_BYTES);
        } catch (MalformedException e) {
            return Optional.empty();
        }
    }

    /** The answer to this request: the same head, {@code body}. */
    public SaltTcpFrame reply(SaltValue body) {
        return new SaltTcpFrame(head, body);
    }

    public static byte[] encode(SaltTcpFrame frame) {
        return SaltMsgpack.write(
                SaltValue.Map.builder()
                        .put("head", frame.head)
                        .put("body", frame.body)
                        .build(),
                SaltDialect.FRAME);
    }

    /** Reads one whole frame (as {@link SaltStreamScanner} cut it). */
    public static SaltTcpFrame decode(byte[] bytes, int offset, int length, SaltLimits limits)
            throws MalformedException {
        SaltValue.Map frame = SaltFields.asMap(SaltMsgpack.read(bytes, offset, length, limits), "frame");
        if (frame.entries().size() != 2) {
            throw new MalformedException("frame: expected exactly head and body");
        }
        SaltValue.Map head = SaltFields.map(frame, "head");
        if (head.has("mid")) {
            SaltFields.text(head, "mid", MAX_MID_BYTES);
        }
        return new SaltTcpFrame(head, SaltFields.required(frame, "body"));
    }

    /**
     * Reads a frame of a request connection and the request in its body, with {@link SaltRequest#read}'s bounds: a
     * frame over {@link SaltLimits#UNAUTHENTICATED}'s size is read only if its body is a flat {@code aes} envelope.
     */
    public static Request decodeRequest(byte[] bytes, int offset, int length) throws MalformedException {
        SaltTcpFrame frame = decode(bytes, offset, length, SaltRequest.limitsFor(length, 2));
        return new Request(frame, SaltRequest.decode(frame.body()));
    }

    /** A request frame: the frame (for its head, echoed by the reply) and the request its body holds. */
    public record Request(SaltTcpFrame frame, SaltRequest request) {}

    public static SaltTcpFrame decode(byte[] bytes, SaltLimits limits) throws MalformedException {
        return decode(bytes, 0, bytes.length, limits);
    }
}
