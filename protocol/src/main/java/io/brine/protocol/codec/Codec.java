package io.brine.protocol.codec;

import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.message.FrameType;
import io.brine.protocol.message.Message;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionType;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.interfaces.RSAKey;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * The wire codec: {@code frame = version:u8 || type:u8 || body}, the body a msgpack array laid out per record, and for
 * signed types wrapped as {@code [payload: bin, signature: bin]}. PROTOCOL.md is the spec; this class follows it.
 *
 * <p>Decoding never throws: any input that is not a well-formed frame becomes {@link Decoded.Malformed}. Encoding
 * refuses (with {@link IllegalArgumentException}) any message the decoder would refuse, by decoding what it wrote,
 * so both directions obey one set of rules.
 */
public final class Codec {

    public static final int VERSION = 1;
    /**
     * The version of a {@code PUBLISH} frame: 2 since it carries the signed issue time (PROTOCOL.md 11). Every other
     * frame, inner message and load is {@link #VERSION}.
     */
    public static final int PUBLISH_VERSION = 2;
    /** The type byte of a {@link PublishLoad}, the plaintext sealed inside a publication's box. */
    public static final int PUBLISH_LOAD_TYPE = 0x30;

    static final byte[] SIGNATURE_CONTEXT = "brine-sig-v1".getBytes(StandardCharsets.US_ASCII);

    /** The frames a master receives, and those a minion or a publisher receives (a session frame travels both ways). */
    private static final Set<FrameType> TO_MASTER =
            EnumSet.of(FrameType.AUTH_REQUEST, FrameType.CLIENT_AUTH, FrameType.SESSION);

    private static final Set<FrameType> TO_PEER =
            EnumSet.of(FrameType.AUTH_REPLY, FrameType.PUBLISH, FrameType.SESSION, FrameType.SESSION_UNKNOWN);
    private static final int HEADER = 2;

    private Codec() {}

    /** Encodes an unsigned frame (SESSION); a {@link FrameTooLargeException} when it would be over the limit. */
    public static byte[] encode(Message message) {
        FrameType type = message.type();
        if (type.signed()) {
            throw new IllegalArgumentException(type + " frames are signed: use encodeSigned");
        }
        MsgWriter out = new MsgWriter().header(type.code());
        Bodies.write(out, message);
        byte[] frame = out.toByteArray();
        if (frame.length > FrameLimits.MAX_FRAME) {
            throw new FrameTooLargeException(type.toString(), frame.length);
        }
        if (decode(frame, FrameLimits.MAX_FRAME) instanceof Decoded.Malformed malformed) {
            throw new IllegalArgumentException("refusing to encode " + type + ": " + malformed.reason());
        }
        return frame;
    }

    /** Encodes a signed frame (AUTH_REQUEST, AUTH_REPLY, PUBLISH, SESSION_UNKNOWN), signing with {@code key}. */
    public static byte[] encodeSigned(Message message, PrivateKey key) {
        FrameType type = message.type();
        if (!type.signed()) {
            throw new IllegalArgumentException(type + " frames are not signed: use encode");
        }
        MsgWriter payloadOut = new MsgWriter();
        Bodies.write(payloadOut, message);
        byte[] payload = payloadOut.toByteArray();
        // Validate before signing: a refused message should not cost a private-key operation.
        try {
            MsgReader.parse(payload, 0, payload.length, type.name(), in -> Bodies.read(type, in));
        } catch (MalformedException e) {
            throw new IllegalArgumentException("refusing to encode " + type + ": " + e.getMessage());
        }
        int signatureLength =
                key instanceof RSAKey rsa ? (rsa.getModulus().bitLength() + 7) / 8 : FieldLimits.MAX_RSA_BLOCK;
        long length = HEADER
                + 1L
                + binHeaderLength(payload.length)
                + payload.length
                + binHeaderLength(signatureLength)
                + signatureLength;
        if (length > maxFrameLength(type)) {
            throw new IllegalArgumentException("refusing to encode " + type + ": " + length
                    + " bytes exceed the limit of " + maxFrameLength(type));
        }
        byte[] signature = Rsa.sign(key, signatureInput(type, payload));
        return new MsgWriter()
                .header(type.code())
                .array(2)
                .bin("payload", payload)
                .bin("signature", signature)
                .toByteArray();
    }

