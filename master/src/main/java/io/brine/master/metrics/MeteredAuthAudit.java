package io.brine.master.metrics;

import io.brine.master.auth.AuthAudit;
import io.brine.store.keys.KeyDecision;
import io.brine.store.policy.PolicyDecision;

/** Counts each auth decision by outcome and rule, then hands it on to the audit. */
public final class MeteredAuthAudit implements AuthAudit {

    private final AuthAudit next;
    private final MasterMetrics metrics;

    public MeteredAuthAudit(AuthAudit next, MasterMetrics metrics) {
        this.next = next;
        this.metrics = metrics;
    }

    @Override
    public void refused(String id, String remoteAddress, String fingerprint, String reason) {
        metrics.authAnswered(id, "refused", "none");
        next.refused(id, remoteAddress, fingerprint, reason);
    }

    @Override
    public void decided(
            String id, String remoteAddress, String fingerprint, KeyDecision decision, PolicyDecision policy) {
        metrics.authAnswered(id, MasterMetrics.outcome(decision), policy.rule());
        next.decided(id, remoteAddress, fingerprint, decision, policy);
    }
}
