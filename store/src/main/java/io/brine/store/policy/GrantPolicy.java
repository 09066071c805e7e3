package io.brine.store.policy;

import io.brine.daemon.WarnInterval;
import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.grant.GrantException;
import io.brine.protocol.grant.Grants;
import io.brine.protocol.grant.ProvisioningGrant;
import io.brine.store.keys.PolicyVerdict;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Signed provisioning grants (PROTOCOL.md, "Provisioning grants"): a new key is accepted when the minion presents a
 * grant that a trusted provisioner ({@code pki_dir/provisioners/*.pub}) signed for this id and this key, that has
 * not expired, and that was never used. Checks, in order: well-formed, signer trusted, signature, id, key
 * fingerprint, not after (no tolerance), not before (the allowed clock skew is tolerated here only), single use.
 * The grant's classification is then stored with the minion ({@link Classifications}).
 */
public final class GrantPolicy implements AcceptancePolicy {

    public static final String RULE = "grant";

    private static final Logger LOG = LoggerFactory.getLogger(GrantPolicy.class);

    private final ProvisionerKeys provisioners;
    private final SpentRecord spent;
    private final Classifications classifications;
    private final Clock clock;
    /** Grants out of their validity window: an admin's clock or provisioning problem, said once a minute. */
    private final WarnInterval outOfWindow;
    /** Grants that fail on trust or binding (forged, altered, for another id or key) or were used before. */
    private final WarnInterval refused;

    GrantPolicy(ProvisionerKeys provisioners, SpentRecord spent, Classifications classifications, Clock clock) {
        this.provisioners = provisioners;
        this.spent = spent;
        this.classifications = classifications;
        this.clock = clock;
        this.outOfWindow = new WarnInterval(clock, WARN_INTERVAL_MS);
        this.refused = new WarnInterval(clock, WARN_INTERVAL_MS);
    }

    /** What a stranger can make this policy say at will is said at most once a minute per kind, with a count. */
    static final long WARN_INTERVAL_MS = 60_000;

    @Override
    public PolicyDecision evaluate(AuthAttempt attempt) {
        return decide(attempt, false);
    }

    @Override
    public PolicyDecision check(AuthAttempt attempt) {
        return decide(attempt, true);
    }

    private PolicyDecision decide(AuthAttempt attempt, boolean dryRun) {
        if (attempt.grant() == null) {
            return none("no grant presented");
        }
        Grants.SignedGrant signed;
        try {
            signed = Grants.parse(attempt.grant());
        } catch (GrantException e) {
            return suspicious(attempt, dryRun, "the grant is malformed: " + e.getMessage());
        }
        ProvisioningGrant grant = signed.grant();
        Optional<ProvisionerKeys.Provisioner> provisioner = provisioners.byFingerprint(signed.signer());
        if (provisioner.isEmpty()) {
            return suspicious(
                    attempt,
                    dryRun,
                    "the grant is signed by " + signed.signer() + ", not a trusted" + " provisioner ("
                            + provisioners.size() + " trusted in " + provisioners.dir() + ")");
        }
        String rule = RULE + " by provisioner " + provisioner.get().name();
        if (!signed.verify(provisioner.get().key())) {
            return suspicious(
                    attempt,
                    dryRun,
                    "the grant's signature does not verify with provisioner "
                            + provisioner.get().name() + "'s key: it was altered or forged");
        }
        if (!grant.id().equals(attempt.id())) {
            return suspicious(attempt, dryRun, "the grant is for id " + grant.id() + ", not " + attempt.id());
        }
        if (!grant.fingerprint().equals(attempt.fingerprint())) {
            return suspicious(
                    attempt,
                    dryRun,
                    "the grant is for the key " + grant.fingerprint() + ", not the offered " + attempt.fingerprint());
        }
        Instant now = clock.instant();
        if (!now.isBefore(grant.notAfter())) {
            return outOfWindow(attempt, dryRun, "the grant expired at " + grant.notAfter());
        }
        if (grant.notBefore().isAfter(now.plus(Timestamps.MAX_CLOCK_SKEW))) {
            return outOfWindow(
                    attempt,
                    dryRun,
                    "the grant is not valid before " + grant.notBefore()
                            + " (more than the allowed clock skew ahead of the master's clock)");
        }
        String key = signed.digest();
        String valid = "grant for " + grant.id() + " and its key, valid until " + grant.notAfter()
                + (grant.classification().isEmpty() ? "" : ", class " + grant.classification());
        try {
            if (dryRun) {
                return spent.isSpent(key)
                        ? none("the grant was already used")
                        : new PolicyDecision(PolicyVerdict.ACCEPT, rule, valid + " (not spent by a dry run)");
            }
            if (!spent.spend(key, grant.notAfter())) {
                return suspicious(attempt, false, "the grant was already used");
            }
        } catch (IOException e) {
            LOG.error("Cannot record the use of a grant in {}: {}", spent, e.getMessage());
            return none("cannot check or record the grant's use: " + e.getMessage());
        }
        try {
            classifications.put(grant.id(), grant.fingerprint(), grant.classification());
        } catch (IOException e) {
            spent.unspend(key);
            LOG.error("Minion {}: cannot store the grant's classification: {}", attempt.id(), e.getMessage());
            return none("cannot store the grant's classification: " + e.getMessage());
        }
        return new PolicyDecision(PolicyVerdict.ACCEPT, rule, valid + "; now spent", () -> spent.unspend(key));
    }

    private static PolicyDecision none(String reason) {
        return new PolicyDecision(PolicyVerdict.NONE, RULE, reason);
    }

    /**
     * A grant that fails on trust or binding, or comes again, is a sign of tampering or a mix-up: worth a warning
     * (throttled: anybody can present one; escaped: the reason quotes the grant).
     */
    private PolicyDecision suspicious(AuthAttempt attempt, boolean dryRun, String reason) {
        return warned(refused, attempt, dryRun, reason);
    }

    /** A grant expired or not valid yet: the minion waits for an admin, who should hear why. */
    private PolicyDecision outOfWindow(AuthAttempt attempt, boolean dryRun, String reason) {
        return warned(outOfWindow, attempt, dryRun, reason);
    }

    private static PolicyDecision warned(WarnInterval interval, AuthAttempt attempt, boolean dryRun, String reason) {
        if (!dryRun) {
            // The id is checked before any policy is asked, and what a reason quotes of the grant at its parse.
            interval.warn(
                    LOG,
                    "Minion {} ({}): grant refused: {}; the key waits for an admin",
                    attempt.id(),
                    attempt.remoteAddress(),
                    reason);
        }
        return none(reason);
    }

    @Override
    public String toString() {
        return RULE + " (" + provisioners.dir() + ")";
    }
}
