package io.brine.protocol.salt;

import java.security.PrivateKey;
import java.util.Optional;

/**
 * What Salt's master answers an {@code _auth} request (salt/master.py, {@code AuthFuncs._auth_impl} and
 * {@code _clear_signed}). Every answer to a version-3 request is signed over its exact load bytes, refusals too,
 * except the two Salt sends bare: {@code "bad load"} (version below 3, or no readable request) and an unknown
 * algorithm.
 */
public sealed interface SaltAuthReply {

    /** The reply as the request channel carries it (ZeroMQ payload or TCP body), signed where Salt signs. */
    SaltValue encode(PrivateKey master);

    /**
     * An accepted minion: the master's key in clean form, the publish port, and for the minion (each RSA-OAEP with
     * the algorithm it named) the shared {@code aes} key string, its {@code session} key string and, when it sent
     * one, its token back; {@code sig} is the master's X9.31 signature of the hex SHA-256 of the aes key string.
     */
    record Accepted(
            String pubKey,
            int publishPort,
            Optional<byte[]> token,
            byte[] aes,
            byte[] session,
            byte[] sig,
            String nonce,
            SaltRsa.Signing signing,
            Optional<String> pubSig)
            implements SaltAuthReply {

        public Accepted(
                String pubKey,
                int publishPort,
                Optional<byte[]> token,
                byte[] aes,
                byte[] session,
                byte[] sig,
                String nonce,
                SaltRsa.Signing signing) {
            this(pubKey, publishPort, token, aes, session, sig, nonce, signing, Optional.empty());
        }

        @Override
        public SaltValue encode(PrivateKey master) {
            SaltValue.Builder b = SaltValue.Map.builder()
                    .put("enc", "pub")
                    .put("pub_key", pubKey)
                    .put("publish_port", publishPort);
            // master_sign_pubkey: the signing key's signature of pub_key, made offline (salt/master.py).
            pubSig.ifPresent(s -> b.put("pub_sig", s));
            token.ifPresent(t -> b.put("token", t));
            b.put("aes", aes).put("session", session).put("sig", sig).put("nonce", nonce);
            return signed(b.build(), master, signing);
        }

        @Override
        public String toString() {
            return "Accepted[publishPort=" + publishPort + ", token=" + token.isPresent() + ", pubSig="
                    + pubSig.isPresent() + "]";
        }
    }

    /**
     * {@code {ret, nonce}}, signed: {@code ret} is {@code true} for a key waiting in pending, {@code false} for a
     * rejected or denied one (Salt sends the same answer for both), {@code "full"} when {@code max_minions} is
     * reached.
     */
    record Answer(SaltValue ret, String nonce, SaltRsa.Signing signing) implements SaltAuthReply {
        public static Answer pending(String nonce, SaltRsa.Signing signing) {
            return new Answer(SaltValue.bool(true), nonce, signing);
        }

        public static Answer refused(String nonce, SaltRsa.Signing signing) {
            return new Answer(SaltValue.bool(false), nonce, signing);
        }

        @Override
        public SaltValue encode(PrivateKey master) {
            return signed(
                    SaltValue.Map.builder().put("ret", ret).put("nonce", nonce).build(), master, signing);
        }
    }

    /** The bare string {@code "bad load"}, unsigned. */
    record BadLoad() implements SaltAuthReply {
        @Override
        public SaltValue encode(PrivateKey master) {
            return SaltValue.str("bad load");
        }
    }

    /** {@code {enc: "clear", load: {ret: "bad enc algo" | "bad sig algo"}}}, unsigned, as Salt sends it. */
    record BadAlgorithm(String ret) implements SaltAuthReply {
        public BadAlgorithm {
            if (!ret.equals("bad enc algo") && !ret.equals("bad sig algo")) {
                throw new IllegalArgumentException(ret);
            }
        }

        @Override
        public SaltValue encode(PrivateKey master) {
            return SaltValue.Map.builder()
                    .put("enc", "clear")
                    .put("load", SaltValue.Map.builder().put("ret", ret).build())
                    .build();
        }
    }

    /** {@code _clear_signed}: the load in Salt's payload dialect, and a PKCS#1 v1.5 signature over those bytes. */
    private static SaltValue signed(SaltValue.Map load, PrivateKey master, SaltRsa.Signing signing) {
        byte[] bytes = SaltMsgpack.write(load, SaltDialect.PAYLOAD);
        return SaltValue.Map.builder()
                .put("enc", "clear")
                .put("load", bytes)
                .put("sig", SaltRsa.sign(master, signing, bytes))
                .build();
    }
}
