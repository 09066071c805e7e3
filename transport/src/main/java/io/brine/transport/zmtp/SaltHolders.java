package io.brine.transport.zmtp;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Salt subscribers, of one source address or of all ({@link Subscriptions}): those that take every envelope whole,
 * and the filtering ones ({@code zmq_filtering}) by each id topic they hold. Changed under the Subscriptions lock;
 * read without it by publications.
 */
final class SaltHolders {
    static final SaltHolders NONE = new SaltHolders();

    final Set<ZmtpConnection> whole = ConcurrentHashMap.newKeySet();
    private final Map<String, Set<ZmtpConnection>> filtering = new ConcurrentHashMap<>();

    /** The filtering holders of {@code topic} (a hex SHA-1 of an id). */
    Set<ZmtpConnection> filtering(String topic) {
        return filtering.getOrDefault(topic, Set.of());
    }

    void addFiltering(String topic, ZmtpConnection connection) {
        filtering.computeIfAbsent(topic, k -> ConcurrentHashMap.newKeySet()).add(connection);
    }

    void removeFiltering(String topic, ZmtpConnection connection) {
        Set<ZmtpConnection> set = filtering.get(topic);
        if (set != null && set.remove(connection) && set.isEmpty()) {
            filtering.remove(topic);
        }
    }

    boolean isEmpty() {
        return whole.isEmpty() && filtering.isEmpty();
    }

    int entries() {
        int entries = whole.size();
        for (Set<ZmtpConnection> set : filtering.values()) {
            entries += set.size();
        }
        return entries;
    }

    /**
     * Where a bound Salt minion's publications go now: the Salt holders from its address ({@code whole}, and those
     * of {@code topic} among the filtering ones), with its topic bytes.
     */
    record Route(String address, SaltHolders holders, String topic, byte[] topicBytes) {
        /** Open connections that take it now (tests, metrics). */
        int size() {
            int size = 0;
            for (ZmtpConnection connection : holders.whole) {
                size += connection.isOpen() ? 1 : 0;
            }
            for (ZmtpConnection connection : holders.filtering(topic)) {
                size += connection.isOpen() ? 1 : 0;
            }
            return size;
        }

        boolean isOpen() {
            for (ZmtpConnection connection : holders.whole) {
                if (connection.isOpen()) {
                    return true;
                }
            }
            for (ZmtpConnection connection : holders.filtering(topic)) {
                if (connection.isOpen()) {
                    return true;
                }
            }
            return false;
        }
    }
}
