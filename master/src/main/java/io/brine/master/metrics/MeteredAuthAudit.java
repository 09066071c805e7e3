package io.brine.master.metrics;

import io.brine.master.auth.AuthAudit;
import io.brine.master.events.EventStream;
import io.brine.store.keys.KeyDecision;
import io.brine.store.policy.PolicyDecision;

/** Counts each auth decision by outcome and rule, tells the event stream, then hands it on to the audit. */
public final class MeteredAuthAudit implements AuthAudit {

    private final AuthAudit next;
    private final MasterMetrics metrics;
    private final EventStream events;

    public MeteredAuthAudit(AuthAudit next, MasterMetrics metrics, EventStream events) {
        this.next = next;
        this.metrics = metrics;
        this.events = events;
    }

    @Override
    public void refused(String id, String remoteAddress, String fingerprint, String reason) {
        metrics.authAnswered("refused", "none");
        events.authAnswered(id, "refused", "none");
        next.refused(id, remoteAddress, fingerprint, reason);
    }

    @Override
    public void decided(
            String id, String remoteAddress, String fingerprint, KeyDecision decision, PolicyDecision policy) {
        String outcome = MasterMetrics.outcome(decision);
        metrics.authAnswered(outcome, policy.rule());
        events.authAnswered(id, outcome, policy.rule());
        next.decided(id, remoteAddress, fingerprint, decision, policy);
    }
}
