package io.brine.master.policy;

import io.brine.master.keys.PolicyVerdict;

/** A policy's conclusion with the rule that made it and why, for the log and the audit line. */
public record PolicyDecision(PolicyVerdict verdict, String rule, String reason) {

    public static PolicyDecision none() {
        return new PolicyDecision(PolicyVerdict.NONE, "none", "no acceptance policy matched");
    }
}
