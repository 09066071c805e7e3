package io.brine.transport.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.transport.zmtp.ZmtpServerOptions;
import org.junit.jupiter.api.Test;

/**
 * Each connection cap at its edge: the last connection it allows is admitted, the next is refused with the cap's name
 * and counts nothing, and leaving (authenticated or closed) makes room for exactly one more.
 */
class ConnectionBudgetTest {

    private static ConnectionBudget budget(int max, int unauthenticated, int perSource) {
        return new ConnectionBudget(ZmtpServerOptions.defaults().withConnectionLimits(max, unauthenticated, perSource));
    }

    @Test
    void thePerSourceCapAdmitsItsLastConnectionRefusesTheNextAndAnotherSourceStillConnects() {
        ConnectionBudget budget = budget(10, 5, 2);
        assertThat(budget.admit("10.0.0.1", false)).isNull();
        assertThat(budget.admit("10.0.0.1", false)).isNull();
        assertThat(budget.admit("10.0.0.1", false)).isEqualTo("2 unauthenticated connections open from there");
        assertThat(budget.connections()).isEqualTo(2);
        assertThat(budget.unauthenticated()).isEqualTo(2);
        assertThat(budget.admit("10.0.0.2", false)).isNull();

        budget.authenticated("10.0.0.1", false); // one of its two is a minion's now: room for one more from there
        assertThat(budget.admit("10.0.0.1", false)).isNull();
        assertThat(budget.admit("10.0.0.1", false)).isNotNull();
        assertThat(budget.connections()).isEqualTo(4);
        assertThat(budget.unauthenticated()).isEqualTo(3);
    }

    @Test
    void theUnauthenticatedCapAdmitsItsLastConnectionAndRefusesTheNextWhateverTheSource() {
        ConnectionBudget budget = budget(10, 3, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(budget.admit("10.0.0." + i, false)).isNull();
        }
        assertThat(budget.admit("10.0.0.9", false)).isEqualTo("3 unauthenticated connections open");
        assertThat(budget.unauthenticated()).isEqualTo(3);
        budget.closed("10.0.0.0", false, true);
        assertThat(budget.admit("10.0.0.9", false)).isNull();
        assertThat(budget.admit("10.0.0.8", false)).isNotNull();
    }

    @Test
    void theTotalCapCountsAuthenticatedConnectionsTooAndAClosedOneMakesRoomForOne() {
        ConnectionBudget budget = budget(3, 3, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(budget.admit("10.0.0.1", false)).isNull();
            budget.authenticated("10.0.0.1", false);
        }
        assertThat(budget.unauthenticated()).isZero();
        assertThat(budget.admit("10.0.0.2", false)).isEqualTo("3 connections open");
        assertThat(budget.connections()).isEqualTo(3);
        budget.closed("10.0.0.1", false, false);
        assertThat(budget.admit("10.0.0.2", false)).isNull();
        assertThat(budget.admit("10.0.0.2", false)).isNotNull();
    }

    @Test
    void everyoneGoneLeavesEveryCountAtZero() {
        ConnectionBudget budget = budget(100, 50, 10);
        for (int i = 0; i < 10; i++) {
            assertThat(budget.admit("10.0.0.1", false)).isNull();
        }
        for (int i = 0; i < 5; i++) {
            budget.authenticated("10.0.0.1", false);
            budget.closed("10.0.0.1", false, false);
        }
        for (int i = 0; i < 5; i++) {
            budget.closed("10.0.0.1", false, true);
        }
        assertThat(budget.connections()).isZero();
        assertThat(budget.unauthenticated()).isZero();
        // And the source's full allowance is back.
        for (int i = 0; i < 10; i++) {
            assertThat(budget.admit("10.0.0.1", false)).isNull();
        }
        assertThat(budget.admit("10.0.0.1", false)).isNotNull();
    }

    @Test
    void otherSourcesTogetherHoldAtMostTheUnreservedPartAndTheReserveAdmitsItsLastAndRefusesTheNext() {
        ConnectionBudget budget = budget(100, 8, 4); // a quarter, 2, kept for reserved sources
        for (int i = 0; i < 4; i++) {
            assertThat(budget.admit("10.0.0.2", false)).isNull();
        }
        assertThat(budget.admit("10.0.0.3", false)).isNull();
        assertThat(budget.admit("10.0.0.3", false)).isNull();
        assertThat(budget.admit("10.0.0.3", false))
                .isEqualTo("6 unauthenticated connections open from sources outside the reserve");
        assertThat(budget.admit("10.0.0.4", false)).isNotNull();
        assertThat(budget.unreserved()).isEqualTo(6);

        assertThat(budget.admit("127.0.0.1", true)).isNull();
        assertThat(budget.admit("10.0.0.9", true)).isNull();
        assertThat(budget.admit("10.0.0.9", true)).isEqualTo("8 unauthenticated connections open");
        assertThat(budget.unauthenticated()).isEqualTo(8);
        assertThat(budget.unreserved()).isEqualTo(6);

        budget.authenticated("10.0.0.2", false); // an outsider's connection bound a minion: room for one outsider
        assertThat(budget.admit("10.0.0.4", false)).isNull();
        assertThat(budget.admit("10.0.0.4", false)).isNotNull();
        budget.closed("10.0.0.9", true, true);
        assertThat(budget.admit("10.0.0.4", false))
                .as("the reserve's room is not the outsiders'")
                .isNotNull();
        assertThat(budget.admit("10.0.0.9", true)).isNull();
    }

    @Test
    void aReservedSourceMayUseTheWholeBudgetAndStillOnlyItsOwnSharePerSource() {
        ConnectionBudget budget = budget(100, 8, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(budget.admit("127.0.0.1", true)).isNull();
        }
        assertThat(budget.admit("127.0.0.1", true)).isEqualTo("3 unauthenticated connections open from there");
        assertThat(budget.unreserved()).isZero();
        for (int i = 0; i < 3; i++) {
            assertThat(budget.admit("10.0.0.5", true)).isNull();
        }
        assertThat(budget.admit("10.0.0.2", false)).isNull();
        assertThat(budget.admit("10.0.0.3", false)).isNull();
        assertThat(budget.admit("10.0.0.3", false)).isEqualTo("8 unauthenticated connections open");
        budget.closed("127.0.0.1", true, true);
        budget.closed("10.0.0.2", false, true);
        budget.closed("10.0.0.3", false, true);
        assertThat(budget.unreserved()).isZero();
        assertThat(budget.unauthenticated()).isEqualTo(5);
    }
}
