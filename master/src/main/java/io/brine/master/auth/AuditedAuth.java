package io.brine.master.auth;

import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyDecision;
import io.brine.store.policy.PolicyDecision;

/** Auth decisions as audit lines: one per decision, with the rule that made it. */
public final class AuditedAuth implements AuthAudit {

    private final AuditLog log;

    public AuditedAuth(AuditLog log) {
        this.log = log;
    }

    @Override
    public void refused(String id, String remoteAddress, String fingerprint, String reason) {
        log.record(AuditEvent.builder("auth-refused", "master").id(id).fingerprint(fingerprint).reason(reason)
                .source(remoteAddress).build());
    }

    @Override
    public void decided(String id, String remoteAddress, String fingerprint, KeyDecision decision,
            PolicyDecision policy) {
        String outcome = decision.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT);
        log.record(AuditEvent.builder("auth-" + outcome, "master").id(id).fingerprint(fingerprint)
                .reason(decision.reason() + " [rule " + policy.rule() + ": " + policy.reason() + "]")
                .source(remoteAddress).build());
    }
}
