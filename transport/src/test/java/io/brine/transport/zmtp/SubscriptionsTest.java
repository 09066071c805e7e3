package io.brine.transport.zmtp;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.transport.server.AcceptedConnections;
import io.brine.transport.server.Outbox;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Salt minions behind one address: routed by address at publish time, with bookkeeping linear in their number. */
class SubscriptionsTest {

    private static final String NAT = "203.0.113.9";

    private final AcceptedConnections owner = new AcceptedConnections(
            "test", ZmtpServerOptions.defaults(), null, LoggerFactory.getLogger(SubscriptionsTest.class));

    private ZmtpConnection connection(String address, ZmtpConnection.Port port) {
        EmbeddedChannel channel = new EmbeddedChannel();
        return new ZmtpConnection(channel, address, port, new Outbox(channel.eventLoop()), owner);
    }

    private ZmtpConnection saltRequest(String address) {
        ZmtpConnection request = connection(address, ZmtpConnection.Port.REQUEST);
        request.salt = true; // it sent a Salt payload
        return request;
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void twoThousandSaltMinionsBehindOneAddressHoldRoutingEntriesLinearInTheirNumberAndEachReachesEverySubscriber() {
        int minions = 2_000;
        Subscriptions subscriptions = new Subscriptions(16);
        List<ZmtpConnection> whole = new ArrayList<>();
        List<ZmtpConnection> filtering = new ArrayList<>();
        // Minions sign in and subscribe in turn, as a fleet behind a NAT does: under a rule that recomputed every
        // bound minion's route on each subscription this is ~N^3 steps and N routes of ~N subscribers (N^2 entries).
        for (int i = 0; i < minions; i++) {
            subscriptions.bind("salt" + i, saltRequest(NAT));
            ZmtpConnection sub = connection(NAT, ZmtpConnection.Port.PUBLISH);
            if (i % 10 == 0) { // zmq_filtering: broadcast and its own id's topic
                assertThat(subscriptions.subscribe(sub, ascii("broadcast"))).isTrue();
                assertThat(subscriptions.subscribe(sub, Subscriptions.saltTopic("salt" + i)))
                        .isTrue();
                filtering.add(sub);
            } else {
                assertThat(subscriptions.subscribe(sub, new byte[0])).isTrue();
                whole.add(sub);
            }
        }
        ZmtpConnection elsewhere = connection("198.51.100.4", ZmtpConnection.Port.PUBLISH);
        subscriptions.subscribe(elsewhere, new byte[0]);

        assertThat(subscriptions.routingEntries())
                .as("O(N), not N routes of N subscribers")
                .isLessThanOrEqualTo(4 * minions);
        assertThat(subscriptions.honouredMinions()).hasSize(minions);
        SaltHolders.Route filtered = subscriptions.saltRoute("salt10");
        assertThat(filtered.holders().whole).containsExactlyInAnyOrderElementsOf(whole);
        assertThat(filtered.holders().filtering(filtered.topic())).containsExactly(filtering.get(1));
        assertThat(filtered.size()).isEqualTo(whole.size() + 1);
        assertThat(subscriptions.saltRoute("salt11").size())
                .as("no filtering SUB holds salt11's topic")
                .isEqualTo(whole.size());
        assertThat(whole).allMatch(ZmtpConnection::isAuthenticated);
        assertThat(filtering).allMatch(ZmtpConnection::isAuthenticated);
        assertThat(elsewhere.isAuthenticated())
                .as("no Salt minion is bound from its address")
                .isFalse();
        assertThat(subscriptions.allSaltHolders().whole).hasSize(whole.size() + 1);
    }

    @Test
    void aFilteringSubTakesAnIdOnlyWhileItHoldsItsTopicAndClosedSubsAndRequestsLeaveTheRoute() {
        Subscriptions subscriptions = new Subscriptions(16);
        ZmtpConnection request = saltRequest(NAT);
        request.minionIds().add("salt1");
        subscriptions.bind("salt1", request);
        ZmtpConnection filtering = connection(NAT, ZmtpConnection.Port.PUBLISH);
        subscriptions.subscribe(filtering, ascii("broadcast"));
        assertThat(subscriptions.saltRoute("salt1").size())
                .as("broadcast alone routes nothing")
                .isZero();
        assertThat(filtering.isAuthenticated()).isFalse();

        subscriptions.subscribe(filtering, Subscriptions.saltTopic("salt1"));
        assertThat(subscriptions.saltRoute("salt1").size()).isEqualTo(1);
        assertThat(filtering.isAuthenticated()).isTrue();
        subscriptions.cancel(filtering, Subscriptions.saltTopic("salt1"));
        assertThat(subscriptions.saltRoute("salt1").size()).isZero();

        ZmtpConnection whole = connection(NAT, ZmtpConnection.Port.PUBLISH);
        subscriptions.subscribe(whole, new byte[0]);
        assertThat(subscriptions.honouredMinions()).containsExactly("salt1");
        whole.channel().close();
        subscriptions.publishClosed(whole);
        assertThat(subscriptions.honouredMinions()).isEmpty();

        ZmtpConnection again = connection(NAT, ZmtpConnection.Port.PUBLISH);
        subscriptions.subscribe(again, new byte[0]);
        request.channel().close();
        subscriptions.requestClosed(request);
        assertThat(subscriptions.saltRoute("salt1"))
                .as("no live request connection")
                .isNull();
        assertThat(subscriptions.honouredMinions()).isEmpty();
    }
}
