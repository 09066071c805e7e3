package io.brine.master.policy;

import io.brine.master.keys.PolicyVerdict;
import java.util.List;

/**
 * The configured policies in order: autoreject rules first (a reject wins), then any rule that accepts accepts;
 * otherwise the key waits for an admin.
 */
public final class AcceptancePolicies {

    private final List<AcceptancePolicy> rejecters;
    private final List<AcceptancePolicy> accepters;

    public AcceptancePolicies(List<AcceptancePolicy> rejecters, List<AcceptancePolicy> accepters) {
        this.rejecters = List.copyOf(rejecters);
        this.accepters = List.copyOf(accepters);
    }

    /** No policy at all: every new key waits for an admin. */
    public static AcceptancePolicies manual() {
        return new AcceptancePolicies(List.of(), List.of());
    }

    /** Salt's {@code auto_accept: true}: every new key is accepted. */
    public static AcceptancePolicy autoAccept() {
        return attempt -> new PolicyDecision(PolicyVerdict.ACCEPT, "auto_accept", "auto_accept is on");
    }

    public PolicyDecision evaluate(AuthAttempt attempt) {
        for (AcceptancePolicy policy : rejecters) {
            PolicyDecision decision = policy.evaluate(attempt);
            if (decision.verdict() == PolicyVerdict.REJECT) {
                return decision;
            }
        }
        for (AcceptancePolicy policy : accepters) {
            PolicyDecision decision = policy.evaluate(attempt);
            if (decision.verdict() == PolicyVerdict.ACCEPT) {
                return decision;
            }
        }
        return PolicyDecision.none();
    }
}
