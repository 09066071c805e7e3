package io.brine.protocol.codec;

import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.message.MasterSuccession;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * A master key rotation on the wire and on disk (PROTOCOL.md 6.4): the layout of a {@link MasterSuccession} and of a
 * chain of them, the bytes each record's signatures cover, and {@link #walk}, the one check of a chain from the key
 * a minion pinned to the master's current key.
 */
public final class MasterSuccessions {

    /** The most records a chain may hold, on the wire and in {@code master_chain}. */
    public static final int MAX_CHAIN = 16;

    static final byte[] CONTEXT = "brine-master-succession-v1".getBytes(StandardCharsets.US_ASCII);

    private MasterSuccessions() {}

    /**
     * What a record's signatures cover: {@code "brine-master-succession-v1" || u16 len || previousKey || u16 len ||
     * nextKey || issuedMs:u64be || graceUntilMs:u64be}, the keys as SubjectPublicKeyInfo DER.
     */
    public static byte[] signedBytes(byte[] previousKey, byte[] nextKey, long issuedMs, long graceUntilMs) {
        return ByteBuffer.allocate(CONTEXT.length + 4 + previousKey.length + nextKey.length + 16)
                .put(CONTEXT)
                .putShort((short) previousKey.length)
                .put(previousKey)
                .putShort((short) nextKey.length)
                .put(nextKey)
                .putLong(issuedMs)
                .putLong(graceUntilMs)
                .array();
    }

    /** A chain as the master keeps it in {@code pki_dir/master_chain}: the msgpack array the wire carries. */
    public static byte[] encodeChain(List<MasterSuccession> chain) {
        MsgWriter out = new MsgWriter();
        writeChain(out, chain);
        byte[] bytes = out.toByteArray();
        try {
            decodeChain(bytes);
        } catch (MalformedException e) {
            throw new IllegalArgumentException("refusing to encode a master key chain: " + e.getMessage());
        }
        return bytes;
    }

    /** Reads what {@link #encodeChain} wrote, with the wire's bounds. */
    public static List<MasterSuccession> decodeChain(byte[] bytes) throws MalformedException {
        try {
            return MsgReader.parse(bytes, 0, bytes.length, "master key chain", MasterSuccessions::readChain);
        } catch (RuntimeException e) {
            throw new MalformedException(
                    "undecodable master key chain (" + e.getClass().getSimpleName() + ")");
        }
    }

    static void writeChain(MsgWriter out, List<MasterSuccession> chain) {
        if (chain.size() > MAX_CHAIN) {
            throw new IllegalArgumentException("a master key chain holds at most " + MAX_CHAIN + " records");
        }
        out.array(chain.size());
        for (MasterSuccession record : chain) {
            out.array(6)
                    .bin("MasterSuccession.previousKey", record.previousKey())
                    .bin("MasterSuccession.nextKey", record.nextKey())
                    .integer(record.issuedMs())
                    .integer(record.graceUntilMs())
                    .binOrNil("MasterSuccession.previousSignature", record.previousSignature())
                    .binOrNil("MasterSuccession.signingSignature", record.signingSignature());
        }
    }

    static List<MasterSuccession> readChain(MsgReader in) throws IOException, MalformedException {
        int count = in.arrayUpTo("MasterChain", MAX_CHAIN);
        List<MasterSuccession> chain = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            in.array("MasterSuccession", 6);
            byte[] previous = in.bin("MasterSuccession.previousKey", 1, FieldLimits.MAX_SPKI);
            byte[] next = in.bin("MasterSuccession.nextKey", 1, FieldLimits.MAX_SPKI);
            long issuedMs = in.nonNegative("MasterSuccession.issuedMs");
            long graceUntilMs = in.nonNegative("MasterSuccession.graceUntilMs");
            byte[] previousSignature = in.binOrNil("MasterSuccession.previousSignature", 1, FieldLimits.MAX_RSA_BLOCK);
            byte[] signingSignature = in.binOrNil("MasterSuccession.signingSignature", 1, FieldLimits.MAX_RSA_BLOCK);
            if (previousSignature == null && signingSignature == null) {
                throw new MalformedException(
                        "MasterSuccession: signed by neither the previous key nor the signing" + " key");
            }
            chain.add(
                    new MasterSuccession(previous, next, issuedMs, graceUntilMs, previousSignature, signingSignature));
        }
        return chain;
    }

    /** What {@link #walk} concluded. */
    public sealed interface Walk {

        /** Every step from the pin verified: {@code newest} is the chain's last key, {@code last} its record. */
        record Verified(RSAPublicKey newest, MasterSuccession last) implements Walk {}

        /** The chain does not lead from the pin: why, for the log. */
        record Refused(String reason) implements Walk {}
    }

    /**
     * Walks {@code chain} (oldest first) from the record whose previous key is {@code pinned} to its end, verifying
     * each step: it names the key the step before ended at (else a gap), its next key parses, is a usable RSA key
     * and was not seen before on the walk (else a loop), and it is signed by the previous key, or, when {@code
     * signingKey} is given, by the signing key (which then must sign every step; the previous key's signature, where
     * present, must verify too). A pin no record starts from is outside the chain.
     */
    public static Walk walk(RSAPublicKey pinned, List<MasterSuccession> chain, Optional<PublicKey> signingKey) {
        byte[] current = pinned.getEncoded();
        int start = -1;
        for (int i = 0; i < chain.size(); i++) {
            if (Arrays.equals(chain.get(i).previousKey(), current)) {
                start = i;
                break;
            }
        }
        if (start < 0) {
            return new Walk.Refused("the pinned master key is outside the master's key chain");
        }
        List<byte[]> seen = new ArrayList<>();
        seen.add(current);
        RSAPublicKey currentKey = pinned;
        MasterSuccession last = null;
        for (int i = start; i < chain.size(); i++) {
            MasterSuccession step = chain.get(i);
            if (!Arrays.equals(step.previousKey(), current)) {
                return new Walk.Refused("the master's key chain has a gap at record " + (i + 1));
            }
            byte[] signed = signedBytes(step.previousKey(), step.nextKey(), step.issuedMs(), step.graceUntilMs());
            if (signingKey.isPresent()) {
                if (step.signingSignature() == null || !Rsa.verify(signingKey.get(), signed, step.signingSignature())) {
                    return new Walk.Refused("record " + (i + 1) + " of the master's key chain is not signed by the"
                            + " master signing key");
                }
                if (step.previousSignature() != null && !Rsa.verify(currentKey, signed, step.previousSignature())) {
                    return new Walk.Refused("record " + (i + 1) + " of the master's key chain has a bad signature");
                }
            } else if (step.previousSignature() == null || !Rsa.verify(currentKey, signed, step.previousSignature())) {
                return new Walk.Refused("record " + (i + 1) + " of the master's key chain has a bad signature");
            }
            RSAPublicKey next;
            try {
                next = RsaKeys.publicKeyFromDer(step.nextKey());
            } catch (KeyFormatException e) {
                return new Walk.Refused(
                        "record " + (i + 1) + " of the master's key chain names an unusable key: " + e.getMessage());
            }
            for (byte[] earlier : seen) {
                if (Arrays.equals(earlier, step.nextKey())) {
                    return new Walk.Refused("the master's key chain loops at record " + (i + 1));
                }
            }
            seen.add(step.nextKey());
            current = step.nextKey();
            currentKey = next;
            last = step;
        }
        return new Walk.Verified(currentKey, last);
    }
}
