package io.brine.transport.zmtp;

import io.brine.protocol.salt.SaltMsgpack;
import io.brine.transport.Topics;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who receives a minion's publications: the master decides, not the subscriber (PROTOCOL.md 2.1). A subscription
 * to {@code m/ID/} is <em>held</em> on its connection; it is <em>honoured</em> (publications to ID go down that
 * connection) only while ID is bound to a live request connection from the same source address as the subscriber.
 * Held subscriptions are re-checked whenever ID is bound or rebound and when its request connection closes, and
 * dropped when ID is unbound; {@code b/} is held by anyone and routes nothing today (the master publishes per minion); other topics
 * are held, count against the connection's topic cap, and route nothing.
 *
 * <p>The source address is all that ties a SUB to its minion's DEALER (brine's SUB sends no identity), so hosts behind
 * one address (NAT) can hold each other's topics. Each honoured holder gets a copy, up to {@link #MAX_COPIES} (the
 * newest): a neighbour can then receive a minion's ciphertext but cannot take its publications away from it, which
 * a first-wins or newest-wins rule would allow (transport/ZMTP.md).
 *
 * <p><b>Stock Salt minions</b> (issue 15, protocol/SALT.md §6) subscribe to everything ({@code ""}) or, with
 * {@code zmq_filtering}, to {@code broadcast} and the hex SHA-1 of their id. Such a subscription makes its connection
 * a Salt holder; a Salt minion (bound on a request connection that sent Salt payloads) is honoured on the Salt
 * holders from its request connection's address, by the same rule as {@code m/ID/} but all of them (a filtering
 * one once it holds the id's topic), not only the newest {@link #MAX_COPIES}. Its publications go as Salt's
 * SUB expects them: the envelope alone, or {@code [sha1hex(id)][envelope]} with filtering. Salt routes are not
 * kept per minion: Salt holders are indexed by source address (and a filtering one by the id topics it holds), and a
 * publication finds them through its minion's binding ({@link #saltRoute}). N Salt minions behind one address (a
 * NAT, the swarm benchmark) thus cost O(N) entries and O(1) per subscription or bind, not N routes of N holders
 * recomputed on every subscription.
 *
 * <p>One lock guards the bookkeeping, which changes only on subscriptions, binds and closes; {@link #route} and
 * {@link #saltRoute} are lock-free reads for publications.
 *
 * <p>Why one class of this size: brine's routes and Salt's are two indexes over the same holders, changed by the
 * same events (a subscription, a bind, a close) under that one lock, and the rule both keep (a copy goes only to a
 * holder its minion's binding honours) spans them; split, each half would need the other's lock and state.
 */
final class Subscriptions {

    /** Honoured holders of one minion's topic at most: its own, a reconnection's, NAT neighbours'. */
    static final int MAX_COPIES = 4;

    /** Where a minion's publications go now (one copy each), with its topic bytes (encoded once). */
    record Route(List<ZmtpConnection> connections, byte[] topic) {
        boolean isOpen() {
            for (ZmtpConnection connection : connections) {
                if (connection.isOpen()) {
                    return true;
                }
            }
            return false;
        }
    }

    /** A bound Salt minion's request connection and its {@code zmq_filtering} topic, as text and as sent. */
    private record SaltBinding(ZmtpConnection request, String topic, byte[] topicBytes) {}

    private final Map<String, Route> honoured = new ConcurrentHashMap<>();
    private final Map<String, ZmtpConnection> bound = new HashMap<>();
    /** Publish connections holding {@code m/ID/}, oldest first. */
    private final Map<String, LinkedHashSet<ZmtpConnection>> holders = new HashMap<>();
    /** Publish connections subscribed as Salt's SUB does, oldest first. */
    private final LinkedHashSet<ZmtpConnection> saltHolders = new LinkedHashSet<>();
    /** The same, indexed: all of them, and by source address. */
    private final SaltHolders allSalt = new SaltHolders();

    private final Map<String, SaltHolders> saltByAddress = new ConcurrentHashMap<>();
    /** Salt minions bound on an open Salt request connection. */
    private final Map<String, SaltBinding> saltBound = new ConcurrentHashMap<>();
    /** Those by their filtering topic, and how many per source address. */
    private final Map<String, String> saltIdsByTopic = new HashMap<>();

    private final Map<String, Integer> saltBoundPerAddress = new HashMap<>();
    private final int maxTopics;

    Subscriptions(int maxTopics) {
        this.maxTopics = maxTopics;
    }

    Route route(String minionId) {
        return honoured.get(minionId);
    }

    /** Where {@code minionId}'s publications go when it is a Salt minion bound on an open request connection. */
    SaltHolders.Route saltRoute(String minionId) {
        SaltBinding binding = saltBound.get(minionId);
        if (binding == null || !binding.request().isOpen()) {
            return null;
        }
        String address = binding.request().remoteAddress();
        SaltHolders local = "unknown".equals(address) ? null : saltByAddress.get(address);
        return new SaltHolders.Route(
                address, local == null ? SaltHolders.NONE : local, binding.topic(), binding.topicBytes());
    }

    /** Every Salt holder, indexed: where a Salt minion not bound since the master started is sought. */
    SaltHolders allSaltHolders() {
        return allSalt;
    }

    /** Every open Salt holder now, oldest first (metrics, tests). */
    synchronized List<ZmtpConnection> saltHolders() {
        return saltHolders.stream().filter(ZmtpConnection::isOpen).toList();
    }

    /** Entries held to route publications (routes' connections, Salt indexes, Salt bindings): O(N) for N minions. */
    synchronized int routingEntries() {
        int entries = saltBound.size() + allSalt.entries();
        for (Route route : honoured.values()) {
            entries += route.connections().size();
        }
        for (SaltHolders local : saltByAddress.values()) {
            entries += local.entries();
        }
        return entries;
    }

    /** Minion ids honoured now on open connections: a snapshot. */
    Set<String> honouredMinions() {
        Set<String> ids = new HashSet<>();
        honoured.forEach((id, route) -> {
            if (route.isOpen()) {
                ids.add(id);
            }
        });
        for (String id : saltBound.keySet()) {
            SaltHolders.Route route = saltRoute(id);
            if (route != null && route.isOpen()) {
                ids.add(id);
            }
        }
        return ids;
    }

    /** Minion ids whose {@code m/ID/} an open publish connection holds now, honoured or not: a snapshot. */
    synchronized Set<String> heldMinions() {
        Set<String> ids = new HashSet<>();
        holders.forEach((id, connections) -> {
            if (connections.stream().anyMatch(ZmtpConnection::isOpen)) {
                ids.add(id);
            }
        });
        return ids;
    }

    /** Holds {@code topic} on {@code connection}; false when that would exceed its topic cap (close it). */
    synchronized boolean subscribe(ZmtpConnection connection, byte[] topic) {
        String text = new String(topic, StandardCharsets.ISO_8859_1);
        if (!connection.isOpen()) {
            return true; // closing: publishClosed() has run or will run, and must find nothing new
        }
        if (!connection.topics.contains(text)) {
            if (connection.topics.size() >= maxTopics) {
                return false;
            }
            connection.topics.add(text);
        }
        if (isSaltTopic(text)) {
            holdSalt(connection, text);
            return true;
        }
        String id = Topics.minionOf(text);
        if (id != null) {
            LinkedHashSet<ZmtpConnection> set = holders.computeIfAbsent(id, k -> new LinkedHashSet<>());
            set.remove(connection);
            set.add(connection); // newest last
            decide(id);
        }
        return true;
    }

    /** {@code connection} subscribed to Salt's {@code topic}: indexed, and authenticated once it is honoured. */
    private void holdSalt(ZmtpConnection connection, String topic) {
        String address = connection.remoteAddress();
        SaltHolders local = saltByAddress.computeIfAbsent(address, k -> new SaltHolders());
        boolean wasFiltering = connection.saltFiltering;
        connection.salt = true;
        saltHolders.add(connection);
        if (!topic.isEmpty()) {
            connection.saltFiltering = true;
        }
        if (!connection.saltFiltering) {
            allSalt.whole.add(connection);
            local.whole.add(connection);
            if (saltBoundPerAddress.containsKey(address)) {
                connection.authenticate(); // honoured for the Salt minions bound from its address
            }
            return;
        }
        // Filtering from now on: it takes only the ids whose topics it holds (all it held so far, once it turns).
        List<String> held = wasFiltering ? List.of(topic) : List.copyOf(connection.topics);
        allSalt.whole.remove(connection);
        local.whole.remove(connection);
        for (String idTopic : held) {
            if (isSaltIdTopic(idTopic)) {
                allSalt.addFiltering(idTopic, connection);
                local.addFiltering(idTopic, connection);
                String id = saltIdsByTopic.get(idTopic);
                SaltBinding binding = id == null ? null : saltBound.get(id);
                if (binding != null && binding.request().remoteAddress().equals(address)) {
                    connection.authenticate();
                }
            }
        }
    }

    synchronized void cancel(ZmtpConnection connection, byte[] topic) {
        String text = new String(topic, StandardCharsets.ISO_8859_1);
        if (connection.topics.remove(text)) {
            if (connection.saltFiltering && isSaltIdTopic(text)) {
                allSalt.removeFiltering(text, connection);
                SaltHolders local = saltByAddress.get(connection.remoteAddress());
                if (local != null) {
                    local.removeFiltering(text, connection);
                }
            }
            String id = Topics.minionOf(text);
            if (id != null) {
                release(id, connection);
                decide(id);
            }
        }
    }

    /** {@code request} is where {@code minionId} now holds its session. */
    synchronized void bind(String minionId, ZmtpConnection request) {
        unbindSalt(minionId);
        if (request.isOpen()) {
            bound.put(minionId, request);
            if (request.salt) {
                bindSalt(minionId, request);
            }
        } else {
            bound.remove(minionId);
        }
        decide(minionId);
    }

    private void bindSalt(String minionId, ZmtpConnection request) {
        byte[] topicBytes = saltTopic(minionId);
        String topic = new String(topicBytes, StandardCharsets.ISO_8859_1);
        saltBound.put(minionId, new SaltBinding(request, topic, topicBytes));
        saltIdsByTopic.put(topic, minionId);
        String address = request.remoteAddress();
        if ("unknown".equals(address)) {
            return;
        }
        boolean first = saltBoundPerAddress.merge(address, 1, Integer::sum) == 1;
        SaltHolders local = saltByAddress.get(address);
        if (local != null) {
            // An honoured subscription authenticates its connection (once; it leaves the unauthenticated caps).
            if (first) {
                local.whole.forEach(ZmtpConnection::authenticate);
            }
            local.filtering(topic).forEach(ZmtpConnection::authenticate);
        }
    }

    private void unbindSalt(String minionId) {
        SaltBinding binding = saltBound.remove(minionId);
        if (binding == null) {
            return;
        }
        saltIdsByTopic.remove(binding.topic(), minionId);
        saltBoundPerAddress.computeIfPresent(
                binding.request().remoteAddress(), (address, count) -> count == 1 ? null : count - 1);
    }

    /**
     * {@code minionId} was removed: no longer bound, and every subscription to its topic dropped.
     *
     * @return its request connection and its honoured publish connections not honoured for another minion, those it
     *     had (the caller closes them: a live minion connects and subscribes anew, and is honoured once bound again);
     *     a Salt minion's subscribers are its address's and stay
     */
    synchronized List<ZmtpConnection> unbind(String minionId) {
        List<ZmtpConnection> connections = new ArrayList<>(2);
        ZmtpConnection request = bound.remove(minionId);
        if (request != null) {
            connections.add(request);
        }
        unbindSalt(minionId);
        Route route = honoured.remove(minionId);
        LinkedHashSet<ZmtpConnection> set = holders.remove(minionId);
        if (set != null) {
            String topic = Topics.minion(minionId);
            for (ZmtpConnection connection : set) {
                connection.topics.remove(topic);
            }
        }
        if (route != null) {
            for (ZmtpConnection connection : route.connections()) {
                // A connection honoured for other minions too (neighbours behind one address) stays for them.
                if (!honouredForAny(connection)) {
                    connections.add(connection);
                }
            }
        }
        return connections;
    }

    /** Salt's SUB subscriptions: everything, {@code broadcast}, or a 40-digit lower-case hex SHA-1 of an id. */
    static boolean isSaltTopic(String topic) {
        return topic.isEmpty() || topic.equals("broadcast") || isSaltIdTopic(topic);
    }

    private static boolean isSaltIdTopic(String topic) {
        return topic.length() == 40 && topic.chars().allMatch(c -> c >= '0' && c <= '9' || c >= 'a' && c <= 'f');
    }

    /** The first byte of a Salt payload on the request channel: a msgpack map (a brine frame starts with 1). */
    static boolean isSaltPayload(byte[] frame) {
        return SaltMsgpack.isMap(frame);
    }

    /** Salt's {@code zmq_filtering} topic of a minion: the lower-case hex SHA-1 of its id. */
    static byte[] saltTopic(String minionId) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-1").digest(minionId.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash).getBytes(StandardCharsets.US_ASCII);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every JDK", e);
        }
    }

    private boolean honouredForAny(ZmtpConnection connection) {
        for (String topic : connection.topics) {
            String id = Topics.minionOf(topic);
            Route route = id == null ? null : honoured.get(id);
            if (route != null && route.connections().contains(connection)) {
                return true;
            }
        }
        return false;
    }

    /** A request connection closed: the minions bound to it have no live request connection now. */
    synchronized void requestClosed(ZmtpConnection request) {
        for (String id : request.minionIds()) {
            if (bound.remove(id, request)) {
                unbindSalt(id);
                decide(id);
            }
        }
    }

    /** A publish connection closed: its subscriptions go. */
    synchronized void publishClosed(ZmtpConnection connection) {
        if (saltHolders.remove(connection)) {
            SaltHolders local = saltByAddress.get(connection.remoteAddress());
            allSalt.whole.remove(connection);
            if (local != null) {
                local.whole.remove(connection);
            }
            for (String topic : connection.topics) {
                if (isSaltIdTopic(topic)) {
                    allSalt.removeFiltering(topic, connection);
                    if (local != null) {
                        local.removeFiltering(topic, connection);
                    }
                }
            }
            if (local != null && local.isEmpty()) {
                saltByAddress.remove(connection.remoteAddress());
            }
        }
        List<String> ids = new ArrayList<>();
        for (String topic : connection.topics) {
            String id = Topics.minionOf(topic);
            if (id != null) {
                ids.add(id);
                release(id, connection);
            }
        }
        connection.topics.clear();
        ids.forEach(this::decide);
    }

    private void release(String id, ZmtpConnection connection) {
        LinkedHashSet<ZmtpConnection> set = holders.get(id);
        if (set != null && set.remove(connection) && set.isEmpty()) {
            holders.remove(id);
        }
    }

    /**
     * Honours the newest {@link #MAX_COPIES} holders of {@code m/id/} from the bound request connection's address; a
     * Salt minion has no such route ({@link #saltRoute}).
     */
    private void decide(String id) {
        ZmtpConnection request = bound.get(id);
        List<ZmtpConnection> chosen = new ArrayList<>(1);
        LinkedHashSet<ZmtpConnection> set = holders.get(id);
        if (request != null
                && request.isOpen()
                && !request.salt
                && set != null
                && !"unknown".equals(request.remoteAddress())) {
            for (ZmtpConnection holder : set) { // oldest first
                if (holder.isOpen() && holder.remoteAddress().equals(request.remoteAddress())) {
                    chosen.add(holder);
                }
            }
        }
        if (chosen.isEmpty()) {
            honoured.remove(id);
            return;
        }
        List<ZmtpConnection> newest =
                List.copyOf(chosen.subList(Math.max(0, chosen.size() - MAX_COPIES), chosen.size()));
        Route previous = honoured.get(id);
        if (previous == null || !previous.connections().equals(newest)) {
            byte[] topic = previous != null ? previous.topic() : Topics.minionBytes(id);
            honoured.put(id, new Route(newest, topic));
            for (ZmtpConnection connection : newest) {
                // An honoured subscription authenticates its connection (once; it leaves the unauthenticated caps).
                connection.authenticate();
            }
        }
    }
}
