package io.brine.transport.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.transport.zmtp.ZmtpServerOptions;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The caps as both server transports keep them: counted on admit, left on authentication or close, once each. */
class AcceptedConnectionsTest {

    private static final class Connection extends ServerConnection {
        Connection(Channel channel, String remoteAddress, Outbox outbox, AcceptedConnections owner) {
            super(channel, remoteAddress, outbox, owner);
        }
    }

    private static AcceptedConnections accepted(int max, int unauthenticated, int perSource) {
        return new AcceptedConnections(
                "test",
                ZmtpServerOptions.defaults().withConnectionLimits(max, unauthenticated, perSource),
                null,
                LoggerFactory.getLogger(AcceptedConnectionsTest.class));
    }

    @Test
    void anAuthenticatedConnectionLeavesTheUnauthenticatedCapOnceAndTheTotalWhenItCloses() {
        AcceptedConnections accepted = accepted(10, 1, 1);
        EmbeddedChannel first = new EmbeddedChannel();
        Connection connection = accepted.admit(first, Connection::new);

        assertThat(accepted.admit(new EmbeddedChannel(), Connection::new)).isNull();
        assertThat(connection.authenticate()).isTrue();
        assertThat(connection.authenticate()).isFalse();
        assertThat(accepted.unauthenticatedCount()).isZero();
        assertThat(accepted.admit(new EmbeddedChannel(), Connection::new)).isNotNull();
        assertThat(accepted.unauthenticatedCount()).isEqualTo(1);
        assertThat(accepted.count()).isEqualTo(2);

        first.close();
        assertThat(accepted.count()).isEqualTo(1);
        assertThat(accepted.unauthenticatedCount()).isEqualTo(1);
    }

    @Test
    void aClosedConnectionCannotBeAuthenticatedAndLeavesTheCapsOnce() {
        AcceptedConnections accepted = accepted(1, 1, 1);
        EmbeddedChannel channel = new EmbeddedChannel();
        Connection connection = accepted.admit(channel, Connection::new);
        channel.close();

        assertThat(connection.authenticate()).isFalse();
        assertThat(connection.isOpen()).isFalse();
        assertThat(accepted.count()).isZero();
        assertThat(accepted.unauthenticatedCount()).isZero();
        assertThat(accepted.admit(new EmbeddedChannel(), Connection::new)).isNotNull();
    }
}
