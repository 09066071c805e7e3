package io.brine.client.cli;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code brine jobs list|show}: the job cache, read through the master. The connection options and {@code --out} are
 * brine's own (inherited: before or after {@code jobs}).
 */
@Command(
        name = "jobs",
        description = "Read the job cache.",
        mixinStandardHelpOptions = true,
        subcommands = {Jobs.ListJobs.class, Jobs.Show.class})
final class Jobs {

    @ParentCommand
    BrineCli root;

    @Command(
            name = "list",
            description = "List the jobs in the job cache, oldest first.",
            mixinStandardHelpOptions = true)
    static final class ListJobs implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @ParentCommand
        Jobs jobs;

        @Option(
                names = "--limit",
                defaultValue = "50",
                description = "At most this many of the newest jobs "
                        + "(default: ${DEFAULT-VALUE}; 0: all the master lists).")
        int limit;

        @Override
        public Integer call() throws Exception {
            PrintWriter stdout = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            Outputs.Format out = jobs.root.out;
            try (BrineClient client = jobs.root.connection.connect(err)) {
                if (client == null) {
                    return 2;
                }
                List<Map<String, Object>> listed = client.jobs(limit);
                if (!out.streams()) {
                    stdout.println(
                            Outputs.structured(out, Map.of("jobs", listed)).strip());
                    return 0;
                }
                for (Map<String, Object> job : listed) {
                    stdout.printf(
                            "%s  %s  %-10s %-20s %s %s (%d minions)%n",
                            job.get("jid"),
                            job.get("time"),
                            job.get("publisher"),
                            job.get("fun"),
                            job.get("target_type"),
                            job.get("target"),
                            ((List<?>) job.getOrDefault("minions", List.of())).size());
                }
                return 0;
            } catch (ClientException e) {
                err.println("brine: " + e.getMessage());
                return 2;
            }
        }
    }

    @Command(
            name = "show",
            description = {
                "Show one job: its load, targeted minions, returns, and each minion "
                        + "that has not returned as running (the job was delivered to it), not confirmed (its master has not "
                        + "said whether it delivered the job, or no longer knows) or unreachable (no master could deliver it)."
            },
            mixinStandardHelpOptions = true)
    static final class Show implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @ParentCommand
        Jobs jobs;

        @Parameters(paramLabel = "JID")
        String jid;

        @Override
        @SuppressWarnings("unchecked")
        public Integer call() throws Exception {
            PrintWriter stdout = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            Outputs.Format out = jobs.root.out;
            try (BrineClient client = jobs.root.connection.connect(err)) {
                if (client == null) {
                    return 2;
                }
                Map<String, Object> job;
                try {
                    job = client.job(jid);
                } catch (ClientException e) {
                    err.println("brine: " + e.getMessage());
                    return 1;
                }
                if (!out.streams()) {
                    stdout.println(Outputs.structured(out, job).strip());
                    return 0;
                }
                stdout.printf(
                        "jid:       %s%ntime:      %s%npublisher: %s%nfunction:  %s %s%ntarget:    %s %s%n"
                                + "minions:   %s%n",
                        job.get("jid"),
                        job.get("time"),
                        job.get("publisher"),
                        job.get("fun"),
                        job.get("args"),
                        job.get("target_type"),
                        job.get("target"),
                        String.join(", ", (List<String>) job.getOrDefault("minions", List.of())));
                Map<String, Object> returns = (Map<String, Object>) job.getOrDefault("returns", Map.of());
                for (Map.Entry<String, Object> ret : returns.entrySet()) {
                    stdout.print(Outputs.one(out, ret.getKey(), ((Map<String, Object>) ret.getValue()).get("return")));
                }
                // Each target that has not returned, by what the master knows of its delivery.
                for (String[] line : new String[][] {
                    {"running", "running:       "},
                    {"not_confirmed", "not confirmed: "},
                    {"unreachable", "unreachable:   "}
                }) {
                    List<String> ids = (List<String>) job.getOrDefault(line[0], List.of());
                    if (!ids.isEmpty()) {
                        stdout.println(line[1] + String.join(", ", ids));
                    }
                }
                return 0;
            } catch (ClientException e) {
                err.println("brine: " + e.getMessage());
                return 2;
            }
        }
    }
}
