package io.brine.protocol.salt;

import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.MalformedException;

/**
 * One request on Salt's request channel, as the outer envelope says ({@code _package_load} in
 * salt/channel/client.py): the ZeroMQ payload frame, or the {@code body} of a TCP frame. Only {@link Auth} may be
 * served without a session; an {@link Encrypted} request is opened with the session key of the minion it names
 * ({@link SaltSessionRequest#open}).
 */
public sealed interface SaltRequest {

    /** The envelope's {@code version}; 0 when absent, as Salt reads it. */
    int version();

    /** {@code {enc: "clear", load: {cmd: "_auth", ...}, version}}. */
    record Auth(SaltAuthRequest load, int version) implements SaltRequest {}

    /**
     * {@code {enc: "aes", load: <session Crypticle>, version, id, enc_algo, sig_algo}}. {@code id} has passed brine's
     * id validator; it only says which session key to try and proves nothing until the load decrypts with that key.
     */
    record Encrypted(String id, byte[] load, int version, String encAlgo, String sigAlgo) implements SaltRequest {
        public Encrypted {
            load = load.clone();
        }

        @Override
        public byte[] load() {
            return load.clone();
        }

        /** The envelope as a minion writes it ({@code _package_load}'s field order). */
        public SaltValue.Map encode() {
            return SaltValue.Map.builder()
                    .put("enc", "aes")
                    .put("load", load)
                    .put("version", version)
                    .put("id", id)
                    .put("enc_algo", encAlgo)
                    .put("sig_algo", sigAlgo)
                    .build();
        }

        @Override
        public String toString() {
            return "Encrypted[id=" + id + ", " + load.length + " bytes, version=" + version + "]";
        }
    }

    /**
     * Any other clear request, e.g. the salt CLI's {@code publish}: brine serves none (Salt answers an unknown one
     * with an empty map).
     */
    record Clear(String cmd, SaltValue.Map load, int version) implements SaltRequest {}

    /**
     * Reads a request payload as it arrives (a ZeroMQ payload frame): up to {@link SaltLimits#UNAUTHENTICATED}'s
     * size with its bounds, and anything larger only as a flat {@code aes} envelope (no nesting, a few values), so a
     * peer without a session cannot make the master build a large tree.
     */
    static SaltRequest read(byte[] bytes, int offset, int length) throws MalformedException {
        return decode(SaltMsgpack.read(bytes, offset, length, limitsFor(length, 1)));
    }

    /**
     * The bounds for a request of {@code length} bytes whose envelope sits at {@code envelopeDepth} (1 for a ZeroMQ
     * payload, 2 inside a TCP frame).
     */
    static SaltLimits limitsFor(int length, int envelopeDepth) {
        if (length <= SaltLimits.UNAUTHENTICATED.maxBytes()) {
            return SaltLimits.UNAUTHENTICATED;
        }
        return new SaltLimits(SaltLimits.SESSION.maxBytes(), envelopeDepth, 8 * envelopeDepth + 16);
    }

    /** Reads an outer envelope; anything that is not one of the three shapes is malformed. */
    static SaltRequest decode(SaltValue payload) throws MalformedException {
        SaltValue.Map envelope = SaltFields.asMap(payload, "request");
        String enc = SaltFields.text(envelope, "enc", 16);
        int version = envelope.has("version") ? versionOf(envelope) : 0;
        switch (enc) {
            case "clear" -> {
                SaltValue.Map load = SaltFields.map(envelope, "load");
                String cmd = SaltFields.text(load, "cmd", 64);
                if (cmd.equals("_auth")) {
                    return new Auth(SaltAuthRequest.decode(load, version), version);
                }
                return new Clear(cmd, load, version);
            }
            case "aes" -> {
                String id = SaltFields.text(envelope, "id", SaltAuthRequest.MAX_ID_BYTES);
                if (!MinionIds.isValid(id)) {
                    // Salt answers an invalid id here with "bad load" too (ReqServerChannel._decode_payload).
                    throw new MalformedException("id: not a valid minion id");
                }
                return new Encrypted(
                        id,
                        SaltFields.bytes(envelope, "load", Integer.MAX_VALUE),
                        version,
                        SaltFields.optionalText(envelope, "enc_algo", 64).orElse(SaltAuthRequest.DEFAULT_ENC_ALGO),
                        SaltFields.optionalText(envelope, "sig_algo", 64).orElse(SaltAuthRequest.DEFAULT_SIG_ALGO));
            }
            default -> throw new MalformedException("enc: neither clear nor aes");
        }
    }

    private static int versionOf(SaltValue.Map envelope) throws MalformedException {
        long v = SaltFields.integer(envelope, "version");
        if (v < 0 || v > 1000) {
            throw new MalformedException("version: " + v + " is not a Salt auth protocol version");
        }
        return (int) v;
    }
}
