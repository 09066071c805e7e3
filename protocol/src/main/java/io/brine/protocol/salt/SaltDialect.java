package io.brine.protocol.salt;

/**
 * The two msgpack dialects Salt writes (SALT.md, "msgpack"). They differ only in how byte strings are written;
 * integers always take their smallest form, floats are float64, maps keep insertion order.
 */
public enum SaltDialect {

    /**
     * {@code salt.payload.dumps}: msgpack-python with {@code use_bin_type=False}. Text and bytes alike are written in
     * the old raw (str) family without str8 (lengths 32..65535 take str16 {@code DA}); there is no bin. Every ZeroMQ
     * message and every blob Salt signs or encrypts, on both transports, is in this dialect.
     */
    PAYLOAD,

    /**
     * msgpack-python's default ({@code use_bin_type=True}): text in the str family with str8, bytes as bin. Salt's
     * TCP transport writes its outer {@code {head, body}} frame this way.
     */
    FRAME
}
