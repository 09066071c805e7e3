package io.brine.protocol.testing;

import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.util.ArrayList;
import java.util.List;

/**
 * 256 pre-generated RSA-2048 key pairs (test resources made with openssl), so tests never wait for key generation.
 * {@code TestKeys.pair(i)} is the same key in every test and every JVM.
 */
public final class TestKeys {

    public static final int COUNT = 256;
    private static final String RESOURCE = "/io/brine/protocol/testkeys/keys-2048.pem";
    private static final List<String> PEMS = load();
    private static final KeyPair[] PAIRS = new KeyPair[COUNT];

    private TestKeys() {}

    public static synchronized KeyPair pair(int index) {
        if (PAIRS[index] == null) {
            try {
                PAIRS[index] = Pem.readPrivateKey(PEMS.get(index));
            } catch (KeyFormatException e) {
                throw new IllegalStateException("test key " + index + " is broken", e);
            }
        }
        return PAIRS[index];
    }

    /** The PKCS#1 PEM of key {@code index}, as openssl wrote it. */
    public static String privatePem(int index) {
        return PEMS.get(index);
    }

    public static String publicPem(int index) {
        return Pem.publicKeySpki(pair(index).getPublic());
    }

    private static List<String> load() {
        try (InputStream in = TestKeys.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing " + RESOURCE);
            }
            String all = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            List<String> pems = new ArrayList<>(COUNT);
            String end = "-----END RSA PRIVATE KEY-----\n";
            int from = 0;
            while (true) {
                int stop = all.indexOf(end, from);
                if (stop < 0) {
                    break;
                }
                pems.add(all.substring(from, stop + end.length()));
                from = stop + end.length();
            }
            if (pems.size() != COUNT) {
                throw new IllegalStateException(RESOURCE + " holds " + pems.size() + " keys, expected " + COUNT);
            }
            return List.copyOf(pems);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
