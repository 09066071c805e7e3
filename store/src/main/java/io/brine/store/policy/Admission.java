package io.brine.store.policy;

import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.Offer;
import io.brine.store.keys.PolicyVerdict;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The one path by which a minion's offered key is judged: one {@link KeyStore#offer} that asks the policies only
 * when the id is unknown or pending with that key (never for a rejected id, never to replace a stored key), and that
 * gives back here a single-use grant or token a policy spent when the store did not accept after all (a limit was
 * reached, the store failed). Nothing else spends, judges or gives back.
 */
public final class Admission {

    /** The policy decision of an offer the policies were not asked about. */
    static final PolicyDecision NOT_ASKED =
            new PolicyDecision(PolicyVerdict.NONE, "state", "policies are not consulted for this key state");

    private final KeyStore store;
    private final AcceptancePolicies policies;

    public Admission(KeyStore store, AcceptancePolicies policies) {
        this.store = Objects.requireNonNull(store, "store");
        this.policies = Objects.requireNonNull(policies, "policies");
    }

    /** What the store answered and stored, and the policies' decision it rested on (for the log and the audit). */
    public record Admitted(Offer offer, PolicyDecision policy) {

        public KeyDecision decision() {
            return offer.decision();
        }
    }

    /**
     * Offers {@code attempt}'s key to the store.
     *
     * @throws java.io.UncheckedIOException when the store cannot be read or written (anything spent is given back)
     * @throws IllegalArgumentException for a key brine does not accept
     */
    public Admitted admit(AuthAttempt attempt) {
        return admit(attempt, MinionKind.BRINE);
    }

    /**
     * Offers {@code attempt}'s key to the store for a minion of {@code kind}: an id held by the other kind is
     * answered {@link KeyDecision.OtherKind} without asking any policy.
     */
    public Admitted admit(AuthAttempt attempt, MinionKind kind) {
        AtomicReference<PolicyDecision> asked = new AtomicReference<>(NOT_ASKED);
        Offer offer;
        try {
            offer = store.offer(attempt.id(), attempt.publicKey(), kind, current -> {
                // Over another pending key only a grant or token speaks: it proves the id, the pending key does not.
                PolicyDecision decision = current == KeyLookup.PENDING_OTHER
                        ? policies.evaluateCredentials(attempt)
                        : policies.evaluate(attempt);
                asked.set(decision);
                return decision.verdict();
            });
        } catch (RuntimeException e) {
            asked.get().rollback().run();
            throw e;
        }
        if (!(offer.decision() instanceof KeyDecision.Accepted)) {
            asked.get().rollback().run();
        }
        return new Admitted(offer, asked.get());
    }
}
