package io.brine.client.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.protocol.message.SessionMessage;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.time.Duration;
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
@Command(
        name = "events",
        mixinStandardHelpOptions = true,
        description = {
            "Prints the master's events as they "
                    + "happen, one a line, until interrupted: auth decisions (brine/auth/OUTCOME), key changes (brine/key/STATE), "
                    + "job publications (brine/job/JID/new), returns (brine/job/JID/ret/ID) and publish key rotations "
                    + "(brine/key/rotated).",
            "A publisher with a publisher_acl sees only events about minions its targets "
                    + "cover, and a job's publication and returns only when its targets cover every minion of the job and its "
                    + "functions the job's function.",
            "--out text prints TAG then the data as JSON; --out json one object a line: tag, time, data.",
            "When the master restarts or the connection drops once it was connected, it says so on stderr and connects again (after 1 s, then "
                    + "twice as long each time, up to 30 s), and says so when it has the master again; events in between are "
                    + "not replayed. With --no-reconnect it exits 2 instead."
        },
        footer = {
            "",
            "Examples:",
            "  brine events",
            "  brine events --tag 'brine/job/*' --out json",
            "  brine events --no-reconnect"
        })
final class EventsCommand implements Callable<Integer> {

    /** Compact: one event a line, for jq and log shippers. */
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandLine.Model.CommandSpec spec;
    /** The connection options and {@code --out} are the root command's, inherited (before or after "events"). */
    @ParentCommand
    BrineCli root;

    @Option(
            names = "--tag",
            paramLabel = "GLOB",
            defaultValue = "*",
            description = "Only events whose tag matches GLOB (default: every event).")
    String tag;

    @Option(
            names = "--no-reconnect",
            description = "Exit (code 2) when the master is lost instead of connecting again.")
    boolean noReconnect;

    /** The first wait before connecting again, doubled after each failed attempt up to {@link #MAX_BACKOFF}. */
    static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);

    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    @Override
    public Integer call() {
        PrintWriter stdout = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Outputs.Format out = root.out;
        String lost = null; // why the master was lost, while it is
        Duration backoff = FIRST_BACKOFF;
        boolean connected = false; // once: a master that never answered is a mistake to say at once, not to wait for
        while (true) {
            try (BrineClient client = root.connection.connect(err)) {
                if (client == null) {
                    return 2;
                }
                connected = true;
                if (lost != null) {
                    err.println("brine: connected to the master again; events resumed (those in between are not "
                            + "replayed)");
                    err.flush();
                    lost = null;
                    backoff = FIRST_BACKOFF;
                }
                client.events(tag, event -> print(stdout, out, event));
                return 0; // standard output is gone (a closed pipe)
            } catch (ClientException.Untrusted e) {
                err.println("brine: " + e.getMessage());
                return 2;
            } catch (ClientException | UncheckedIOException e) {
                if (noReconnect || !connected) {
                    err.println("brine: " + e.getMessage());
                    return 2;
                }
                if (lost == null) {
                    lost = e.getMessage();
                    err.println("brine: lost the master (" + lost + "); connecting again until it answers "
                            + "(--no-reconnect to exit instead)");
                    err.flush();
                }
            }
            try {
                Thread.sleep(backoff.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return 130;
            }
            backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
        }
    }

    /** Prints one event; false once standard output is gone. */
    private static boolean print(PrintWriter stdout, Outputs.Format out, SessionMessage.Event event) {
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
    }

    private static String line(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
