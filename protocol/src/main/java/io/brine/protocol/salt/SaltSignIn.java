package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Optional;

/**
 * What a stock Salt minion does with an {@code _auth} reply (salt/crypt.py: {@code AsyncAuth.handle_signin_response},
 * {@code verify_master}, {@code decrypt_aes}, {@code extract_aes}; default options), as a pure function: brine's
 * tests hold its master's replies to it, and the benchmark's simulated Salt minions use it.
 */
public final class SaltSignIn {

    /** What the minion concludes. */
    public sealed interface Outcome {}

    /** Signed in: the shared publish key, this minion's request key, where to subscribe, the master's key. */
    public record Accepted(Crypticle aes, Crypticle session, int publishPort, RSAPublicKey master) implements Outcome {}

    /** {@code ret: true}: the key waits for acceptance; the minion asks again after {@code acceptance_wait_time}. */
    public record Waiting() implements Outcome {}

    /** {@code ret: false}: rejected or denied (a Salt minion cannot tell which). */
    public record Refused() implements Outcome {}

    /** {@code ret: "full"}: the master's {@code max_minions} is reached. */
    public record Full() implements Outcome {}

    /** The bare {@code "bad load"}. */
    public record BadLoad() implements Outcome {}

    /** {@code "bad enc algo"} or {@code "bad sig algo"}. */
    public record BadAlgorithm(String ret) implements Outcome {}

    private SaltSignIn() {}

    /**
     * Checks {@code reply} to the request that carried {@code nonce} and, when the minion sent one, the token
     * {@code tokenSent}. {@code pinned} is the master key the minion has cached ({@code minion_master.pub}), or
     * empty before its first accepted sign-in: then the key in an accepted reply is trusted on first use and, as in
     * Salt, the signature of a reply without a key cannot be checked. Anything a stock minion would refuse throws.
     */
    public static Outcome check(
            SaltValue reply,
            String nonce,
            Optional<byte[]> tokenSent,
            PrivateKey minion,
            SaltRsa.Encryption enc,
            SaltRsa.Signing sig,
            Optional<RSAPublicKey> pinned,
            SaltLimits limits)
            throws CryptoException, MalformedException {
        return check(reply, nonce, tokenSent, minion, enc, sig, pinned, limits, Optional.empty());
    }