    /**
     * Decodes one frame arriving {@code travelling}: at the master {@code MINION_TO_MASTER} (then the message is a
     * {@link Message.ToMaster}), at a minion or a publisher {@code MASTER_TO_MINION} (a {@link Message.ToPeer}). A
     * frame of the other direction is malformed, its type refused before its body is parsed, a session frame's
     * direction field after. Otherwise as {@link #decode(byte[], int)}.
     */
    public static Decoded decode(byte[] frame, int maxFrameLength, SessionFrame.Direction travelling) {
        Set<FrameType> allowed = travelling == SessionFrame.Direction.MINION_TO_MASTER ? TO_MASTER : TO_PEER;
        if (frame != null && frame.length >= HEADER) {
            Optional<FrameType> type = FrameType.of(frame[1] & 0xff);
            if (type.isPresent() && !allowed.contains(type.get())) {
                return new Decoded.Malformed(type.get() + " does not travel " + travelling);
            }
        }
        Decoded decoded = decode(frame, maxFrameLength);
        if (decoded instanceof Decoded.Ok ok
                && ok.message() instanceof SessionFrame sealed
                && sealed.direction() != travelling) {
            return new Decoded.Malformed(
                    "SessionFrame: expected direction " + travelling + ", got " + sealed.direction());
        }
        return decoded;
    }

    /**
     * Decodes one frame of either direction (tools, tests, and the encoder's own check); a receiver uses
     * {@link #decode(byte[], int, SessionFrame.Direction)}. {@code maxFrameLength} is checked before anything else;
     * an AUTH_REQUEST is also held to {@link FrameLimits#MAX_UNAUTHENTICATED} whatever {@code maxFrameLength} says.
     * Never throws.
     */
    public static Decoded decode(byte[] frame, int maxFrameLength) {
        if (frame == null) {
            return new Decoded.Malformed("no frame");
        }
        if (frame.length > maxFrameLength) {
            return new Decoded.Malformed("frame of " + frame.length + " bytes exceeds the limit of " + maxFrameLength);
        }
        try {
            FrameType type = frameType(frame);
            if (frame.length > maxFrameLength(type)) {
                return new Decoded.Malformed(
                        type + " frame of " + frame.length + " bytes exceeds the limit of " + maxFrameLength(type));
            }
            if (!type.signed()) {
                Message message =
                        MsgReader.parse(frame, HEADER, frame.length - HEADER, type.name(), in -> Bodies.read(type, in));
                return new Decoded.Ok(message, null, null);
            }
            byte[][] parts = MsgReader.parse(frame, HEADER, frame.length - HEADER, type.name(), in -> {
                in.array(type + " body", 2);
                byte[] payload = in.bin(type + " payload", 1, Integer.MAX_VALUE);
                byte[] signature = in.bin(type + " signature", 0, FieldLimits.MAX_RSA_BLOCK);
                return new byte[][] {payload, signature};
            });
            byte[] payload = parts[0];
            Message message = MsgReader.parse(payload, 0, payload.length, type.name(), in -> Bodies.read(type, in));
            return new Decoded.Ok(message, payload, parts[1]);
        } catch (MalformedException e) {
            return new Decoded.Malformed(e.getMessage());
        } catch (RuntimeException e) {
            // A bug, not an attack we recognised; still never let it escape to the transport thread.
            return new Decoded.Malformed("undecodable (" + e.getClass().getSimpleName() + ")");
        }
    }

    /** The largest frame of {@code type} a receiver accepts: 64 KiB for the auth types, 8 MiB for the rest. */
    public static int maxFrameLength(FrameType type) {
        return type == FrameType.AUTH_REQUEST || type == FrameType.CLIENT_AUTH
                ? FrameLimits.MAX_UNAUTHENTICATED
                : FrameLimits.MAX_FRAME;
    }

    /** The plaintext of a session frame: {@code version || type || body}, unsigned (the AEAD authenticates it). */
    public static byte[] encodeInner(SessionMessage message) {
        SessionType type = message.type();
        MsgWriter out = new MsgWriter().header(type.code());
        Bodies.write(out, message);
        byte[] plaintext = out.toByteArray();
        try {
            decodeInner(plaintext);
        } catch (MalformedException e) {
            throw new IllegalArgumentException("refusing to encode " + type + ": " + e.getMessage());
        }
        return plaintext;
    }

