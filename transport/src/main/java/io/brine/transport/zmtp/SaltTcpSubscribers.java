package io.brine.transport.zmtp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Salt TCP publish connections by the minion each belongs to (issue 15, SALT.md §6): a connection counts once the
 * master verified its hello (the minion's {@code id} and {@code tok}), and a publication for a minion goes to its
 * connections only, as Salt's {@code PubServer.publish_payload} does for a targeted publication. Each publication
 * is one Salt TCP frame {@code {head: {}, body: <envelope as bin>}}. Thread-safe.
 */
final class SaltTcpSubscribers {

    /** {@code {"head": {}, "body": }} in msgpack, before the body's bin header. */
    private static final byte[] PREFIX = {
        (byte) 0x82, (byte) 0xa4, 'h', 'e', 'a', 'd', (byte) 0x80, (byte) 0xa4, 'b', 'o', 'd', 'y'
    };

    private final Map<String, Set<ZmtpConnection>> byMinion = new ConcurrentHashMap<>();
    /** Connections whose hello was sealed with an aes key the master does not hold (before a restart). */
    private final Set<ZmtpConnection> unproven = ConcurrentHashMap.newKeySet();

    /** {@code connection}'s hello could not be opened with the current aes key: it stays, unbound. */
    void addUnproven(ZmtpConnection connection) {
        unproven.add(connection);
    }

    /** The open connections kept unproven, for the envelopes of Salt minions with no proven connection. */
    List<ZmtpConnection> unproven() {
        return unproven.stream().filter(ZmtpConnection::isOpen).toList();
    }

    /** {@code connection}'s hello proved it is {@code minionId}'s. */
    void add(String minionId, ZmtpConnection connection) {
        unproven.remove(connection);
        byMinion.computeIfAbsent(minionId, id -> ConcurrentHashMap.newKeySet()).add(connection);
    }

    /** The open connections of {@code minionId}; empty when it has none. */
    List<ZmtpConnection> of(String minionId) {
        Set<ZmtpConnection> set = byMinion.get(minionId);
        return set == null
                ? List.of()
                : set.stream().filter(ZmtpConnection::isOpen).toList();
    }

    /** Minions with an open, proven connection now. */
    Set<String> ids() {
        Set<String> ids = new HashSet<>();
        byMinion.forEach((id, set) -> {
            if (set.stream().anyMatch(ZmtpConnection::isOpen)) {
                ids.add(id);
            }
        });
        return ids;
    }

    /** {@code minionId} was removed: its connections, which the caller closes. */
    Set<ZmtpConnection> remove(String minionId) {
        Set<ZmtpConnection> set = byMinion.remove(minionId);
        return set == null ? Set.of() : set;
    }

    void closed(ZmtpConnection connection) {
        unproven.remove(connection);
        for (String id : connection.minionIds()) {
            byMinion.computeIfPresent(id, (key, set) -> {
                set.remove(connection);
                return set.isEmpty() ? null : set;
            });
        }
    }

    /** The frame's bytes before the envelope: the map, its empty head, and the body's bin header. */
    static ByteBuf header(ByteBufAllocator alloc, int envelopeLength) {
        ByteBuf header = alloc.buffer(PREFIX.length + 5).writeBytes(PREFIX);
        if (envelopeLength < 0x100) {
            header.writeByte(0xc4).writeByte(envelopeLength);
        } else if (envelopeLength < 0x10000) {
            header.writeByte(0xc5).writeShort(envelopeLength);
        } else {
            header.writeByte(0xc6).writeInt(envelopeLength);
        }
        return header;
    }
}
