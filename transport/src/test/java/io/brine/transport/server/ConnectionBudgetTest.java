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
        return new ConnectionBudget(ZmtpServerOptions.defaults().withConnectionLimits(max, unauthenticated,
                perSource));
    }

    @Test
    void thePerSourceCapAdmitsItsLastConnectionRefusesTheNextAndAnotherSourceStillConnects() {
        ConnectionBudget budget = budget(10, 5, 2);
        assertThat(budget.admit("10.0.0.1")).isNull();
        assertThat(budget.admit("10.0.0.1")).isNull();
        assertThat(budget.admit("10.0.0.1")).isEqualTo("2 unauthenticated connections open from there");
        assertThat(budget.connections()).isEqualTo(2);
        assertThat(budget.unauthenticated()).isEqualTo(2);
        assertThat(budget.admit("10.0.0.2")).isNull();

        budget.authenticated("10.0.0.1"); // one of its two is a minion's now: room for one more from there
        assertThat(budget.admit("10.0.0.1")).isNull();
        assertThat(budget.admit("10.0.0.1")).isNotNull();
        assertThat(budget.connections()).isEqualTo(4);
        assertThat(budget.unauthenticated()).isEqualTo(3);
    }

    @Test
    void theUnauthenticatedCapAdmitsItsLastConnectionAndRefusesTheNextWhateverTheSource() {
        ConnectionBudget budget = budget(10, 3, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(budget.admit("10.0.0." + i)).isNull();
        }
        assertThat(budget.admit("10.0.0.9")).isEqualTo("3 unauthenticated connections open");
        assertThat(budget.unauthenticated()).isEqualTo(3);
        budget.closed("10.0.0.0", true);
        assertThat(budget.admit("10.0.0.9")).isNull();
        assertThat(budget.admit("10.0.0.8")).isNotNull();
    }

    @Test
    void theTotalCapCountsAuthenticatedConnectionsTooAndAClosedOneMakesRoomForOne() {
        ConnectionBudget budget = budget(3, 3, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(budget.admit("10.0.0.1")).isNull();
            budget.authenticated("10.0.0.1");
        }
        assertThat(budget.unauthenticated()).isZero();
        assertThat(budget.admit("10.0.0.2")).isEqualTo("3 connections open");
        assertThat(budget.connections()).isEqualTo(3);
        budget.closed("10.0.0.1", false);
        assertThat(budget.admit("10.0.0.2")).isNull();
        assertThat(budget.admit("10.0.0.2")).isNotNull();
    }

    @Test
    void everyoneGoneLeavesEveryCountAtZero() {
        ConnectionBudget budget = budget(100, 50, 10);
        for (int i = 0; i < 10; i++) {
            assertThat(budget.admit("10.0.0.1")).isNull();
        }
        for (int i = 0; i < 5; i++) {
            budget.authenticated("10.0.0.1");
            budget.closed("10.0.0.1", false);
        }
        for (int i = 0; i < 5; i++) {
            budget.closed("10.0.0.1", true);
        }
        assertThat(budget.connections()).isZero();
        assertThat(budget.unauthenticated()).isZero();
        // And the source's full allowance is back.
        for (int i = 0; i < 10; i++) {
            assertThat(budget.admit("10.0.0.1")).isNull();
        }
        assertThat(budget.admit("10.0.0.1")).isNotNull();
    }
}