    /** Decodes what {@link #encodeInner} made; does not check the direction ({@link Sessions#open} does). */
    public static SessionMessage decodeInner(byte[] plaintext) throws MalformedException {
        try {
            SessionType type = sessionType(plaintext);
            return MsgReader.parse(
                    plaintext, HEADER, plaintext.length - HEADER, type.name(), in -> Bodies.readInner(type, in));
        } catch (RuntimeException e) {
            throw new MalformedException(
                    "undecodable inner message (" + e.getClass().getSimpleName() + ")");
        }
    }

    /** The plaintext of a publication: {@code version || 0x30 || body}. */
    public static byte[] encodeLoad(PublishLoad load) {
        MsgWriter out = new MsgWriter().header(PUBLISH_LOAD_TYPE);
        Bodies.write(out, load);
        byte[] plaintext = out.toByteArray();
        try {
            decodeLoad(plaintext);
        } catch (MalformedException e) {
            throw new IllegalArgumentException("refusing to encode PublishLoad: " + e.getMessage());
        }
        return plaintext;
    }

    public static PublishLoad decodeLoad(byte[] plaintext) throws MalformedException {
        try {
            if (plaintext == null || plaintext.length < HEADER + 1) {
                throw new MalformedException("publish load: too short");
            }
            checkVersion(plaintext, "publish load", PUBLISH_LOAD_TYPE);
            if ((plaintext[1] & 0xff) != PUBLISH_LOAD_TYPE) {
                throw new MalformedException(
                        "publish load: type 0x" + Integer.toHexString(plaintext[1] & 0xff) + " is not 0x30");
            }
            return MsgReader.parse(plaintext, HEADER, plaintext.length - HEADER, "PublishLoad", Bodies::readLoad);
        } catch (RuntimeException e) {
            throw new MalformedException(
                    "undecodable publish load (" + e.getClass().getSimpleName() + ")");
        }
    }

    /** {@code "brine-sig-v1" || version || type || payload}: what a frame's signature covers. */
    static byte[] signatureInput(FrameType type, byte[] payload) {
        byte[] input = new byte[SIGNATURE_CONTEXT.length + HEADER + payload.length];
        System.arraycopy(SIGNATURE_CONTEXT, 0, input, 0, SIGNATURE_CONTEXT.length);
        input[SIGNATURE_CONTEXT.length] = (byte) version(type.code());
        input[SIGNATURE_CONTEXT.length + 1] = (byte) type.code();
        System.arraycopy(payload, 0, input, SIGNATURE_CONTEXT.length + HEADER, payload.length);
        return input;
    }

    private static int binHeaderLength(int size) {
        return size < 0x100 ? 2 : size < 0x10000 ? 3 : 5;
    }

    private static FrameType frameType(byte[] bytes) throws MalformedException {
        int code = code(bytes, "frame");
        Optional<FrameType> type = FrameType.of(code);
        checkVersion(bytes, "frame", type.map(FrameType::code).orElse(-1));
        return type.orElseThrow(() -> new MalformedException("frame: unknown type 0x" + Integer.toHexString(code)));
    }

    private static SessionType sessionType(byte[] bytes) throws MalformedException {
        int code = code(bytes, "inner message");
        Optional<SessionType> type = SessionType.of(code);
        checkVersion(bytes, "inner message", type.map(SessionType::code).orElse(-1));
        return type.orElseThrow(
                () -> new MalformedException("inner message: unknown type 0x" + Integer.toHexString(code)));
    }

    private static int code(byte[] bytes, String what) throws MalformedException {
        if (bytes == null || bytes.length < HEADER + 1) {
            throw new MalformedException(what + ": too short");
        }
        return bytes[1] & 0xff;
    }

    /** The version byte that starts a frame, inner message or load of type {@code code}. */
    static int version(int code) {
        return code == FrameType.PUBLISH.code() ? PUBLISH_VERSION : VERSION;
    }

    private static void checkVersion(byte[] bytes, String what, int code) throws MalformedException {
        int version = bytes[0] & 0xff;
        if (version != version(code)) {
            throw new MalformedException(what + ": unsupported version " + version);
        }
    }
}
