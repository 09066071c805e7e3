package io.brine.transport;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Several transports served at once (ZeroMQ and TCP on their own ports), so that a fleet can move from one to the
 * other minion by minion. To the master it is one transport:
 * <ul>
 *   <li>every peer it hands out is wrapped with the transport it came from, so {@link #send} and
 *       {@link #publishPort} go back to that transport;
 *   <li>{@link #bind} remembers which transport a minion last authenticated on, and {@link #publish} sends there;
 *       a minion not bound anywhere is offered to each transport in turn (ZeroMQ routes by subscription, which can
 *       outlive a master's memory), and is undeliverable only when none takes it;
 *   <li>{@link #unbind} tells every transport;
 *   <li>{@link #addresses} are the first transport's.
 * </ul>
 * Each transport reports its own asynchronous failures to the listener it was built with.
 */
public final class CompositeServerTransport implements ServerTransport {

    private final List<ServerTransport> members;
    private final Map<String, ServerTransport> routes = new ConcurrentHashMap<>();

    /** @param members in order of precedence; the first one's addresses are this one's */
    public CompositeServerTransport(List<ServerTransport> members) {
        if (members.isEmpty()) {
            throw new IllegalArgumentException("no transports");
        }
        this.members = List.copyOf(members);
    }

    /** The member of type {@code type}, if there is one (for addresses, metrics and tests). */
    public <T extends ServerTransport> Optional<T> member(Class<T> type) {
        return members.stream().filter(type::isInstance).map(type::cast).findFirst();
    }

    @Override
    public void start(InboundHandler handler) throws IOException {
        Objects.requireNonNull(handler, "handler");
        List<ServerTransport> started = new ArrayList<>();
        try {
            for (ServerTransport member : members) {
                member.start(new InboundHandler() {
                    @Override
                    public void onFrame(Peer from, byte[] frame) {
                        handler.onFrame(new RoutedPeer(member, from), frame);
                    }

                    @Override
                    public void onDisconnect(Peer peer) {
                        handler.onDisconnect(new RoutedPeer(member, peer));
                    }
                });
                started.add(member);
            }
        } catch (IOException | RuntimeException e) {
            started.forEach(ServerTransport::close);
            throw e;
        }
    }

    @Override
    public Addresses addresses() {
        return members.get(0).addresses();
    }

    @Override
    public int publishPort(Peer peer) {
        RoutedPeer routed = routed(peer);
        return routed.transport().publishPort(routed.peer());
    }

    @Override
    public boolean send(Peer peer, byte[] frame) {
        RoutedPeer routed = routed(peer);
        return routed.transport().send(routed.peer(), frame);
    }

    @Override
    public Set<String> publish(Collection<String> minionIds, byte[] frame) {
        Map<ServerTransport, List<String>> byMember = new LinkedHashMap<>();
        List<String> unrouted = new ArrayList<>();
        for (String id : new LinkedHashSet<>(minionIds)) {
            ServerTransport member = routes.get(id);
            if (member != null) {
                byMember.computeIfAbsent(member, m -> new ArrayList<>()).add(id);
            } else {
                unrouted.add(id);
            }
        }
        Set<String> undeliverable = new HashSet<>();
        byMember.forEach((member, ids) -> undeliverable.addAll(member.publish(ids, frame)));
        Collection<String> remaining = unrouted;
        for (ServerTransport member : members) {
            if (remaining.isEmpty()) {
                break;
            }
            remaining = member.publish(remaining, frame);
        }
        undeliverable.addAll(remaining);
        return undeliverable;
    }

    @Override
    public void bind(String minionId, Peer peer) {
        RoutedPeer routed = routed(peer);
        ServerTransport previous = routes.put(minionId, routed.transport());
        if (previous != null && previous != routed.transport()) {
            previous.unbind(minionId); // it moved: drop its old route (and a TCP connection it left behind)
        }
        routed.transport().bind(minionId, routed.peer());
    }

    @Override
    public void authenticated(Peer peer) {
        RoutedPeer routed = routed(peer);
        routed.transport().authenticated(routed.peer());
    }

    @Override
    public void handled(Peer peer, int bytes) {
        RoutedPeer routed = routed(peer);
        routed.transport().handled(routed.peer(), bytes);
    }

    @Override
    public void disconnect(Peer peer) {
        RoutedPeer routed = routed(peer);
        routed.transport().disconnect(routed.peer());
    }

    @Override
    public void unbind(String minionId) {
        routes.remove(minionId);
        members.forEach(member -> member.unbind(minionId));
    }

    @Override
    public Set<String> reachableMinions() {
        Set<String> reachable = new HashSet<>();
        members.forEach(member -> reachable.addAll(member.reachableMinions()));
        return reachable;
    }

    @Override
    public void close() {
        for (int i = members.size() - 1; i >= 0; i--) {
            members.get(i).close();
        }
    }

    private static RoutedPeer routed(Peer peer) {
        if (!(peer instanceof RoutedPeer routed)) {
            throw new IllegalArgumentException("not a peer of this transport: " + peer);
        }
        return routed;
    }

    /** A member's peer, with the member it came from. Equal when both are. */
    record RoutedPeer(ServerTransport transport, Peer peer) implements Peer {
        @Override
        public String remoteAddress() {
            return peer.remoteAddress();
        }

        @Override
        public String transportName() {
            return peer.transportName();
        }

        @Override
        public Framing framing() {
            return peer.framing();
        }

        @Override
        public String toString() {
            return peer.toString();
        }
    }
}
