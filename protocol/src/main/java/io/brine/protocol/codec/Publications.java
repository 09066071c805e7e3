package io.brine.protocol.codec;

import io.brine.protocol.crypto.Aead;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.Suite;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The publication envelope: a {@link PublishLoad} sealed with the generation's publish key under associated data
 * {@code "brine-publish-v1" || generation:u64be || serial:u64be || jidLength:u8 || jid}. The resulting
 * {@link Publish} still has to be signed ({@link Codec#encodeSigned}); freshness (serial order, jid de-duplication)
 * is the minion's to check.
 */
public final class Publications {

    static final byte[] CONTEXT = "brine-publish-v1".getBytes(StandardCharsets.US_ASCII);

    private Publications() {}

    /**
     * @param issuedMs the master's clock now: the publication's signed issue time
     * @throws IllegalArgumentException for a negative generation, serial or issue time, or a load the codec refuses
     */
    public static Publish seal(SessionKey publishKey, long generation, long serial, long issuedMs, PublishLoad load) {
        if (generation < 0 || serial < 0 || issuedMs < 0) {
            throw new IllegalArgumentException("generation, serial and issue time are non-negative");
        }
        byte[] plaintext = Codec.encodeLoad(load);
        byte[] box = Aead.seal(publishKey, associatedData(generation, serial, load.jid()), plaintext);
        return new Publish(Suite.RSA_OAEP_PSS_AES256GCM, generation, serial, issuedMs, load.jid(), box);
    }

    /**
     * Opens a publication's box. Check the signature first: the publish key is shared by every accepted minion,
     * so a box that opens proves only that some holder of the key sealed it.
     *
     * @throws CryptoException    wrong key or generation, altered serial or jid, or tampered
     * @throws MalformedException the load is not well-formed or names another jid than the frame
     */
    public static PublishLoad open(SessionKey publishKey, Publish publish) throws CryptoException, MalformedException {
        if (!Jids.isValid(publish.jid())) {
            throw new MalformedException("Publish.jid: not a valid jid");
        }
        byte[] plaintext = Aead.open(
                publishKey, associatedData(publish.generation(), publish.serial(), publish.jid()), publish.box());
        PublishLoad load = Codec.decodeLoad(plaintext);
        if (!load.jid().equals(publish.jid())) {
            throw new MalformedException("PublishLoad.jid differs from Publish.jid");
        }
        return load;
    }

    /** {@code "brine-publish-v1" || generation:u64be || serial:u64be || jidLength:u8 || jid (ASCII)}. */
    static byte[] associatedData(long generation, long serial, String jid) {
        byte[] jidBytes = jid.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(CONTEXT.length + 2 * Long.BYTES + 1 + jidBytes.length)
                .put(CONTEXT)
                .putLong(generation)
                .putLong(serial)
                .put((byte) jidBytes.length)
                .put(jidBytes)
                .array();
    }
}
