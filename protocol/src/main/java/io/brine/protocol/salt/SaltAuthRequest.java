package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;
import java.security.PublicKey;
import java.util.Optional;

/**
 * The load of Salt's {@code _auth} request (auth protocol version 3; {@code AsyncAuth.minion_sign_in_payload} in
 * salt/crypt.py). {@code id} is as sent: it has not been through brine's id validator yet (SALT.md, "Auth"), so
 * that a refusal can still be bound to the request's nonce. {@code encAlgo}/{@code sigAlgo} are the names as sent;
 * Salt's defaults apply when they are absent.
 *
 * @param token the minion's random token, RSA-OAEP-encrypted for the master; absent until the minion has cached the
 *              master's key
 * @param autosignGrains the grains named by the minion's {@code autosign_grains} option: claims, not authority
 */
public record SaltAuthRequest(
        String id,
        String pub,
        String nonce,
        String encAlgo,
        String sigAlgo,
        Optional<byte[]> token,
        Optional<SaltValue.Map> autosignGrains,
        int version) {

    /** Salt's defaults when a request names no algorithm (salt/master.py, {@code AuthFuncs._auth_impl}). */
    public static final String DEFAULT_ENC_ALGO = "OAEP-SHA1";

    public static final String DEFAULT_SIG_ALGO = "PKCS1v15-SHA1";
    /** Longer than any Salt minion id and any brine one (253 bytes). */
    static final int MAX_ID_BYTES = 1024;
    /** An RSA-8192 SPKI PEM is about 1.5 KiB. */
    static final int MAX_PUB_BYTES = 4096;

    static final int MAX_RSA_BYTES = 1024;

    public SaltAuthRequest {
        token = token.map(byte[]::clone);
    }

    @Override
    public Optional<byte[]> token() {
        return token.map(byte[]::clone);
    }

    public Optional<SaltRsa.Encryption> encryption() {
        return SaltRsa.Encryption.named(encAlgo);
    }

    public Optional<SaltRsa.Signing> signing() {
        return SaltRsa.Signing.named(sigAlgo);
    }

    /**
     * The request a minion with key {@code minion} sends (tests and the benchmark's simulated Salt minions): with
     * {@code token} encrypted for {@code master} when the minion has the master's key cached, as Salt's does.
     */
    public static SaltAuthRequest of(
            String id,
            PublicKey minion,
            String nonce,
            SaltRsa.Encryption enc,
            SaltRsa.Signing sig,
            Optional<PublicKey> master,
            Optional<byte[]> token) {
        Optional<byte[]> sealedToken = master.isPresent() && token.isPresent()
                ? Optional.of(SaltRsa.encrypt(master.get(), enc, token.get()))
                : Optional.empty();
        return new SaltAuthRequest(
                id, SaltPem.wireForm(minion), nonce, enc.wireName(), sig.wireName(), sealedToken, Optional.empty(), 3);
    }

    /** The whole request payload: {@code {enc: "clear", load, version}}. */
    public SaltValue.Map envelope() {
        return SaltValue.Map.builder()
                .put("enc", "clear")
                .put("load", encode())
                .put("version", version)
                .build();
    }

    /** Reads the {@code load} map of a clear request whose {@code cmd} is {@code _auth}. */
    static SaltAuthRequest decode(SaltValue.Map load, int version) throws MalformedException {
        return new SaltAuthRequest(
                SaltFields.text(load, "id", MAX_ID_BYTES),
                SaltFields.text(load, "pub", MAX_PUB_BYTES),
                SaltFields.nonce(load, "nonce"),
                SaltFields.optionalText(load, "enc_algo", 64).orElse(DEFAULT_ENC_ALGO),
                SaltFields.optionalText(load, "sig_algo", 64).orElse(DEFAULT_SIG_ALGO),
                SaltFields.optionalBytes(load, "token", MAX_RSA_BYTES),
                SaltFields.optionalMap(load, "autosign_grains"),
                version);
    }

    /** The load as a minion writes it, in a minion's field order (for tests and the benchmark's Salt minions). */
    public SaltValue.Map encode() {
        SaltValue.Builder b = SaltValue.Map.builder()
                .put("cmd", "_auth")
                .put("id", id)
                .put("nonce", nonce)
                .put("enc_algo", encAlgo)
                .put("sig_algo", sigAlgo);
        autosignGrains.ifPresent(g -> b.put("autosign_grains", g));
        token.ifPresent(t -> b.put("token", t));
        return b.put("pub", pub).build();
    }

    @Override
    public String toString() {
        return "SaltAuthRequest[id=" + id + ", encAlgo=" + encAlgo + ", sigAlgo=" + sigAlgo + ", token="
                + token.isPresent() + ", version=" + version + "]";
    }
}
