package io.brine.master.auth;

import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyDecision;
import io.brine.store.policy.PolicyDecision;
import java.util.Locale;

/**
 * Auth decisions as audit lines: one per decision, with the rule that made it; a pending answer that repeats the
 * last one given to its id (the same key, the same reason) is not written again ({@link RepeatedPending}).
 */
public final class AuditedAuth implements AuthAudit {

    private final AuditLog log;
    private final RepeatedPending pendingLines = new RepeatedPending(RepeatedPending.DEFAULT_CAPACITY);

    public AuditedAuth(AuditLog log) {
        this.log = log;
    }

    @Override
    public void refused(String id, String remoteAddress, String fingerprint, String reason) {
        log.record(AuditEvent.builder("auth-refused", "master")
                .id(id)
                .fingerprint(fingerprint)
                .reason(reason)
                .source(remoteAddress)
                .build());
    }

    @Override
    public void decided(
            String id, String remoteAddress, String fingerprint, KeyDecision decision, PolicyDecision policy) {
        if (decision instanceof KeyDecision.Pending pending) {
            if (pendingLines.repeats(id, fingerprint, pending.reason())) {
                return; // the same key, still pending for the same reason: recorded once (RepeatedPending)
            }
        } else {
            pendingLines.forget(id);
        }
        String outcome = decision.getClass().getSimpleName().toLowerCase(Locale.ROOT);
        log.record(AuditEvent.builder("auth-" + outcome, "master")
                .id(id)
                .fingerprint(fingerprint)
                .reason(decision.reason() + " [rule " + policy.rule() + ": " + policy.reason() + "]")
                .source(remoteAddress)
                .build());
    }
}
