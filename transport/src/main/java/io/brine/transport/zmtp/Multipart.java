package io.brine.transport.zmtp;

import java.util.ArrayList;
import java.util.List;

/**
 * The message being received: its parts so far, bounded in count and in body bytes. The bounds are checked when a
 * frame's header completes, before any room is made for its body.
 */
final class Multipart {

    private final List<byte[]> parts = new ArrayList<>();
    private long bytes;

    /** Whether a message has begun (a frame with MORE came) and not ended; no command may come now (RFC 23 grammar). */
    boolean inProgress() {
        return !parts.isEmpty();
    }

    /** Why a frame of {@code size} bytes may not join this message, or null when it may. */
    String refusal(long size, int maxParts, int maxBytes) {
        if (parts.size() >= maxParts) {
            return "a message of more than " + maxParts + " parts";
        }
        if (bytes + size > maxBytes) {
            return "a message of more than " + maxBytes + " bytes";
        }
        return null;
    }

    /** Adds a part that {@link #refusal} has passed; the whole message once its last part is in, else null. */
    List<byte[]> add(byte[] body, boolean more) {
        parts.add(body);
        bytes += body.length;
        if (more) {
            return null;
        }
        List<byte[]> message = List.copyOf(parts);
        parts.clear();
        bytes = 0;
        return message;
    }
}
