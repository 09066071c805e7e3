package io.brine.store.policy;

import io.brine.store.keys.PolicyVerdict;
import java.util.Objects;

/**
 * A policy's conclusion with the rule that made it and why, for the log and the audit line.
 *
 * @param rule     which rule decided, precisely enough to find it ({@code autosign_file /etc/brine/autosign.conf:3
 *                 *.example.com})
 * @param reason   why, for this attempt; never holds a secret
 * @param rollback what to undo when the key store did not accept after all (a spent single-use grant or token is
 *                 given back); run by the caller at most once
 */
public record PolicyDecision(PolicyVerdict verdict, String rule, String reason, Runnable rollback) {

    private static final Runnable NOTHING = () -> {};

    public PolicyDecision {
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(rule, "rule");
        Objects.requireNonNull(reason, "reason");
        rollback = rollback == null ? NOTHING : rollback;
    }

    /** A decision with nothing to undo. */
    public PolicyDecision(PolicyVerdict verdict, String rule, String reason) {
        this(verdict, rule, reason, NOTHING);
    }

    public static PolicyDecision none() {
        return new PolicyDecision(PolicyVerdict.NONE, "none", "no acceptance policy matched");
    }

    /**
     * The verdict as it goes beside the answer given in master.log ("; autosign_policy ... accepts: ..."), which may
     * differ from it (a key shared with another id is pending whatever a policy says); empty when there is none.
     */
    public String besideAnswer() {
        return verdict == PolicyVerdict.NONE
                ? ""
                : "; " + rule + (verdict == PolicyVerdict.ACCEPT ? " accepts: " : " rejects: ") + reason;
    }

    @Override
    public String toString() {
        return "PolicyDecision[" + verdict + ", " + rule + ": " + reason + "]";
    }
}
