package io.brine.store.policy;

import io.brine.protocol.MinionIds;
import io.brine.store.keys.PolicyVerdict;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code autosign_file} (accepts) or {@code autoreject_file} (rejects): a new key whose id matches an entry of the
 * file ({@link IdRules}). The file is re-read when it changes and ignored while group or others can write it.
 */
public final class IdRulePolicy implements AcceptancePolicy {

    static final int MAX_BYTES = 4 * 1024 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(IdRulePolicy.class);

    private final String option;
    private final PolicyVerdict verdict;
    private final WatchedFile<IdRules> file;

    /**
     * @param option  {@code autosign_file} or {@code autoreject_file}, for log lines and the decision's rule
     * @param verdict what a match concludes
     */
    public IdRulePolicy(String option, Path file, PolicyVerdict verdict, Clock clock) {
        this.option = option;
        this.verdict = verdict;
        this.file = new WatchedFile<>(option, file, clock, this::parse, IdRules.EMPTY, MAX_BYTES);
        this.file.current(); // read now, so that problems (and a '*') are reported at start
    }

    public static IdRulePolicy autosign(Path file, Clock clock) {
        return new IdRulePolicy("autosign_file", file, PolicyVerdict.ACCEPT, clock);
    }

    public static IdRulePolicy autoreject(Path file, Clock clock) {
        return new IdRulePolicy("autoreject_file", file, PolicyVerdict.REJECT, clock);
    }

    private IdRules parse(Path path, byte[] content) {
        IdRules rules = IdRules.parse(new String(content, StandardCharsets.UTF_8));
        for (IdRules.Problem problem : rules.problems()) {
            LOG.warn(
                    "{} {}:{}: ignored line {}: {}",
                    option,
                    path,
                    problem.line(),
                    MinionIds.printable(problem.text()),
                    problem.reason());
        }
        if (rules.matchesEverything()) {
            if (verdict == PolicyVerdict.ACCEPT) {
                LOG.warn(
                        "{} {} has '*': EVERY minion that asks is accepted, including impostors. Use it only on a"
                                + " trusted, isolated network.",
                        option,
                        path);
            } else {
                LOG.warn("{} {} has '*': every new key is rejected", option, path);
            }
        }
        return rules;
    }

    @Override
    public PolicyDecision evaluate(AuthAttempt attempt) {
        WatchedFile.Loaded<IdRules> loaded = file.current();
        if (loaded.problem().isPresent()) {
            return new PolicyDecision(
                    PolicyVerdict.NONE, option, loaded.problem().get());
        }
        Optional<IdRules.Entry> entry = loaded.value().match(attempt.id());
        if (entry.isEmpty()) {
            return new PolicyDecision(
                    PolicyVerdict.NONE, option, "no entry of " + file.file() + " matches " + attempt.id());
        }
        return new PolicyDecision(
                verdict,
                option + " " + file.file() + ":" + entry.get().line() + " "
                        + entry.get().text(),
                attempt.id() + " matches " + entry.get().text());
    }

    /** Why the file is not used now (untrusted, missing, unreadable...), or empty while it is. */
    public Optional<String> problem() {
        return file.current().problem();
    }

    @Override
    public String toString() {
        return option + " " + file.file();
    }
}
