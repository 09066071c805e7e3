package io.brine.client.cli;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.protocol.targeting.Nodegroups;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code brine manage up|down|status [TARGET]}: Salt's {@code salt-run manage.up}, {@code manage.down} and
 * {@code manage.status}. As Salt's runner does, it publishes {@code test.ping} to the accepted minions TARGET selects
 * and waits for their returns: up are those that returned, down the others (including those the master has no
 * connection to). The connection options and {@code --out} are brine's own.
 */
@Command(
        name = "manage",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Which accepted minions answer now, as Salt's salt-run manage.up, manage.down and"
                    + " manage.status: publishes test.ping to TARGET (a glob on ids, default every accepted minion) and"
                    + " waits for the returns (--timeout).",
            "up: the ids that answered; down: those that did not;" + " status: both.",
            "Exit codes: 0 every targeted minion answered, 1 some did not (or nothing matched), 2 usage or"
                    + " configuration error, or the master refused the job."
        })
final class Manage implements Callable<Integer> {

    /** Which of Salt's manage runners. */
    enum Report {
        up,
        down,
        status
    }

    @ParentCommand
    BrineCli root;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "up|down|status", description = "What to print.")
    Report report;

    @Parameters(
            index = "1",
            arity = "0..1",
            paramLabel = "TARGET",
            defaultValue = "*",
            description = "A glob on minion ids (default: ${DEFAULT-VALUE}).")
    String target;

    @Option(
            names = {"-t", "--timeout"},
            paramLabel = "SECONDS",
            defaultValue = "5",
            description = "Seconds to wait for the minions' answers (default: ${DEFAULT-VALUE}).")
    int timeout;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Optional<String> badTarget = Nodegroups.syntaxProblem("glob", target);
        if (badTarget.isPresent()) {
            err.println("brine: bad target: " + badTarget.get());
            return 2;
        }
        if (timeout < 1) {
            err.println("brine: --timeout must be 1 second or more, not " + timeout);
            return 2;
        }
        try (BrineClient client = root.connection.connect(err)) {
            if (client == null) {
                return 2;
            }
            BrineClient.Published ping;
            try {
                ping = client.publish(new BrineClient.Job("glob", target, "test.ping", List.of(), Map.of(), 0));
            } catch (ClientException e) {
                err.println("brine: the master refused the job: " + e.getMessage());
                return 2;
            }
            List<String> reached = new ArrayList<>(ping.minions());
            reached.removeAll(ping.unreachable());
            TreeSet<String> up =
                    new TreeSet<>(client.awaitReturns(ping.jid(), reached, Duration.ofSeconds(timeout), event -> {})
                            .keySet());
            TreeSet<String> down = new TreeSet<>(ping.minions());
            down.removeAll(up);
            Object document = switch (report) {
                case up -> List.copyOf(up);
                case down -> List.copyOf(down);
                case status -> {
                    Map<String, Object> both = new LinkedHashMap<>();
                    both.put("down", List.copyOf(down));
                    both.put("up", List.copyOf(up));
                    yield both;
                }
            };
            String printed = Outputs.structured(root.out, document);
            out.print(printed.isEmpty() || printed.endsWith("\n") ? printed : printed + "\n");
            out.flush();
            if (ping.minions().isEmpty()) {
                err.println("No minions matched the target (jid " + ping.jid() + ").");
                return 1;
            }
            return down.isEmpty() ? 0 : 1;
        } catch (ClientException e) {
            err.println("brine: " + e.getMessage());
            return 2;
        }
    }
}
