package io.brine.master.auth;

import io.brine.store.keys.KeyDecision;
import io.brine.store.policy.PolicyDecision;

/** Where auth decisions go besides the log: one audit line each. */
public interface AuthAudit {

    /** The request was refused before a key decision (bad key, bad signature, clock skew). */
    void refused(String id, String remoteAddress, String fingerprint, String reason);

    /** The key store decided. */
    void decided(String id, String remoteAddress, String fingerprint, KeyDecision decision, PolicyDecision policy);
}
