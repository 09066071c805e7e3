package io.brine.transport.zmtp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * One publication's copies ({@link ZmtpServerTransport#publish}): the frame is copied once into a shared buffer,
 * and a Salt subscriber without {@code zmq_filtering}, which takes every envelope whole, gets it once per publication
 * however many of its address's minions it is for. Those are sent by source address, so a publication to N Salt
 * minions behind one address visits that address's subscribers once, not N times. One thread, one publication.
 */
final class Fanout implements AutoCloseable {

    private final ByteBufAllocator alloc;
    private final byte[] frame;
    private final long maxQueuedBytes;
    private ByteBuf shared;
    /** Source addresses whose whole Salt subscribers have the envelope, and whether any took it. */
    private final Map<String, Boolean> wholeSent = new HashMap<>();
    /** Every whole Salt subscriber has it (a minion not bound since the start), and whether any took it. */
    private Boolean allWholeSent;

    Fanout(ByteBufAllocator alloc, byte[] frame, long maxQueuedBytes) {
        this.alloc = alloc;
        this.frame = frame;
        this.maxQueuedBytes = maxQueuedBytes;
    }

    /** Queues {@code header} and the frame on {@code connection} for {@code minionId}; false when it is closed. */
    boolean send(ZmtpConnection connection, ByteBuf header, String minionId) {
        if (shared == null) {
            shared = alloc.directBuffer(frame.length).writeBytes(frame);
        }
        return connection.enqueue(header, shared.retainedDuplicate(), minionId, frame, maxQueuedBytes);
    }

    /** A bound Salt minion's copies: its address's whole subscribers (once) and the filtering holders of its topic. */
    boolean salt(SaltHolders.Route route, String minionId) {
        boolean queued;
        Boolean sent = wholeSent.get(route.address());
        if (sent != null) {
            queued = sent;
        } else if (allWholeSent != null) {
            queued = false; // none from that address was open when every one was sent
        } else {
            queued = whole(route.holders(), minionId, null);
            wholeSent.put(route.address(), queued);
        }
        return filtering(route.holders(), route.topicBytes(), route.topic(), minionId) | queued;
    }

    /**
     * A Salt minion not bound since the master started (a restart): every whole Salt subscriber (once) and every
     * filtering holder of its topic, as from a Salt master.
     */
    boolean everySalt(SaltHolders all, String minionId) {
        if (allWholeSent == null) {
            Map<String, Boolean> sentNow = new HashMap<>();
            boolean queued = whole(all, minionId, sentNow);
            sentNow.forEach((address, took) -> wholeSent.merge(address, took, Boolean::logicalOr));
            allWholeSent = queued;
        }
        byte[] topic = Subscriptions.saltTopic(minionId);
        String text = new String(topic, StandardCharsets.ISO_8859_1);
        return filtering(all, topic, text, minionId) | allWholeSent;
    }

    /** Sends the envelope alone to {@code holders.whole}, skipping addresses that had it ({@code sentNow} records). */
    private boolean whole(SaltHolders holders, String minionId, Map<String, Boolean> sentNow) {
        boolean queued = false;
        for (ZmtpConnection connection : holders.whole) {
            if (!connection.isOpen()) {
                continue;
            }
            Boolean earlier = sentNow == null ? null : wholeSent.get(connection.remoteAddress());
            boolean took = earlier != null
                    ? earlier
                    : send(connection, ZmtpEncoder.replyHeader(alloc, false, frame.length), minionId);
            if (sentNow != null && earlier == null) {
                sentNow.merge(connection.remoteAddress(), took, Boolean::logicalOr);
            }
            queued |= took;
        }
        return queued;
    }

    private boolean filtering(SaltHolders holders, byte[] topicBytes, String topic, String minionId) {
        boolean queued = false;
        for (ZmtpConnection connection : holders.filtering(topic)) {
            if (connection.isOpen()) {
                queued |= send(connection, ZmtpEncoder.publicationHeader(alloc, topicBytes, frame.length), minionId);
            }
        }
        return queued;
    }

    @Override
    public void close() {
        if (shared != null) {
            shared.release();
        }
    }
}
