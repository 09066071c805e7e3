package io.brine.store.policy;

/**
 * One way of deciding about a key that is not accepted yet. {@link #evaluate} runs on an auth worker for every auth
 * request of an unknown or pending key: it must not block for long and must fail closed (an error is "no").
 */
public interface AcceptancePolicy {

    PolicyDecision evaluate(AuthAttempt attempt);

    /**
     * The same question for {@code brine-key policy check}: no side effects (nothing spent, nothing promoted, nothing
     * started in the background), and it may take its time (an executable runs to its end or its timeout).
     */
    default PolicyDecision check(AuthAttempt attempt) {
        return evaluate(attempt);
    }
}
