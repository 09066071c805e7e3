package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * A job publication in Salt's envelope (salt/channel/server.py, {@code PubServerChannel.wrap_payload}): the load
 * sealed with the shared {@code aes} Crypticle, and the master's PKCS#1 v1.5 signature over the <em>encrypted</em>
 * load, with the algorithm the master chose ({@code publish_signing_algorithm}), named in the envelope.
 *
 * @param tgt a string, or a list for a list target
 * @param extra further load fields (e.g. {@code kwargs}, {@code metadata}), written after {@code user}
 * @param serial strictly increasing per master run; a minion drops a serial it has seen ({@code Crypticle.loads})
 */
public record SaltPublication(
        String fun,
        SaltValue arg,
        SaltValue tgt,
        String jid,
        String ret,
        String tgtType,
        String user,
        List<SaltValue.Entry> extra,
        long serial) {

    /** The ZeroMQ topic every minion subscribes to when {@code zmq_filtering} is on. */
    public static final String BROADCAST = "broadcast";

    public SaltPublication {
        extra = List.copyOf(extra);
    }

    /** The load in Salt's field order. */
    public SaltValue.Map load() {
        SaltValue.Builder b = SaltValue.Map.builder()
                .put("fun", fun)
                .put("arg", arg)
                .put("tgt", tgt)
                .put("jid", jid)
                .put("ret", ret)
                .put("tgt_type", tgtType)
                .put("user", user);
        for (SaltValue.Entry e : extra) {
            b.put(e.key().text().orElseThrow(), e.value());
        }
        return b.put("serial", serial).build();
    }

    /** The envelope's bytes (Salt's payload dialect): the ZeroMQ message, or the TCP frame's body. */
    public byte[] envelope(Crypticle aes, PrivateKey master, SaltRsa.Signing signing) {
        return envelope(aes.dumps(load(), null), master, signing);
    }

    static byte[] envelope(byte[] sealedLoad, PrivateKey master, SaltRsa.Signing signing) {
        SaltValue.Map envelope = SaltValue.Map.builder()
                .put("enc", "aes")
                .put("load", sealedLoad)
                .put("sig_algo", signing.wireName())
                .put("sig", SaltRsa.sign(master, signing, sealedLoad))
                .build();
        return SaltMsgpack.write(envelope, SaltDialect.PAYLOAD);
    }

    /**
     * The ZeroMQ topic of one minion with {@code zmq_filtering}: the lower-case hex SHA-1 of its id
     * ({@code salt/transport/zeromq.py}, {@code PublishServer.publish_payload}).
     */
    public static String topic(String minionId) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(minionId.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The ZeroMQ messages of one publication. Without {@code zmq_filtering}: the envelope alone, one frame. With it:
     * {@code [topic, envelope]} per targeted minion when the master resolved the target to {@code minionIds}
     * (Salt does so for glob, pcre and list targets), or once with {@link #BROADCAST} when it did not (empty).
     */
    public static List<List<byte[]>> zmqMessages(
            byte[] envelope, boolean zmqFiltering, Optional<List<String>> minionIds) {
        if (!zmqFiltering) {
            return List.of(List.of(envelope));
        }
        if (minionIds.isEmpty()) {
            return List.of(List.of(BROADCAST.getBytes(StandardCharsets.US_ASCII), envelope));
        }
        return minionIds.get().stream()
                .map(id -> List.of(topic(id).getBytes(StandardCharsets.US_ASCII), envelope))
                .toList();
    }

    /** A publication on Salt's TCP transport: {@code {head: {}, body: <envelope bytes>}}. */
    public static byte[] tcpFrame(byte[] envelope) {
        return SaltTcpFrame.encode(new SaltTcpFrame(SaltValue.Map.builder().build(), SaltValue.bin(envelope)));
    }

    /**
     * What a minion does with an envelope ({@code AsyncPubChannel._decode_payload}): checks the signature with the
     * algorithm the envelope names (a missing or unknown one is refused: brine's minions of Salt never run without
     * {@code sign_pub_messages}), decrypts, reads the load. Empty when the serial is not above {@code lastSerial}.
     */
    public static Optional<SaltPublication> open(
            byte[] envelopeBytes, PublicKey master, Crypticle aes, long lastSerial, SaltLimits limits)
            throws CryptoException, MalformedException {
        SaltValue.Map envelope = SaltFields.asMap(SaltMsgpack.read(envelopeBytes, limits), "publication");
        if (!SaltFields.text(envelope, "enc", 16).equals("aes")) {
            throw new MalformedException("enc: a publication is aes");
        }
        byte[] sealedLoad = SaltFields.bytes(envelope, "load", limits.maxBytes());
        String algorithm = SaltFields.text(envelope, "sig_algo", 64);
        SaltRsa.Signing signing =
                SaltRsa.Signing.named(algorithm).orElseThrow(() -> new MalformedException("sig_algo: unknown"));
        if (!SaltRsa.verify(
                master, signing, sealedLoad, SaltFields.bytes(envelope, "sig", SaltAuthRequest.MAX_RSA_BYTES))) {
            throw new CryptoException("publication: signature failed to validate");
        }
        SaltValue.Map load = SaltFields.asMap(aes.loads(sealedLoad, null, limits), "publication load");
        SaltPublication publication = decode(load);
        return publication.serial() > lastSerial ? Optional.of(publication) : Optional.empty();
    }

    static SaltPublication decode(SaltValue.Map load) throws MalformedException {
        List<String> known = List.of("fun", "arg", "tgt", "jid", "ret", "tgt_type", "user", "serial");
        List<SaltValue.Entry> extra = load.entries().stream()
                .filter(e -> e.key().text().map(k -> !known.contains(k)).orElse(false))
                .toList();
        return new SaltPublication(
                SaltFields.text(load, "fun", 1024),
                SaltFields.required(load, "arg"),
                SaltFields.required(load, "tgt"),
                SaltFields.text(load, "jid", 64),
                SaltFields.optionalText(load, "ret", 1024).orElse(""),
                SaltFields.text(load, "tgt_type", 32),
                SaltFields.optionalText(load, "user", 1024).orElse(""),
                extra,
                SaltFields.integer(load, "serial"));
    }
}
