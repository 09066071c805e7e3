package io.brine.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CompositeServerTransportTest {

    private record FakePeer(String name) implements Peer {
        @Override
        public String remoteAddress() {
            return "127.0.0.1";
        }
    }

    /** Delivers to the ids in {@code reachable}; records what it was asked. */
    private static final class FakeTransport implements ServerTransport {
        final int publishPort;
        final Set<String> reachable = new HashSet<>();
        final List<String> published = new ArrayList<>();
        final List<String> sent = new ArrayList<>();
        final List<String> bound = new ArrayList<>();
        final List<String> authenticated = new ArrayList<>();
        final List<String> unbound = new ArrayList<>();
        InboundHandler handler;

        FakeTransport(int publishPort) {
            this.publishPort = publishPort;
        }

        @Override
        public void start(InboundHandler handler) {
            this.handler = handler;
        }

        @Override
        public Addresses addresses() {
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", publishPort);
            return new Addresses(address, address);
        }

        @Override
        public int publishPort(Peer peer) {
            return publishPort;
        }

        @Override
        public boolean send(Peer peer, byte[] frame) {
            sent.add(((FakePeer) peer).name());
            return true;
        }

        @Override
        public Set<String> publish(Collection<String> minionIds, byte[] frame) {
            published.addAll(minionIds);
            Set<String> undeliverable = new HashSet<>(minionIds);
            undeliverable.removeAll(reachable);
            return undeliverable;
        }

        @Override
        public void authenticated(Peer peer) {
            authenticated.add(((FakePeer) peer).name());
        }

        @Override
        public void bind(String minionId, Peer peer) {
            bound.add(minionId);
        }

        @Override
        public void unbind(String minionId) {
            unbound.add(minionId);
        }

        @Override
        public Set<String> reachableMinions() {
            return Set.copyOf(reachable);
        }

        @Override
        public void close() {}
    }

    private final FakeTransport zmq = new FakeTransport(4505);
    private final FakeTransport tcp = new FakeTransport(0);
    private final CompositeServerTransport composite = new CompositeServerTransport(List.of(zmq, tcp));
    private final List<Peer> received = new ArrayList<>();

    private Peer inbound(FakeTransport member, String name) {
        member.handler.onFrame(new FakePeer(name), new byte[] {1});
        return received.get(received.size() - 1);
    }

    @Test
    void answersAndBindsThroughTheTransportAPeerCameFrom() throws Exception {
        composite.start((from, frame) -> received.add(from));
        Peer viaZmq = inbound(zmq, "a");
        Peer viaTcp = inbound(tcp, "b");

        composite.send(viaTcp, new byte[] {2});
        composite.send(viaZmq, new byte[] {2});
        composite.bind("web1", viaTcp);
        composite.authenticated(viaZmq);

        assertThat(tcp.sent).containsExactly("b");
        assertThat(zmq.sent).containsExactly("a");
        assertThat(tcp.bound).containsExactly("web1");
        assertThat(zmq.authenticated).containsExactly("a");
        assertThat(tcp.authenticated).isEmpty();
        assertThat(composite.publishPort(viaZmq)).isEqualTo(4505);
        assertThat(composite.publishPort(viaTcp)).isZero();
        assertThat(composite.addresses().publish().getPort()).isEqualTo(4505);
        assertThat(viaTcp).isEqualTo(inbound(tcp, "b")).isNotEqualTo(viaZmq);
    }

    @Test
    void publishesEachMinionWhereItIsBoundAndOffersTheRestToEachInTurn() throws Exception {
        composite.start((from, frame) -> received.add(from));
        composite.bind("web1", inbound(tcp, "b"));
        tcp.reachable.add("web1");
        zmq.reachable.add("web2");

        Set<String> undeliverable = composite.publish(List.of("web1", "web2", "db1"), new byte[] {3});

        assertThat(undeliverable).containsExactly("db1");
        assertThat(tcp.published).containsExactly("web1", "db1");
        assertThat(zmq.published).containsExactly("web2", "db1");
        assertThat(composite.reachableMinions()).containsExactlyInAnyOrder("web1", "web2");
    }

    @Test
    void aMinionThatMovesIsUnboundFromTheTransportItLeft() throws Exception {
        composite.start((from, frame) -> received.add(from));
        composite.bind("web1", inbound(zmq, "a"));

        composite.bind("web1", inbound(tcp, "b"));
        composite.unbind("db1");

        assertThat(zmq.unbound).containsExactly("web1", "db1");
        assertThat(tcp.unbound).containsExactly("db1");
    }
}
