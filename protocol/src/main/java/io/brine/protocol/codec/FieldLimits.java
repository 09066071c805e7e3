package io.brine.protocol.codec;

/**
 * Per-field limits that {@link Codec} enforces on decode, and on encode by refusing to produce what it would not
 * accept. PROTOCOL.md, "Limits", is the normative list; these are its values.
 */
public final class FieldLimits {

    public static final int NONCE_LENGTH = 32;
    public static final int SESSION_ID_LENGTH = 16;
    /** A raw publish key in a KeyUpdate: AES-256. */
    public static final int PUBLISH_KEY_LENGTH = 32;
    /** An RSA SubjectPublicKeyInfo (DER); RSA-8192 needs about 1,100 bytes. */
    public static final int MAX_SPKI = 2048;
    /** An RSA-OAEP wrapped key or an RSA-PSS signature: one modulus, at most RSA-8192. */
    public static final int MAX_RSA_BLOCK = 1024;

    public static final int MAX_GRANT = 16 * 1024;
    public static final int MAX_TOKEN = 1024;
    public static final int MAX_FUN = 256;
    /** An event's tag, and the glob a publisher subscribes with. */
    public static final int MAX_EVENT_TAG = 512;

    public static final int MAX_REASON = 1024;
    public static final int MAX_PUBLISHER = 256;
    public static final int MAX_TARGET_EXPRESSION = 1024 * 1024;
    /** Jids acknowledged by one Ack. */
    public static final int MAX_ACK_JIDS = 4096;
    /** Minion ids listed in one publish reply. */
    public static final int MAX_IDS = 1 << 20;
    /** Containers nested in one generic value (claims, grains, args, kwargs, a return value). */
    public static final int MAX_VALUE_DEPTH = 32;
    /** Array items plus map entries over all generic values of one frame, inner message or publish load. */
    public static final int MAX_VALUE_ELEMENTS = 1 << 20;

    private FieldLimits() {}
}
