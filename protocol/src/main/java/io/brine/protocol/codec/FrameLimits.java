package io.brine.protocol.codec;

/** Frame size limits, enforced by transports before a frame is parsed (PROTOCOL.md, "Limits"). */
public final class FrameLimits {

    /** Largest auth request; everything a peer sends before it holds a session. */
    public static final int MAX_UNAUTHENTICATED = 64 * 1024;
    /** Largest frame of any kind (a session frame carrying a big return, a publication). */
    public static final int MAX_FRAME = 8 * 1024 * 1024;

    private FrameLimits() {}
}
