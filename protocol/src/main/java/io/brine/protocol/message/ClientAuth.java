package io.brine.protocol.message;

/**
 * A publisher (the {@code brine} CLI or the Java client) asks for a session, signed with its key. The master
 * answers with an {@link AuthReply} whose session carries only a request key.
 *
 * @param suite       crypto suite
 * @param name        the publisher's name: {@code root} for the master's local key, else a name registered in
 *                    {@code pki_dir/publishers/} (validated like a minion id)
 * @param publicKey   the publisher's RSA public key, SPKI DER
 * @param nonce       32 fresh random bytes; the reply must echo them
 * @param timestampMs the publisher's clock, epoch milliseconds
 */
public record ClientAuth(int suite, String name, byte[] publicKey, byte[] nonce, long timestampMs)
        implements Message.ToMaster {

    @Override
    public FrameType type() {
        return FrameType.CLIENT_AUTH;
    }

    @Override
    public ToMaster.Kind toMaster() {
        return ToMaster.Kind.CLIENT_AUTH;
    }

    @Override
    public String toString() {
        return "ClientAuth[name=" + name + "]";
    }
}
