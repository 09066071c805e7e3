package io.brine.protocol.salt;

import io.brine.protocol.codec.MalformedException;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.Base64;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/**
 * Salt's {@code pub_sig} (SALT.md §4.1): the master signing key's PKCS#1 v1.5 signature over the master's public key
 * exactly as an accepted auth reply carries it ({@code pub_key}, {@link SaltPem#wireForm}), base64. A minion with
 * {@code verify_master_pubkey_sign} checks it with {@code master_sign_key_name}{@code .pub} and the algorithm of its
 * {@code signing_algorithm} (the one its request names), and caches a changed master key when it verifies. Made
 * beforehand (Salt's {@code master_use_pubkey_signature}), once per algorithm, so that the signing key never has to be
 * on the master.
 *
 * <p>The file ({@code pki_dir/master_pubkey_signature}) holds one line per algorithm: {@code NAME BASE64}.
 */
public record SaltPubkeySignature(Map<SaltRsa.Signing, String> signatures) {

    public static final String FILE = "master_pubkey_signature";
    /** A file of two 16,384-bit signatures stays far below this. */
    public static final int MAX_BYTES = 16 * 1024;

    public SaltPubkeySignature {
        signatures = Map.copyOf(signatures);
        if (signatures.isEmpty()) {
            throw new IllegalArgumentException("no signature");
        }
    }

    /** Signs {@code master}'s wire form with {@code signingKey}, once per algorithm a Salt minion may name. */
    public static SaltPubkeySignature sign(PrivateKey signingKey, PublicKey master) {
        byte[] pub = SaltPem.wireForm(master).getBytes(StandardCharsets.UTF_8);
        Map<SaltRsa.Signing, String> signatures = new EnumMap<>(SaltRsa.Signing.class);
        for (SaltRsa.Signing signing : SaltRsa.Signing.values()) {
            signatures.put(signing, Base64.getEncoder().encodeToString(SaltRsa.sign(signingKey, signing, pub)));
        }
        return new SaltPubkeySignature(signatures);
    }

    /** The {@code pub_sig} for a minion that verifies with {@code signing}; empty when none was made for it. */
    public Optional<String> forAlgorithm(SaltRsa.Signing signing) {
        return Optional.ofNullable(signatures.get(signing));
    }

    /** Whether every signature is {@code signer}'s over {@code master}'s wire form (what a minion checks). */
    public boolean verifies(PublicKey master, PublicKey signer) {
        byte[] pub = SaltPem.wireForm(master).getBytes(StandardCharsets.UTF_8);
        for (Map.Entry<SaltRsa.Signing, String> entry : signatures.entrySet()) {
            byte[] sig;
            try {
                sig = Base64.getDecoder().decode(entry.getValue());
            } catch (IllegalArgumentException e) {
                return false;
            }
            if (!SaltRsa.verify(signer, entry.getKey(), pub, sig)) {
                return false;
            }
        }
        return true;
    }

    /** The file's text: one {@code NAME BASE64} line per algorithm, SHA-1 (Salt's default) first. */
    public String text() {
        StringBuilder text = new StringBuilder();
        for (SaltRsa.Signing signing : SaltRsa.Signing.values()) {
            forAlgorithm(signing)
                    .ifPresent(sig -> text.append(signing.wireName())
                            .append(' ')
                            .append(sig)
                            .append('\n'));
        }
        return text.toString();
    }

    /**
     * Reads {@link #text()}; an unknown algorithm, a repeated one, bad base64, an empty text or one over {@link
     * #MAX_BYTES} is refused.
     */
    public static SaltPubkeySignature parse(String text) throws MalformedException {
        if (text.length() > MAX_BYTES) {
            throw new MalformedException(text.length() + " characters, over " + MAX_BYTES);
        }
        Map<SaltRsa.Signing, String> signatures = new EnumMap<>(SaltRsa.Signing.class);
        int number = 0;
        for (String line : text.split("\n", -1)) {
            number++;
            int at = number;
            if (line.isBlank()) {
                continue;
            }
            String[] parts = line.strip().split(" ", -1);
            if (parts.length != 2) {
                throw new MalformedException("line " + number + ": not 'ALGORITHM BASE64'");
            }
            SaltRsa.Signing signing = SaltRsa.Signing.named(parts[0])
                    .orElseThrow(() -> new MalformedException("line " + at + ": unknown signing algorithm"));
            try {
                Base64.getDecoder().decode(parts[1]);
            } catch (IllegalArgumentException e) {
                throw new MalformedException("line " + number + ": not base64");
            }
            if (signatures.put(signing, parts[1]) != null) {
                throw new MalformedException("line " + number + ": " + signing.wireName() + " twice");
            }
        }
        if (signatures.isEmpty()) {
            throw new MalformedException("no signature");
        }
        return new SaltPubkeySignature(signatures);
    }
}
