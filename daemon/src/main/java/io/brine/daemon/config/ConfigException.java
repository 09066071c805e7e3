package io.brine.daemon.config;

import java.util.List;

/**
 * A configuration file that brine refuses, with every problem found in it, not just the first: an admin fixes the
 * whole file in one go. The message is a complete report, one problem a line, meant to be printed as it is before
 * the daemon exits with status 2.
 */
public final class ConfigException extends Exception {

    private final transient List<ConfigProblem> problems;

    public ConfigException(List<ConfigProblem> problems) {
        super(report(problems));
        this.problems = List.copyOf(problems);
    }

    public List<ConfigProblem> problems() {
        return problems;
    }

    private static String report(List<ConfigProblem> problems) {
        if (problems.isEmpty()) {
            throw new IllegalArgumentException("a ConfigException needs at least one problem");
        }
        StringBuilder out = new StringBuilder("invalid configuration (")
                .append(problems.size())
                .append(problems.size() == 1 ? " problem):" : " problems):");
        for (ConfigProblem problem : problems) {
            out.append(System.lineSeparator()).append("  ").append(problem);
        }
        return out.toString();
    }
}
