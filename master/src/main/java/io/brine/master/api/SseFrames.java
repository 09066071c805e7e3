package io.brine.master.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.brine.protocol.message.SessionMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The server-sent event of each event number, encoded once for every API subscriber the event stream hands it to
 * (issue 28: encoding it once per reader cost the master 85 times a ping's own CPU with 100 readers). The last
 * {@value #SLOTS} numbers are kept, each in the slot of its number modulo {@value #SLOTS}; an event whose slot holds
 * another number (a replay of an old one, or two threads emitting at once) is encoded again, never shown as another.
 * A frame is read-only and unreleasable: every subscriber writes a duplicate of it (its own indices, the same bytes),
 * which the write's release leaves intact.
 */
final class SseFrames {

    static final int SLOTS = 64;

    private record Frame(long number, ByteBuf bytes) {}

    private final AtomicReferenceArray<Frame> slots = new AtomicReferenceArray<>(SLOTS);

    /** The bytes of event {@code number} as a server-sent event: a duplicate of the shared frame, for one write. */
    ByteBuf of(long number, SessionMessage.Event event) {
        int slot = (int) Math.floorMod(number, (long) SLOTS);
        Frame frame = slots.get(slot);
        if (frame == null || frame.number() != number) {
            frame = new Frame(
                    number, Unpooled.unreleasableBuffer(encode(number, event).asReadOnly()));
            slots.set(slot, frame);
        }
        return frame.bytes().duplicate();
    }

    static ByteBuf encode(long number, SessionMessage.Event event) {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("tag", event.tag());
        document.put("time_ms", event.timeMs());
        document.put("data", event.data());
        try {
            // JSON has no raw line breaks: the event is one data line.
            return Unpooled.wrappedBuffer(
                    ("id: " + number + "\ndata: " + JsonBody.JSON.writeValueAsString(document) + "\n\n")
                            .getBytes(StandardCharsets.UTF_8));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("an event that cannot be written as JSON: " + event.tag(), e);
        }
    }
}
