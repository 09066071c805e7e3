package io.brine.master.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.testing.TestKeys;
import io.brine.transport.Peer;
import java.security.interfaces.RSAPublicKey;
import org.junit.jupiter.api.Test;

/** Which auth request's session a minion keeps (PROTOCOL.md 8.1): the newest of its key's, whatever another key had. */
class SessionTableTest {

    private static final Peer PEER = () -> "10.0.0.8";
    private static final RSAPublicKey OLD = (RSAPublicKey) TestKeys.pair(1).getPublic();
    private static final RSAPublicKey NEW = (RSAPublicKey) TestKeys.pair(2).getPublic();

    private final SessionTable sessions = new SessionTable();

    @Test
    void aRequestOfTheSameKeyNoNewerThanTheSessionsTakesNothing() {
        MinionSession first = sessions.open("m1", OLD, PEER, 0, 100).orElseThrow();

        assertThat(sessions.open("m1", OLD, PEER, 0, 100)).isEmpty();
        assertThat(sessions.open("m1", OLD, PEER, 0, 99)).isEmpty();
        assertThat(sessions.byMinion("m1")).containsSame(first);
        assertThat(sessions.open("m1", OLD, PEER, 0, 101)).isPresent();
    }

    /**
     * The id's key deleted and another accepted at once, before the removal listener closed the old key's session: the
     * new key's first request, dated as the old session's or before (the minion's clock, a test clock), takes the id.
     */
    @Test
    void aSessionOfAnotherKeyNeverHoldsBackTheAcceptedKeysRequest() {
        MinionSession old = sessions.open("m1", OLD, PEER, 0, 100).orElseThrow();

        MinionSession opened = sessions.open("m1", NEW, PEER, 0, 100).orElseThrow();

        assertThat(sessions.byMinion("m1")).containsSame(opened);
        assertThat(sessions.bySessionId(old.sessionId())).isEmpty();
        assertThat(sessions.open("m1", NEW, PEER, 0, 100))
                .as("its own key's rule again")
                .isEmpty();
    }
}
