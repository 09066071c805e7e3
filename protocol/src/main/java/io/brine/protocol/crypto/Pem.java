package io.brine.protocol.crypto;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * PEM in Salt's formats. Writes private keys as PKCS#1 ({@code BEGIN RSA PRIVATE KEY}) and public keys as SPKI
 * ({@code BEGIN PUBLIC KEY}); reads those and also PKCS#8 private keys and PKCS#1 public keys. Anything else
 * (encrypted keys, certificates, EC keys, RSA under 2048 bits, trailing garbage) is refused with a message that
 * says which. Only the JDK is used: Bouncy Castle's signed jars cost every process that touches them some 5 MiB
 * of heap for the jar verifier's per-entry tables, and a minion reads its keys with this class.
 */
public final class Pem {

    /** Larger than any RSA-8192 private key in PEM; a bigger input is not a key. */
    public static final int MAX_PEM_CHARS = 16 * 1024;

    private static final String DASHES = "-----";
    private static final String BEGIN = DASHES + "BEGIN ";
    private static final String END = DASHES + "END ";
    private static final Set<String> PRIVATE_KEYS =
            Set.of("RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY");

    /** One PEM block: its label, whether its RFC 1421 headers say it is encrypted, and its decoded body. */
    public record Block(String label, boolean encrypted, byte[] der) {}

    private static final Pattern LINE_BREAK = Pattern.compile("\r\n|\n|\r");

    private Pem() {}

    /** PKCS#1 {@code RSA PRIVATE KEY} PEM, 64-character lines, trailing newline. */
    public static String privateKeyPkcs1(PrivateKey key) {
        if (!(key instanceof RSAPrivateCrtKey k)) {
            throw new IllegalArgumentException("only RSA CRT private keys can be written as PKCS#1");
        }
        byte[] der = Der.sequence(
                Der.integer(BigInteger.ZERO),
                Der.integer(k.getModulus()),
                Der.integer(k.getPublicExponent()),
                Der.integer(k.getPrivateExponent()),
                Der.integer(k.getPrimeP()),
                Der.integer(k.getPrimeQ()),
                Der.integer(k.getPrimeExponentP()),
                Der.integer(k.getPrimeExponentQ()),
                Der.integer(k.getCrtCoefficient()));
        return armor("RSA PRIVATE KEY", der);
    }

    /** SPKI {@code PUBLIC KEY} PEM, 64-character lines, trailing newline. */
    public static String publicKeySpki(PublicKey key) {
        return armor("PUBLIC KEY", key.getEncoded());
    }

    /** The base64 body lines of the canonical SPKI PEM of {@code key}, without newlines. */
    static String[] bodyLines(PublicKey key) {
        return lines(key.getEncoded());
    }

    private static String[] lines(byte[] der) {
        String b64 = Base64.getEncoder().encodeToString(der);
        String[] lines = new String[(b64.length() + 63) / 64];
        for (int i = 0; i < lines.length; i++) {
            lines[i] = b64.substring(i * 64, Math.min(b64.length(), (i + 1) * 64));
        }
        return lines;
    }

    private static String armor(String label, byte[] der) {
        StringBuilder out = new StringBuilder(der.length * 4 / 3 + 80)
                .append(BEGIN)
                .append(label)
                .append(DASHES)
                .append('\n');
        for (String line : lines(der)) {
            out.append(line).append('\n');
        }
        return out.append(END).append(label).append(DASHES).append('\n').toString();
    }

    /** Reads an RSA public key from SPKI or PKCS#1 PEM. */
    public static RSAPublicKey readPublicKey(String pem) throws KeyFormatException {
        return RsaKeys.checkFactors(readOfferedPublicKey(pem));
    }

    /**
     * {@link #readPublicKey} without {@link RsaKeys#checkFactors}: for a key a Salt minion offers, whose factors the
     * key store checks when it does not hold that key yet ({@link RsaKeys#offeredKeyFromDer}).
     */
    public static RSAPublicKey readOfferedPublicKey(String pem) throws KeyFormatException {
        Block block = single(pem);
        switch (block.label()) {
            case "PUBLIC KEY" -> {
                String algorithm = Der.spkiAlgorithm(block.der());
                if (!algorithm.equals("RSA")) {
                    throw new KeyFormatException("public key uses " + algorithm + ", not RSA");
                }
                return RsaKeys.offeredKeyFromDer(block.der());
            }
            case "RSA PUBLIC KEY" -> {
                return RsaKeys.offeredKeyFromDer(Der.spkiOfPkcs1(block.der()));
            }
            default -> {
                if (PRIVATE_KEYS.contains(block.label()) && !block.encrypted()) {
                    throw new KeyFormatException("found a private key where a public key was expected");
                }
                throw new KeyFormatException("PEM holds " + describe(block) + ", not a public key");
            }
        }
    }

