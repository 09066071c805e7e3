package io.brine.protocol.salt;

import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.PublicKey;
import java.util.Optional;

/**
 * The reply a Salt master sends to an {@code _auth} request (salt/channel/server.py {@code handle_message} and
 * salt/master.py {@code AuthFuncs._auth_impl}, with {@code auth_mode: 1}, {@code minimum_auth_version: 3} and, when
 * given a {@link SaltPubkeySignature}, {@code master_sign_pubkey} with {@code master_use_pubkey_signature}), as a pure function of the request, the key store's decision and the master's keys.
 * No I/O: the caller has already filed the key (pending, denied...) and says what it decided.
 *
 * <p>One responder per {@code aes} generation: the X9.31 signature of the aes key's hash is the same in every
 * accepted reply, so it is made once here. An accepted reply then costs one RSA private-key operation (the
 * {@code load} signature) and one more when the minion sent a token (decrypting it); a refusal costs one.
 */
public final class SaltAuthResponder {

    /** What the key store decided about the id and key of the request. */
    public enum Decision {
        ACCEPTED,
        PENDING,
        REJECTED,
        /** A different key is accepted (or pending) for the id. */
        DENIED,
        /** Salt's {@code max_minions}: no room for a new minion. */
        FULL
    }

    /** The lowest auth protocol version served (Salt's {@code minimum_auth_version} default since 3006.12). */
    public static final int MINIMUM_VERSION = 3;

    private final KeyPair master;
    private final Crypticle aes;
    private final byte[] aesKeyString;
    private final byte[] aesSig;
    private final String pubKey;
    private final int publishPort;
    private final Optional<SaltPubkeySignature> pubSig;

    public SaltAuthResponder(KeyPair master, Crypticle aes, int publishPort) {
        this(master, aes, publishPort, Optional.empty());
    }

    /**
     * @param pubSig the signing key's signature of {@code master}'s public key, sent in every accepted reply
     *               ({@code master_sign_pubkey}); the caller has checked that it is over this key
     */
    public SaltAuthResponder(KeyPair master, Crypticle aes, int publishPort, Optional<SaltPubkeySignature> pubSig) {
        if (publishPort < 1 || publishPort > 65535) {
            throw new IllegalArgumentException("publish port " + publishPort);
        }
        this.master = master;
        this.aes = aes;
        this.aesKeyString = aes.keyString().getBytes(StandardCharsets.US_ASCII);
        this.aesSig = SaltRsa.x931Sign(master.getPrivate(), SaltSignIn.sha256Hex(aesKeyString));
        this.pubKey = SaltPem.wireForm(master.getPublic());
        this.publishPort = publishPort;
        this.pubSig = pubSig;
    }

    /** The master key pair this responder answers with: it signs every reply, and accepted ones name it. */
    public KeyPair master() {
        return master;
    }

    /** The aes key this responder hands out. */
    public Crypticle aes() {
        return aes;
    }

    /**
     * The reply to {@code request}. {@code session} is the minion's request key (Salt keeps one per minion for
     * {@code publish_session} seconds, across master restarts); it is only read for an accepted minion. For
     * {@link Decision#ACCEPTED} the key store must have checked that the offered key is the accepted one: the keys
     * are wrapped for the key in the request.
     */
    public SaltAuthReply respond(SaltRequest.Auth request, Decision decision, Crypticle session) {
        PublicKey minion = null;
        if (decision == Decision.ACCEPTED) {
            try {
                minion = Pem.readPublicKey(request.load().pub());
            } catch (KeyFormatException e) {
                // Salt: 'Corrupt or missing public key' -> {"ret": False}.
                minion = null;
            }
        }
        return respond(request, decision, session, minion);
    }

    /**
     * As {@link #respond(SaltRequest.Auth, Decision, Crypticle)}, with the request's key as the caller already
     * parsed it ({@code null}: not a usable key), so that an accepted minion's key is not parsed twice.
     */
    public SaltAuthReply respond(SaltRequest.Auth request, Decision decision, Crypticle session, PublicKey minion) {
        SaltAuthRequest load = request.load();
        if (request.version() < MINIMUM_VERSION) {
            return new SaltAuthReply.BadLoad();
        }
        Optional<SaltRsa.Signing> signing = load.signing();
        if (signing.isEmpty()) {
            return new SaltAuthReply.BadAlgorithm("bad sig algo");
        }
        SaltRsa.Signing sig = signing.get();
        if (!MinionIds.isValid(load.id())) {
            return SaltAuthReply.Answer.refused(load.nonce(), sig);
        }
        switch (decision) {
            case PENDING -> {
                return SaltAuthReply.Answer.pending(load.nonce(), sig);
            }
            case REJECTED, DENIED -> {
                return SaltAuthReply.Answer.refused(load.nonce(), sig);
            }
            case FULL -> {
                return new SaltAuthReply.Answer(SaltValue.str("full"), load.nonce(), sig);
            }
            default -> {
                return accepted(load, sig, session, minion);
            }
        }
    }

    private SaltAuthReply accepted(SaltAuthRequest load, SaltRsa.Signing sig, Crypticle session, PublicKey minion) {
        Optional<SaltRsa.Encryption> encryption = load.encryption();
        if (encryption.isEmpty()) {
            return new SaltAuthReply.BadAlgorithm("bad enc algo");
        }
        SaltRsa.Encryption enc = encryption.get();
        if (minion == null) {
            // Salt: 'Corrupt or missing public key' -> {"ret": False}.
            return SaltAuthReply.Answer.refused(load.nonce(), sig);
        }
        Optional<byte[]> token = Optional.empty();
        if (load.token().isPresent()) {
            try {
                byte[] plain =
                        SaltRsa.decrypt(master.getPrivate(), enc, load.token().get());
                token = Optional.of(SaltRsa.encrypt(minion, enc, plain));
            } catch (CryptoException e) {
                // As Salt: a token that does not decrypt is left out; the minion then refuses the reply.
                token = Optional.empty();
            }
        }
        return new SaltAuthReply.Accepted(
                pubKey,
                publishPort,
                token,
                SaltRsa.encrypt(minion, enc, aesKeyString),
                SaltRsa.encrypt(minion, enc, session.keyString().getBytes(StandardCharsets.US_ASCII)),
                aesSig.clone(),
                load.nonce(),
                sig,
                pubSig.flatMap(s -> s.forAlgorithm(sig)));
    }
}
