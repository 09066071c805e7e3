package io.brine.store.policy;

import io.brine.daemon.config.MasterConfig.AutosignToken;
import io.brine.protocol.targeting.Glob;
import io.brine.store.keys.PolicyVerdict;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code autosign_tokens}: a new key is accepted when the minion presents a token matching the salted hash of an
 * entry whose {@code match} glob matches its id. A single-use entry is spent by its first acceptance, on disk, so it
 * stays spent across restarts; it is given back when the key store did not accept after all (a limit was reached).
 * The token itself is never logged.
 */
public final class TokenPolicy implements AcceptancePolicy {

    public static final String RULE = "autosign_tokens";

    private static final Logger LOG = LoggerFactory.getLogger(TokenPolicy.class);

    private record Entry(int index, AutosignToken token, Glob match) {}

    private final List<Entry> entries;
    private final SpentRecord spent;

    TokenPolicy(List<AutosignToken> tokens, SpentRecord spent) {
        this.entries = IntStream.range(0, tokens.size())
                .mapToObj(i ->
                        new Entry(i, tokens.get(i), Glob.compile(tokens.get(i).match())))
                .toList();
        this.spent = spent;
    }

    @Override
    public PolicyDecision evaluate(AuthAttempt attempt) {
        return decide(attempt, false);
    }

    @Override
    public PolicyDecision check(AuthAttempt attempt) {
        return decide(attempt, true);
    }

    private PolicyDecision decide(AuthAttempt attempt, boolean dryRun) {
        if (attempt.token() == null) {
            return new PolicyDecision(PolicyVerdict.NONE, RULE, "no token presented");
        }
        boolean anyForId = false;
        for (Entry entry : entries) {
            if (!entry.match().matches(attempt.id())) {
                continue;
            }
            anyForId = true;
            if (!TokenHashes.matches(entry.token(), attempt.token())) {
                continue;
            }
            String rule =
                    RULE + "[" + entry.index() + "] (match " + entry.token().match() + ")";
            if (!entry.token().singleUse()) {
                return new PolicyDecision(PolicyVerdict.ACCEPT, rule, "the token matches");
            }
            String key = entry.token().sha256();
            try {
                if (dryRun) {
                    return spent.isSpent(key)
                            ? new PolicyDecision(PolicyVerdict.NONE, rule, "the single-use token was already used")
                            : new PolicyDecision(
                                    PolicyVerdict.ACCEPT,
                                    rule,
                                    "the single-use token matches (not" + " spent by a dry run)");
                }
                if (!spent.spend(key, Instant.MAX)) {
                    LOG.warn(
                            "Minion {} ({}): presented the single-use token of {}, already used",
                            attempt.id(),
                            attempt.remoteAddress(),
                            rule);
                    return new PolicyDecision(PolicyVerdict.NONE, rule, "the single-use token was already used");
                }
            } catch (IOException e) {
                LOG.error("Cannot record the use of a single-use token in {}: {}", spent, e.getMessage());
                return new PolicyDecision(
                        PolicyVerdict.NONE, rule, "cannot check or record the token's use: " + e.getMessage());
            }
            return new PolicyDecision(
                    PolicyVerdict.ACCEPT, rule, "the single-use token matches; now spent", () -> spent.unspend(key));
        }
        return new PolicyDecision(
                PolicyVerdict.NONE,
                RULE,
                anyForId ? "the token matches no entry for this id" : "no entry matches this id");
    }

    @Override
    public String toString() {
        return RULE + " (" + entries.size() + " entries)";
    }
}
