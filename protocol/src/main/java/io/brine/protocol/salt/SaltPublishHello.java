package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;

/**
 * The first frame a Salt minion writes on its TCP publish connection ({@code AsyncPubChannel.send_id} in
 * salt/channel/client.py): {@code {enc: "aes", load: Crypticle(aes)({id, tok}), version: 3}}, sealed with the
 * shared <em>aes</em> key, not the session key. It tells the master which minion the connection belongs to, so
 * that publications can be sent to the minions they target; the {@code tok} proves the id (X9.31 of {@code salt}
 * by the minion's key).
 */
public record SaltPublishHello(String id, byte[] tok) {

    public SaltPublishHello {
        tok = tok.clone();
    }

    @Override
    public byte[] tok() {
        return tok.clone();
    }

    public static SaltPublishHello open(SaltValue body, Crypticle aes, SaltLimits limits)
            throws CryptoException, MalformedException {
        SaltValue.Map envelope = SaltFields.asMap(body, "publish hello");
        if (!SaltFields.text(envelope, "enc", 16).equals("aes")) {
            throw new MalformedException("enc: the publish hello is aes");
        }
        SaltValue.Map load = SaltFields.asMap(
                aes.loads(SaltFields.bytes(envelope, "load", limits.maxBytes()), null, limits), "load");
        return new SaltPublishHello(
                SaltFields.text(load, "id", SaltAuthRequest.MAX_ID_BYTES),
                SaltFields.bytes(load, "tok", SaltSessionRequest.MAX_TOK_BYTES));
    }

    /** The frame body as a minion writes it (tests, the benchmark). */
    public SaltValue seal(Crypticle aes) {
        SaltValue.Map load =
                SaltValue.Map.builder().put("id", id).put("tok", tok).build();
        return SaltValue.Map.builder()
                .put("enc", "aes")
                .put("load", aes.dumps(load, null))
                .put("version", 3)
                .build();
    }

    @Override
    public String toString() {
        return "SaltPublishHello[id=" + id + "]";
    }
}
