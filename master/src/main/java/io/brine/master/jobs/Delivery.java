package io.brine.master.jobs;

import java.util.Collection;
import java.util.Set;

/**
 * What a job's publication is known not to have reached: {@code unreachable}, the targets no master could queue it
 * for (not connected, or lost by the transport), and {@code unconfirmed}, those whose delivery is not known (a
 * master of the cluster has not reported yet, or the announcement's write was not answered). The other targets were
 * delivered: they have returned, or are running.
 */
public record Delivery(Set<String> unreachable, Set<String> unconfirmed) {

    public Delivery {
        unreachable = Set.copyOf(unreachable);
        unconfirmed = Set.copyOf(unconfirmed);
    }

    /** Every target in {@code minions} is unreachable. */
    public static Delivery unreachable(Collection<String> minions) {
        return new Delivery(Set.copyOf(minions), Set.of());
    }

    /** Every target in {@code minions} is unconfirmed. */
    public static Delivery unconfirmed(Collection<String> minions) {
        return new Delivery(Set.of(), Set.copyOf(minions));
    }
}
