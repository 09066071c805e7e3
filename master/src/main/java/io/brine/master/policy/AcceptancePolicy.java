package io.brine.master.policy;

/** One way of deciding about a key that is not accepted yet. Must not block for long; must fail closed. */
public interface AcceptancePolicy {

    PolicyDecision evaluate(AuthAttempt attempt);
}