    /** Reads an RSA key pair from a PKCS#1 or PKCS#8 private key PEM. */
    public static KeyPair readPrivateKey(String pem) throws KeyFormatException {
        Block block = single(pem);
        if (block.encrypted()) {
            throw new KeyFormatException("PEM holds " + describe(block) + ", not a private key");
        }
        switch (block.label()) {
            case "RSA PRIVATE KEY" -> {
                return rsaKeyPair(Der.pkcs8OfPkcs1(block.der()));
            }
            case "PRIVATE KEY" -> {
                String algorithm = Der.pkcs8Algorithm(block.der());
                if (!algorithm.equals("RSA")) {
                    throw new KeyFormatException("private key uses " + algorithm + ", not RSA");
                }
                return rsaKeyPair(block.der());
            }
            case "EC PRIVATE KEY" -> throw new KeyFormatException("private key uses EC, not RSA");
            case "DSA PRIVATE KEY" -> throw new KeyFormatException("private key uses DSA, not RSA");
            case "PUBLIC KEY", "RSA PUBLIC KEY" ->
                throw new KeyFormatException("found a public key where a private key was expected");
            default -> throw new KeyFormatException("PEM holds " + describe(block) + ", not a private key");
        }
    }

    private static KeyPair rsaKeyPair(byte[] pkcs8) throws KeyFormatException {
        try {
            KeyFactory factory = KeyFactory.getInstance("RSA");
            PrivateKey key = factory.generatePrivate(new PKCS8EncodedKeySpec(pkcs8));
            if (!(key instanceof RSAPrivateCrtKey crt)) {
                throw new KeyFormatException("RSA private key without its CRT parameters");
            }
            RSAPublicKey pub = (RSAPublicKey)
                    factory.generatePublic(new RSAPublicKeySpec(crt.getModulus(), crt.getPublicExponent()));
            RsaKeys.checkSize(pub);
            return new KeyPair(pub, key);
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new KeyFormatException("cannot decode private key: " + e.getMessage(), e);
        }
    }

    private static Block single(String pem) throws KeyFormatException {
        if (pem == null || pem.isBlank()) {
            throw new KeyFormatException("no PEM data");
        }
        if (pem.length() > MAX_PEM_CHARS) {
            throw new KeyFormatException("PEM data is larger than " + MAX_PEM_CHARS + " characters");
        }
        if (!ascii(pem)) {
            throw new KeyFormatException("PEM data has non-ASCII characters");
        }
        List<Block> blocks = blocks(pem);
        if (blocks.isEmpty()) {
            throw new KeyFormatException("no PEM block found (expected -----BEGIN ...-----)");
        }
        if (blocks.size() > 1) {
            throw new KeyFormatException("more than one PEM block");
        }
        return blocks.get(0);
    }

    /**
     * The PEM blocks in {@code text}, in order. Text outside the blocks is ignored, as OpenSSL does; inside one,
     * RFC 1421 headers ({@code Proc-Type}, {@code DEK-Info}) may precede the base64, which must be valid.
     */
    public static List<Block> blocks(String text) throws KeyFormatException {
        String[] lines = LINE_BREAK.split(text, -1);
        List<Block> blocks = new ArrayList<>();
        int i = 0;
        while (i < lines.length) {
            String line = lines[i++].strip();
            if (!line.startsWith(BEGIN)) {
                continue;
            }
            if (!line.endsWith(DASHES) || line.length() <= BEGIN.length() + DASHES.length()) {
                throw new KeyFormatException("malformed PEM: bad BEGIN line");
            }
            String label = line.substring(BEGIN.length(), line.length() - DASHES.length());
            String endLine = END + label + DASHES;
            boolean encrypted = false;
            boolean ended = false;
            StringBuilder base64 = new StringBuilder();
            while (i < lines.length && !ended) {
                line = lines[i++].strip();
                if (line.equals(endLine)) {
                    ended = true;
                } else if (line.startsWith(DASHES)) {
                    throw new KeyFormatException("malformed PEM: " + line + " inside a " + label + " block");
                } else if (line.indexOf(':') >= 0) {
                    if (base64.length() > 0) {
                        throw new KeyFormatException("malformed PEM: a header line inside the base64");
                    }
                    encrypted |= line.startsWith("Proc-Type:") && line.contains("ENCRYPTED");
                } else {
                    base64.append(line);
                }
            }
            if (!ended) {
                throw new KeyFormatException("malformed PEM: no " + endLine + " line");
            }
            byte[] der;
            try {
                der = Base64.getDecoder().decode(base64.toString());
            } catch (IllegalArgumentException e) {
                throw new KeyFormatException("malformed PEM: " + e.getMessage(), e);
            }
            if (der.length == 0) {
                throw new KeyFormatException("malformed PEM: an empty " + label + " block");
            }
            blocks.add(new Block(label, encrypted, der));
        }
        return blocks;
    }

    // Not String.split or a new encoder per call: both were most of reading a stored key once its checks are spared.
    private static boolean ascii(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) > 0x7F) {
                return false;
            }
        }
        return true;
    }

    private static String describe(Block block) {
        if (block.encrypted() || block.label().equals("ENCRYPTED PRIVATE KEY")) {
            return "an encrypted private key (unsupported)";
        }
        return switch (block.label()) {
            case "CERTIFICATE", "X509 CERTIFICATE", "TRUSTED CERTIFICATE" -> "a certificate";
            default -> "an unsupported object (" + block.label() + ")";
        };
    }

    /** Bytes of a PEM string as written to disk. */
    public static byte[] bytes(String pem) {
        return pem.getBytes(StandardCharsets.US_ASCII);
    }
}
