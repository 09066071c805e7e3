package io.brine.client.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code brine events}: the master's events as they happen (Salt's {@code salt-run state.event}). */
@Command(name = "events", mixinStandardHelpOptions = true, description = {"Prints the master's events as they "
        + "happen, one a line, until interrupted: auth decisions (brine/auth/OUTCOME), key changes (brine/key/STATE), "
        + "job publications (brine/job/JID/new), returns (brine/job/JID/ret/ID) and publish key rotations "
        + "(brine/key/rotated).", "A publisher with a publisher_acl sees only events about minions its targets "
        + "cover, and a job's publication and returns only when its targets cover every minion of the job and its "
        + "functions the job's function.", "--out text prints TAG then the data as JSON; --out json one object a line: tag, time, data."},
        footer = {"", "Examples:", "  brine events", "  brine events --tag 'brine/job/*' --out json"})
final class EventsCommand implements Callable<Integer> {

    /** Compact: one event a line, for jq and log shippers. */
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandLine.Model.CommandSpec spec;
    /** The connection options and {@code --out} are the root command's, inherited (before or after "events"). */
    @ParentCommand
    BrineCli root;
    @Option(names = "--tag", paramLabel = "GLOB", defaultValue = "*",
            description = "Only events whose tag matches GLOB (default: every event).")
    String tag;

    @Override
    public Integer call() {
        PrintWriter stdout = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Outputs.Format out = root.out;
        try (BrineClient client = root.connection.connect(err)) {
            if (client == null) {
                return 2;
            }
            client.events(tag, event -> {
                if (out.streams()) {
                    stdout.println(event.tag() + "\t" + line(event.data()));
                } else {
                    Map<String, Object> line = new LinkedHashMap<>();
                    line.put("tag", event.tag());
                    line.put("time", Instant.ofEpochMilli(event.timeMs()).toString());
                    line.put("data", event.data());
                    stdout.println(line(line));
                }
                stdout.flush();
                return !stdout.checkError();
            });
            return 0;
        } catch (ClientException | UncheckedIOException e) {
            err.println("brine: " + e.getMessage());
            return 2;
        }
    }

    private static String line(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
