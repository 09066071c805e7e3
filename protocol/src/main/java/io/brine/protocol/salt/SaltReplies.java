package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;

/**
 * The master's answers to session requests (salt/channel/server.py, {@code ReqServerChannel.handle_message}): a
 * {@code send} reply is the value sealed with the minion's session key behind the request's nonce; a
 * {@code send_private} reply ({@code _pillar}) is sealed with a fresh key wrapped for the minion and signed by the
 * master ({@code _encrypt_private}). Each is the reply's whole payload, in either transport.
 */
public final class SaltReplies {

    /** What Salt's master answers a command it does not serve: an empty map, sealed like any reply. */
    public static final SaltValue UNSERVED = SaltValue.Map.builder().build();

    private SaltReplies() {}

    /** {@code Crypticle(session).dumps(value, nonce)}, a byte string. */
    public static SaltValue sealed(Crypticle session, String nonce, SaltValue value) {
        return SaltValue.bin(session.dumps(value, nonce));
    }

    /**
     * {@code _encrypt_private(ret, "pillar", id, nonce, sign_messages=True, enc_algo, sig_algo)}:
     * {@code {key: OAEP(minion, k), pillar: Crypticle(k).dumps({data, sig})}} where {@code data} is the payload
     * dialect of {@code {key, pillar, nonce}} and {@code sig} the master's PKCS#1 v1.5 signature of {@code data}.
     */
    public static SaltValue privately(
            String dictKey,
            SaltValue value,
            String nonce,
            PublicKey minion,
            SaltRsa.Encryption enc,
            PrivateKey master,
            SaltRsa.Signing sig) {
        Crypticle fresh = Crypticle.generate();
        byte[] key = SaltRsa.encrypt(minion, enc, fresh.keyString().getBytes(StandardCharsets.US_ASCII));
        byte[] data = SaltMsgpack.write(
                SaltValue.Map.builder()
                        .put("key", key)
                        .put(dictKey, value)
                        .put("nonce", nonce)
                        .build(),
                SaltDialect.PAYLOAD);
        SaltValue signedMsg = SaltValue.Map.builder()
                .put("data", data)
                .put("sig", SaltRsa.sign(master, sig, data))
                .build();
        return SaltValue.Map.builder()
                .put("key", key)
                .put(dictKey, SaltValue.bin(fresh.dumps(signedMsg, null)))
                .build();
    }

    /** A minion opening a {@link #sealed} reply to the request that carried {@code nonce}. */
    public static SaltValue openSealed(SaltValue reply, Crypticle session, String nonce, SaltLimits limits)
            throws CryptoException, MalformedException {
        byte[] blob =
                reply.bytes().orElseThrow(() -> new MalformedException("reply: expected bytes, got " + reply.kind()));
        return session.loads(blob, nonce, limits);
    }

    /**
     * A minion opening a {@link #privately} reply ({@code crypted_transfer_decode_dictentry} in
     * salt/channel/client.py): unwraps the key, checks the master's signature, that the signed key is the one
     * received and the nonce is the request's, and returns the value.
     */
    public static SaltValue openPrivately(
            SaltValue reply,
            String dictKey,
            String nonce,
            PrivateKey minion,
            SaltRsa.Encryption enc,
            PublicKey master,
            SaltRsa.Signing sig,
            SaltLimits limits)
            throws CryptoException, MalformedException {
        SaltValue.Map outer = SaltFields.asMap(reply, "private reply");
        byte[] key = SaltFields.bytes(outer, "key", SaltAuthRequest.MAX_RSA_BYTES);
        Crypticle fresh = Crypticle.of(SaltRsa.decrypt(minion, enc, key));
        SaltValue.Map signedMsg = SaltFields.asMap(
                fresh.loads(SaltFields.bytes(outer, dictKey, limits.maxBytes()), null, limits), dictKey);
        byte[] data = SaltFields.bytes(signedMsg, "data", limits.maxBytes());
        if (!SaltRsa.verify(master, sig, data, SaltFields.bytes(signedMsg, "sig", SaltAuthRequest.MAX_RSA_BYTES))) {
            throw new CryptoException("private reply: signature failed to validate");
        }
        SaltValue.Map inner = SaltFields.asMap(SaltMsgpack.read(data, limits), "private reply data");
        if (!MessageDigest.isEqual(SaltFields.bytes(inner, "key", SaltAuthRequest.MAX_RSA_BYTES), key)) {
            throw new CryptoException("private reply: key verification failed");
        }
        if (!SaltFields.nonce(inner, "nonce").equals(nonce)) {
            throw new CryptoException("private reply: nonce verification failed");
        }
        return SaltFields.required(inner, dictKey);
    }
}
