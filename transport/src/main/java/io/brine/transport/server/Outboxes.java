package io.brine.transport.server;

import io.netty.channel.EventLoop;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A transport's {@link Outbox}es, one per event loop, made as connections arrive on it. Thread-safe. */
public final class Outboxes {

    private final Map<EventLoop, Outbox> outboxes = new ConcurrentHashMap<>();

    public Outbox of(EventLoop loop) {
        return outboxes.computeIfAbsent(loop, Outbox::new);
    }

    /** Frames handed to connections (written or dropped because closed) since start, all loops together. */
    public long writes() {
        return outboxes.values().stream().mapToLong(Outbox::writes).sum();
    }

    /** Flushes since start, all loops together. */
    public long flushes() {
        return outboxes.values().stream().mapToLong(Outbox::flushes).sum();
    }

    /** After the loops stopped: releases what was never written (lost publications are reported). */
    public void discard() {
        outboxes.values().forEach(Outbox::discard);
    }
}