    /**
     * As {@link #check(SaltValue, String, Optional, PrivateKey, SaltRsa.Encryption, SaltRsa.Signing, Optional,
     * SaltLimits)}, for a minion with {@code verify_master_pubkey_sign} when {@code masterSignPub} (its {@code
     * master_sign.pub}) is given (salt/crypt.py {@code check_auth_deps}, {@code verify_signing_master}; {@code
     * always_verify_signature} off): an accepted reply must then carry {@code pub_sig}, and one without the switch
     * must not; a new or changed master key is taken when {@code pub_sig} is the signing key's signature of {@code
     * pub_key} with the minion's {@code sig} algorithm, and the token is then not checked ({@code extract_aes} with
     * {@code master_pub=False}).
     */
    public static Outcome check(
            SaltValue reply,
            String nonce,
            Optional<byte[]> tokenSent,
            PrivateKey minion,
            SaltRsa.Encryption enc,
            SaltRsa.Signing sig,
            Optional<RSAPublicKey> pinned,
            SaltLimits limits,
            Optional<PublicKey> masterSignPub)
            throws CryptoException, MalformedException {
        if (reply.text().filter("bad load"::equals).isPresent()) {
            return new BadLoad();
        }
        SaltValue.Map envelope = SaltFields.asMap(reply, "auth reply");
        if (SaltFields.required(envelope, "load") instanceof SaltValue.Map unsigned) {
            String ret = SaltFields.text(unsigned, "ret", 32);
            if (ret.equals("bad enc algo") || ret.equals("bad sig algo")) {
                return new BadAlgorithm(ret);
            }
            throw new MalformedException("auth reply: an unsigned load");
        }
        byte[] loadBytes = SaltFields.bytes(envelope, "load", limits.maxBytes());
        byte[] signature = SaltFields.bytes(envelope, "sig", SaltAuthRequest.MAX_RSA_BYTES);
        SaltValue.Map load = SaltFields.asMap(SaltMsgpack.read(loadBytes, limits), "auth reply load");

        RSAPublicKey master = pinned.orElse(null);
        Accepted accepted = null;
        if (load.has("pub_key")) {
            String offered = SaltFields.text(load, "pub_key", SaltAuthRequest.MAX_PUB_BYTES);
            if (load.has("pub_sig") != masterSignPub.isPresent()) {
                throw new CryptoException(
                        masterSignPub.isPresent()
                                ? "the master did not send its public-key" + " signature"
                                : "the master sent its public-key signature, but signature verification is"
                                        + " not enabled on the minion");
            }
            boolean changed = master != null && !SaltPem.sameKey(offered, SaltPem.wireForm(master));
            if (master == null || changed) {
                if (masterSignPub.isPresent()) {
                    byte[] pubSig;
                    try {
                        pubSig = Base64.getMimeDecoder()
                                .decode(SaltFields.text(load, "pub_sig", SaltAuthRequest.MAX_PUB_BYTES));
                    } catch (IllegalArgumentException e) {
                        throw new MalformedException("pub_sig: not base64");
                    }
                    if (!SaltRsa.verify(masterSignPub.get(), sig, offered.getBytes(StandardCharsets.UTF_8), pubSig)) {
                        throw new CryptoException(
                                "received signed public-key from master but signature" + " verification failed");
                    }
                    tokenSent = Optional.empty();
                } else if (changed) {
                    throw new CryptoException("the master key has changed");
                }
                try {
                    master = Pem.readPublicKey(offered);
                } catch (KeyFormatException e) {
                    throw new MalformedException("pub_key: " + e.getMessage());
                }
            }
            accepted = accepted(load, master, minion, enc, tokenSent);
        }
        if (master != null && !SaltRsa.verify(master, sig, loadBytes, signature)) {
            throw new CryptoException("the payload signature did not validate");
        }
        if (!SaltFields.nonce(load, "nonce").equals(nonce)) {
            throw new CryptoException("the payload nonce did not validate");
        }
        if (load.has("ret")) {
            SaltValue ret = load.get("ret").orElseThrow();
            if (ret instanceof SaltValue.Bool b) {
                return b.value() ? new Waiting() : new Refused();
            }
            if (ret.text().filter("full"::equals).isPresent()) {
                return new Full();
            }
            throw new MalformedException("ret: neither a bool nor \"full\"");
        }
        if (accepted == null) {
            throw new MalformedException("auth reply: neither ret nor pub_key");
        }
        return accepted;
    }

    private static Accepted accepted(
            SaltValue.Map load,
            RSAPublicKey master,
            PrivateKey minion,
            SaltRsa.Encryption enc,
            Optional<byte[]> tokenSent)
            throws CryptoException, MalformedException {
        byte[] aes = SaltRsa.decrypt(minion, enc, SaltFields.bytes(load, "aes", SaltAuthRequest.MAX_RSA_BYTES));
        byte[] sig = SaltFields.bytes(load, "sig", SaltAuthRequest.MAX_RSA_BYTES);
        if (!SaltRsa.x931Verify(master, sha256Hex(aes), sig)) {
            throw new CryptoException("the aes key's X9.31 signature did not validate");
        }
        if (tokenSent.isPresent()) {
            byte[] token = SaltRsa.decrypt(minion, enc, SaltFields.bytes(load, "token", SaltAuthRequest.MAX_RSA_BYTES));
            if (!MessageDigest.isEqual(token, tokenSent.get())) {
                throw new CryptoException("the master failed to decrypt the random minion token");
            }
        }
        byte[] session = SaltRsa.decrypt(minion, enc, SaltFields.bytes(load, "session", SaltAuthRequest.MAX_RSA_BYTES));
        long port = SaltFields.integer(load, "publish_port");
        if (port < 1 || port > 65535) {
            throw new MalformedException("publish_port: " + port + " is not a port");
        }
        return new Accepted(Crypticle.of(aes), Crypticle.of(session), (int) port, master);
    }

    /** The input of the {@code sig} in an accepted reply: the lower-case hex SHA-256 of the aes key string. */
    static byte[] sha256Hex(byte[] keyString) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(keyString);
            return HexFormat.of().formatHex(digest).getBytes(StandardCharsets.US_ASCII);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
