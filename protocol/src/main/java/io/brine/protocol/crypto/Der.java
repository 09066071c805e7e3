package io.brine.protocol.crypto;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;

/**
 * Just enough DER for {@link Pem}: to write a PKCS#1 private key, to put PKCS#1 keys in the PKCS#8 and SPKI
 * envelopes the JDK's key factories read, and to see which algorithm an envelope names. Parsing and checking the
 * keys themselves is left to those factories.
 */
final class Der {

    static final int INTEGER = 0x02;
    static final int BIT_STRING = 0x03;
    static final int OCTET_STRING = 0x04;
    static final int OID = 0x06;
    static final int SEQUENCE = 0x30;

    /** The object identifier rsaEncryption, 1.2.840.113549.1.1.1, without its tag and length. */
    private static final byte[] RSA_OID = {0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01};
    /** AlgorithmIdentifier { rsaEncryption, NULL }. */
    private static final byte[] RSA_ALGORITHM = sequence(tlv(OID, RSA_OID), new byte[] {0x05, 0x00});
    /** Names of the key algorithms a PEM file is likely to hold instead of RSA, by object identifier. */
    private static final Map<String, String> NAMES = Map.of(
            "2a8648ce3d0201", "EC",
            "2a8648ce380401", "DSA",
            "2b6570", "Ed25519",
            "2b6571", "Ed448",
            "2b656e", "X25519",
            "2a864886f70d01010a", "RSASSA-PSS");

    private Der() {}

    static byte[] tlv(int tag, byte[] content) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(content.length + 6);
        out.write(tag);
        int length = content.length;
        if (length < 0x80) {
            out.write(length);
        } else {
            int bytes = (32 - Integer.numberOfLeadingZeros(length) + 7) / 8;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) {
                out.write(length >>> (8 * i));
            }
        }
        out.writeBytes(content);
        return out.toByteArray();
    }

    static byte[] sequence(byte[]... elements) {
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        for (byte[] element : elements) {
            content.writeBytes(element);
        }
        return tlv(SEQUENCE, content.toByteArray());
    }

    /** A DER INTEGER: {@link BigInteger#toByteArray()} is already its minimal two's complement content. */
    static byte[] integer(BigInteger value) {
        return tlv(INTEGER, value.toByteArray());
    }

    /** A PKCS#1 RSAPublicKey in a SubjectPublicKeyInfo. */
    static byte[] spkiOfPkcs1(byte[] rsaPublicKey) {
        byte[] bits = new byte[rsaPublicKey.length + 1]; // a leading 0: no unused bits
        System.arraycopy(rsaPublicKey, 0, bits, 1, rsaPublicKey.length);
        return sequence(RSA_ALGORITHM, tlv(BIT_STRING, bits));
    }

    /** A PKCS#1 RSAPrivateKey in a PKCS#8 PrivateKeyInfo. */
    static byte[] pkcs8OfPkcs1(byte[] rsaPrivateKey) {
        return sequence(integer(BigInteger.ZERO), RSA_ALGORITHM, tlv(OCTET_STRING, rsaPrivateKey));
    }

    /** The algorithm a SubjectPublicKeyInfo names: "RSA", a name such as "EC", or "another algorithm". */
    static String spkiAlgorithm(byte[] spki) throws KeyFormatException {
        Reader info = new Reader(spki).enter(SEQUENCE);
        return algorithm(info.enter(SEQUENCE).content(OID));
    }

    /** The algorithm a PKCS#8 PrivateKeyInfo names, as {@link #spkiAlgorithm}. */
    static String pkcs8Algorithm(byte[] pkcs8) throws KeyFormatException {
        Reader info = new Reader(pkcs8).enter(SEQUENCE);
        info.content(INTEGER);
        return algorithm(info.enter(SEQUENCE).content(OID));
    }

    private static String algorithm(byte[] oid) {
        if (Arrays.equals(oid, RSA_OID)) {
            return "RSA";
        }
        return NAMES.getOrDefault(HexFormat.of().formatHex(oid), "another algorithm");
    }

    /** Reads elements one after another from a DER buffer, never past its end; no indefinite lengths. */
    static final class Reader {
        private final byte[] der;
        private final int end;
        private int position;

        Reader(byte[] der) {
            this(der, 0, der.length);
        }

        private Reader(byte[] der, int start, int end) {
            this.der = der;
            this.position = start;
            this.end = end;
        }

        /** A reader over the content of the next element, which must have {@code tag}. */
        Reader enter(int tag) throws KeyFormatException {
            int length = header(tag);
            Reader inner = new Reader(der, position, position + length);
            position += length;
            return inner;
        }

        /** The content of the next element, which must have {@code tag}. */
        byte[] content(int tag) throws KeyFormatException {
            int length = header(tag);
            byte[] content = Arrays.copyOfRange(der, position, position + length);
            position += length;
            return content;
        }

        private int header(int tag) throws KeyFormatException {
            if (end - position < 2 || (der[position] & 0xff) != tag) {
                throw new KeyFormatException("malformed DER: expected tag " + tag);
            }
            position++;
            int first = der[position++] & 0xff;
            int length;
            if (first < 0x80) {
                length = first;
            } else {
                int bytes = first & 0x7f;
                if (bytes == 0 || bytes > 3 || end - position < bytes) {
                    throw new KeyFormatException("malformed DER: bad length");
                }
                length = 0;
                for (int i = 0; i < bytes; i++) {
                    length = (length << 8) | (der[position++] & 0xff);
                }
            }
            if (length > end - position) {
                throw new KeyFormatException("malformed DER: length past the end");
            }
            return length;
        }
    }
}
