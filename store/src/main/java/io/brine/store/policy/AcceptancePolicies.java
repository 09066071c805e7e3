package io.brine.store.policy;

import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.files.TrustedPath;
import io.brine.protocol.ReservedIds;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.PolicyVerdict;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The configured policies in order: autoreject rules first (a reject wins), then any rule that accepts accepts;
 * otherwise the key waits for an admin. Policies are only asked about a key that is not accepted yet (unknown, or
 * pending with the same key): never for a rejected id, never to replace an accepted key ({@link Admission}).
 *
 * <p>{@link #fromConfig} builds what {@code master.yaml} configures, for the master and for
 * {@code brine-key policy check} alike, in this order: autoreject_file; then auto_accept, autosign_file, grants,
 * autosign_tokens, autosign_claims, inventory_file, and last autosign_policy (the costliest, asked only when nothing
 * cheaper accepted).
 */
public final class AcceptancePolicies implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AcceptancePolicies.class);
    private static final int MAX_REASON = 1000;

    /** Files under {@code cachedir}. */
    public static final String SPENT_GRANTS = "spent_grants";

    public static final String SPENT_TOKENS = "spent_tokens";

    private final List<AcceptancePolicy> rejecters;
    private final List<AcceptancePolicy> accepters;
    private final Optional<Classifications> classifications;
    /** Where keys a background run accepted are promoted; empty when nothing runs in the background. */
    private final Optional<KeyStore> keyStore;

    private final AuditLog audit;
    private final List<AutoCloseable> listening = new ArrayList<>();
    private volatile ReservedIds reserved = ReservedIds.DEFAULT;

    private AcceptancePolicies(
            List<AcceptancePolicy> rejecters,
            List<AcceptancePolicy> accepters,
            Optional<Classifications> classifications,
            Optional<KeyStore> keyStore,
            AuditLog audit) {
        this.rejecters = List.copyOf(rejecters);
        this.accepters = List.copyOf(accepters);
        this.classifications = classifications;
        this.keyStore = keyStore;
        this.audit = Objects.requireNonNull(audit, "audit");
    }

    /** {@code rejecters}, then {@code accepters}, without classifications or a store to promote keys in (tests). */
    public static AcceptancePolicies of(List<AcceptancePolicy> rejecters, List<AcceptancePolicy> accepters) {
        return new AcceptancePolicies(rejecters, accepters, Optional.empty(), Optional.empty(), AuditLog.none());
    }

    /**
     * {@code reserved_ids}: ids refused at auth before any policy or the key store is asked (nothing is filed). Not a
     * policy: no rule accepts them, not even {@code auto_accept}.
     */
    public ReservedIds reservedIds() {
        return reserved;
    }

    /** The same policies with {@code reserved} as {@link #reservedIds()} (tests, and wiring without master.yaml). */
    public AcceptancePolicies reserving(ReservedIds reserved) {
        this.reserved = Objects.requireNonNull(reserved, "reserved");
        return this;
    }

    /** No policy at all: every new key waits for an admin. */
    public static AcceptancePolicies manual() {
        return of(List.of(), List.of());
    }

    /** Salt's {@code auto_accept: true}: every new key is accepted. */
    public static AcceptancePolicy autoAccept() {
        return attempt -> new PolicyDecision(PolicyVerdict.ACCEPT, "auto_accept", "auto_accept is on");
    }

    /**
     * The policies {@code config} configures.
     *
     * @param keyStore the store that keys accepted in the background (autosign_policy) are promoted in, and whose
     *                 accepted keys classifications are bound to
     * @param audit    where promotions are audited; {@link AuditLog#none()} for none (brine-key's dry run promotes
     *                 nothing)
     */
    public static AcceptancePolicies fromConfig(MasterConfig config, KeyStore keyStore, Clock clock, AuditLog audit) {
        return fromConfig(
                config,
                keyStore,
                clock,
                audit,
                name -> SpentRecord.file(config.cachedir().resolve(name), clock));
    }

    /**
     * {@link #fromConfig(MasterConfig, KeyStore, Clock, AuditLog)} with the spent grants and tokens kept where
     * {@code spent} says ({@value #SPENT_GRANTS} and {@value #SPENT_TOKENS} name them): a cluster shares them.
     */
    public static AcceptancePolicies fromConfig(
            MasterConfig config, KeyStore keyStore, Clock clock, AuditLog audit, Function<String, SpentRecord> spent) {
        Objects.requireNonNull(keyStore, "keyStore");
        MasterConfig.Acceptance acceptance = config.acceptance();
        List<AcceptancePolicy> rejecters = new ArrayList<>();
        acceptance.autorejectFile().ifPresent(file -> rejecters.add(IdRulePolicy.autoreject(file, clock)));

        List<AcceptancePolicy> accepters = new ArrayList<>();
        if (acceptance.autoAccept()) {
            LOG.warn("auto_accept is on: EVERY minion that asks is accepted, including impostors. Use it only on a "
                    + "trusted, isolated network.");
            accepters.add(autoAccept());
        }
        acceptance.autosignFile().ifPresent(file -> accepters.add(IdRulePolicy.autosign(file, clock)));
        Classifications classifications =
                new Classifications(config.cachedir().resolve(Classifications.DIR_NAME), keyStore::acceptedKey);
        accepters.add(new GrantPolicy(
                new ProvisionerKeys(keyStore.pkiDir().resolve(ProvisionerKeys.DIR_NAME), clock),
                spent.apply(SPENT_GRANTS),
                classifications,
                clock));
        if (!acceptance.autosignTokens().isEmpty()) {
            accepters.add(new TokenPolicy(acceptance.autosignTokens(), spent.apply(SPENT_TOKENS)));
        }
        if (!acceptance.autosignClaims().isEmpty()) {
            LOG.info("autosign_claims is on: claims are unsigned, so it is only as strong as the network that keeps"
                    + " strangers away from the master");
            accepters.add(new ClaimsPolicy(acceptance.autosignClaims()));
        }
        acceptance
                .inventoryFile()
                .ifPresent(file -> accepters.add(new InventoryPolicy(file, acceptance.inventoryWindow(), clock)));
        ExecutablePolicy executable = null;
        if (acceptance.autosignPolicy().isPresent()) {
            executable = new ExecutablePolicy(
                    acceptance.autosignPolicy().get(),
                    acceptance.autosignPolicyTimeout(),
                    acceptance.autosignPolicyMaxConcurrent(),
                    clock);
            accepters.add(executable);
        }
        AcceptancePolicies policies = new AcceptancePolicies(
                rejecters, accepters, Optional.of(classifications), Optional.of(keyStore), audit);
        policies.reserved = acceptance.reserved();
        policies.listening.add(keyStore.addListener(change -> {
            // An accepted key deleted or rejected takes its classification (classes/ID.json) with it.
            if (change.from().filter(state -> state == KeyState.ACCEPTED).isPresent()
                    && change.to().filter(state -> state == KeyState.ACCEPTED).isEmpty()) {
                classifications.removeIfFor(change.id(), change.fingerprint());
            }
        }));
        if (executable != null) {
            executable.promoteWith(policies::promote);
            ExecutablePolicy forgetful = executable;
            // A delete, reject or new key ends what an earlier answer was about; an accept is what it led to.
            policies.listening.add(keyStore.addListener(change -> {
                if (change.to().filter(state -> state == KeyState.ACCEPTED).isEmpty()) {
                    forgetful.forget(change.id());
                }
            }));
        }
        return policies;
    }

    /**
     * The policy inputs {@code config} names that break the ownership rule ({@link TrustedPath}), one line each naming
     * the option, the file and the reason: each such policy is disabled (fails closed) while the problem stands. For
     * {@code brine-master --check-config} and {@code brine-key policy check}.
     */
    public static List<String> untrustedInputs(MasterConfig config, Path pkiDir) {
        TrustedPath trust = TrustedPath.forThisProcess();
        MasterConfig.Acceptance acceptance = config.acceptance();
        Map<String, Optional<Path>> inputs = new LinkedHashMap<>();
        inputs.put("autoreject_file", acceptance.autorejectFile());
        inputs.put("autosign_file", acceptance.autosignFile());
        inputs.put("grants (provisioner keys)", Optional.of(provisionersDir(pkiDir)));
        inputs.put(InventoryPolicy.RULE, acceptance.inventoryFile());
        inputs.put(ExecutablePolicy.RULE, acceptance.autosignPolicy());
        List<String> problems = new ArrayList<>();
        inputs.forEach((option, file) -> file.flatMap(trust::problem)
                .ifPresent(problem -> problems.add(
                        option + " " + file.get() + " is not trusted, the policy is disabled: " + problem)));
        return problems;
    }

    /** Decides about a key that is not accepted yet; logs a decision with its rule. */
    public PolicyDecision evaluate(AuthAttempt attempt) {
        return decide(attempt, false, null);
    }

    /**
     * Asks only what proves an id (grants and tokens), after the autoreject rules: for a key offered over a pending
     * key of the same id, which it may displace. Any other policy's yes would let a guess of the id win.
     */
    public PolicyDecision evaluateCredentials(AuthAttempt attempt) {
        return credentials(attempt, false, null);
    }

    /** What {@link #evaluateCredentials} would conclude and what it asked, without side effects (a dry run). */
    public Explanation explainCredentials(AuthAttempt attempt) {
        List<PolicyDecision> steps = new ArrayList<>();
        PolicyDecision decision = credentials(attempt, true, steps);
        return new Explanation(decision, steps);
    }

    private PolicyDecision credentials(AuthAttempt attempt, boolean dryRun, List<PolicyDecision> steps) {
        for (AcceptancePolicy policy : rejecters) {
            PolicyDecision reject = ask(policy, attempt, dryRun);
            if (steps != null) {
                steps.add(reject);
            }
            if (reject.verdict() == PolicyVerdict.REJECT) {
                return new PolicyDecision(PolicyVerdict.NONE, String.valueOf(policy), "autoreject matches");
            }
            Optional<PolicyDecision> held = held(policy);
            if (held.isPresent()) {
                return held.get();
            }
        }
        for (AcceptancePolicy policy : accepters) {
            if (policy instanceof GrantPolicy || policy instanceof TokenPolicy) {
                PolicyDecision decision = ask(policy, attempt, dryRun);
                if (steps != null) {
                    steps.add(decision);
                }
                if (decision.verdict() == PolicyVerdict.ACCEPT) {
                    log(attempt, decision, dryRun);
                    return decision;
                }
            }
        }
        return new PolicyDecision(PolicyVerdict.NONE, "none", "no grant or token accepts it");
    }

    /** What {@link #evaluate} would conclude and every policy it asked, without side effects (a dry run). */
    public Explanation explain(AuthAttempt attempt) {
        List<PolicyDecision> steps = new ArrayList<>();
        PolicyDecision decision = decide(attempt, true, steps);
        return new Explanation(decision, steps);
    }

    /** A dry run's answer: the decision and each policy's answer on the way, in order. */
    public record Explanation(PolicyDecision decision, List<PolicyDecision> steps) {
        public Explanation {
            steps = List.copyOf(steps);
        }
    }

    private PolicyDecision decide(AuthAttempt attempt, boolean dryRun, List<PolicyDecision> steps) {
        for (AcceptancePolicy policy : rejecters) {
            PolicyDecision decision = ask(policy, attempt, dryRun);
            if (steps != null) {
                steps.add(decision);
            }
            if (decision.verdict() == PolicyVerdict.REJECT) {
                log(attempt, decision, dryRun);
                return decision;
            }
            Optional<PolicyDecision> held = held(policy);
            if (held.isPresent()) {
                return held.get();
            }
        }
        StringBuilder reasons = new StringBuilder();
        for (AcceptancePolicy policy : accepters) {
            PolicyDecision decision = ask(policy, attempt, dryRun);
            if (steps != null) {
                steps.add(decision);
            }
            if (decision.verdict() == PolicyVerdict.ACCEPT) {
                log(attempt, decision, dryRun);
                return decision;
            }
            if (reasons.length() < MAX_REASON) {
                reasons.append(reasons.length() == 0 ? "" : "; ")
                        .append(decision.rule())
                        .append(": ")
                        .append(decision.reason());
            }
        }
        String reason = reasons.length() == 0
                ? "no acceptance policy is configured"
                : reasons.length() > MAX_REASON ? reasons.substring(0, MAX_REASON) + "..." : reasons.toString();
        LOG.debug("Minion {} ({}): no policy accepts: {}", attempt.id(), attempt.remoteAddress(), reason);
        return new PolicyDecision(PolicyVerdict.NONE, "none", reason);
    }

    /**
     * An autoreject file that cannot be used (untrusted, missing, unreadable...) fails closed: the keys it would
     * reject must not get in by another policy, and which those are is unknown, so every new key waits for an admin.
     */
    private static Optional<PolicyDecision> held(AcceptancePolicy rejecter) {
        if (rejecter instanceof IdRulePolicy rules) {
            return rules.problem()
                    .map(problem -> new PolicyDecision(
                            PolicyVerdict.NONE,
                            String.valueOf(rejecter),
                            problem + ": no policy accepts until it is fixed, every new key waits for an admin"));
        }
        return Optional.empty();
    }

    /** A policy that throws is a bug; it counts as "no" so that the key waits instead of getting in. */
    private static PolicyDecision ask(AcceptancePolicy policy, AuthAttempt attempt, boolean dryRun) {
        try {
            return dryRun ? policy.check(attempt) : policy.evaluate(attempt);
        } catch (RuntimeException e) {
            LOG.error("Bug: acceptance policy {} failed for {}; counted as no", policy, attempt.id(), e);
            return new PolicyDecision(PolicyVerdict.NONE, String.valueOf(policy), "failed: " + e);
        }
    }

    /**
     * The policy's verdict, at DEBUG: not the answer, which the key store gives (a key shared with another id is
     * pending whatever a policy says); the auth services log the answer given with this verdict beside it.
     */
    private static void log(AuthAttempt attempt, PolicyDecision decision, boolean dryRun) {
        if (!dryRun) {
            LOG.debug(
                    "Minion {} ({}): {} {}: {}",
                    attempt.id(),
                    attempt.remoteAddress(),
                    decision.rule(),
                    decision.verdict() == PolicyVerdict.ACCEPT ? "accepts" : "rejects",
                    decision.reason());
        }
    }

    /**
     * Accepts a pending key that a background run (autosign_policy) accepted, unless an autoreject rule matches it
     * by now or it is no longer the pending key of its id.
     */
    void promote(AuthAttempt attempt, PolicyDecision decision) {
        if (keyStore.isEmpty()) {
            return;
        }
        KeyStore keyStore = this.keyStore.get();
        for (AcceptancePolicy policy : rejecters) {
            PolicyDecision reject = ask(policy, attempt, false);
            if (reject.verdict() == PolicyVerdict.REJECT) {
                LOG.info(
                        "Minion {}: not promoted although {} accepts it: {} rejects it",
                        attempt.id(),
                        decision.rule(),
                        reject.rule());
                return;
            }
            if (held(policy).isPresent()) {
                LOG.info(
                        "Minion {}: not promoted although {} accepts it: {} cannot be used",
                        attempt.id(),
                        decision.rule(),
                        policy);
                return;
            }
        }
        try {
            KeyLookup lookup = keyStore.lookup(attempt.id(), attempt.publicKey());
            if (lookup != KeyLookup.PENDING_SAME) {
                LOG.debug(
                        "Minion {}: {} accepts it; the key is {} now, so it is accepted at its next request",
                        attempt.id(),
                        decision.rule(),
                        lookup);
                return;
            }
            KeyDecision result = keyStore.offer(attempt.id(), attempt.publicKey(), PolicyVerdict.ACCEPT);
            String outcome = result.getClass().getSimpleName().toLowerCase(Locale.ROOT);
            LOG.info(
                    "Minion {} ({}): pending key {} by {}: {}",
                    attempt.id(),
                    attempt.remoteAddress(),
                    outcome,
                    decision.rule(),
                    decision.reason());
            audit.record(AuditEvent.builder("policy-" + outcome, KeyStore.MASTER_ACTOR)
                    .id(attempt.id())
                    .fingerprint(attempt.fingerprint())
                    .source(attempt.remoteAddress())
                    .reason(result.reason() + " [rule " + decision.rule() + ": " + decision.reason() + "]")
                    .build());
        } catch (RuntimeException e) {
            LOG.error(
                    "Minion {}: cannot promote the key that {} accepted: {}",
                    attempt.id(),
                    decision.rule(),
                    e.toString());
        }
    }

    /** The classifications grants gave minions, for targeting; empty when built without a config. */
    public Optional<Classifications> classifications() {
        return classifications;
    }

    /** The classification of {@code id}'s accepted key, or an empty map. */
    public Map<String, String> classification(String id) {
        return classifications.map(c -> c.of(id)).orElse(Map.of());
    }

    /** The policies in the order they are asked, for logs. */
    public List<AcceptancePolicy> all() {
        List<AcceptancePolicy> all = new ArrayList<>(rejecters);
        all.addAll(accepters);
        return all;
    }

    /** Stops what runs in the background (autosign_policy runs are killed). */
    @Override
    public void close() {
        for (AutoCloseable listener : listening) {
            try {
                listener.close();
            } catch (Exception e) {
                LOG.debug("Removing a key store listener failed", e);
            }
        }
        for (AcceptancePolicy policy : all()) {
            if (policy instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    LOG.debug("Closing {} failed", policy, e);
                }
            }
        }
    }

    /** Where grants' provisioner keys live under a pki dir. */
    public static Path provisionersDir(Path pkiDir) {
        return pkiDir.resolve(ProvisionerKeys.DIR_NAME);
    }
}
