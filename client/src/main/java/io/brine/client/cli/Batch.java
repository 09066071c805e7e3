package io.brine.client.cli;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.protocol.BatchSize;
import io.brine.protocol.message.SessionMessage;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Salt's batch mode, {@code brine -b N|N%}: as Salt does, first ask the target with {@code test.ping} which minions
 * answer, then run the job on N of them at a time (or N % of them), each batch a job of its own targeted by list,
 * the next batch once this one has returned (or the timeout passed).
 */
final class Batch {

    /** {@code N} (1 or more) or {@code N%} (1 to 100): {@link BatchSize#parse}, shared with the HTTP API. */
    static final class SizeConverter implements ITypeConverter<BatchSize> {
        @Override
        public BatchSize convert(String text) {
            try {
                return BatchSize.parse(text);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    private Batch() {}

    /** Runs the job in batches; returns the exit code (0 every minion returned success, else 1). */
    static int run(
            BrineClient client,
            BrineClient.Job job,
            BatchSize size,
            Duration wait,
            Outputs.Format format,
            PrintWriter out,
            PrintWriter err)
            throws ClientException {
        BrineClient.Published ping = client.publish(
                new BrineClient.Job(job.targetType(), job.target(), "test.ping", List.of(), Map.of(), 0));
        if (ping.minions().isEmpty()) {
            err.println("No minions matched the target. No command was sent (jid " + ping.jid() + ").");
            return 1;
        }
        List<String> reached = new ArrayList<>(ping.minions());
        reached.removeAll(ping.unreachable());
        List<String> up = new ArrayList<>(new TreeSet<>(
                client.awaitReturns(ping.jid(), reached, wait, event -> {}).keySet()));
        int per = size.of(up.size());
        int batches = (up.size() + per - 1) / per;
        Map<String, Object> values = new LinkedHashMap<>();
        Map<String, SessionMessage.ReturnEvent> returns = new LinkedHashMap<>();
        for (int i = 0; i < batches; i++) {
            List<String> ids = up.subList(i * per, Math.min(up.size(), (i + 1) * per));
            BrineClient.Published published = client.publish(new BrineClient.Job(
                    "list", String.join(",", ids), job.fun(), job.args(), job.kwargs(), job.timeoutSeconds()));
            err.println("batch " + (i + 1) + " of " + batches + " (jid " + published.jid() + "): "
                    + String.join(", ", ids));
            err.flush();
            List<String> expected = new ArrayList<>(published.minions());
            expected.removeAll(published.unreachable());
            returns.putAll(client.awaitReturns(published.jid(), expected, wait, event -> {
                values.put(event.minionId(), event.returnValue());
                if (format.streams()) {
                    out.print(Outputs.one(format, event.minionId(), event.returnValue()));
                    out.flush();
                }
            }));
        }
        if (!format.streams()) {
            out.println(Outputs.structured(format, values).strip());
        }
        TreeSet<String> missing = new TreeSet<>(ping.minions());
        missing.removeAll(returns.keySet());
        long failed = returns.values().stream().filter(r -> !r.success()).count();
        err.println("returned " + returns.size() + " of " + ping.minions().size() + " targeted (" + batches
                + (batches == 1 ? " batch" : " batches") + " of up to " + per + ")"
                + (failed > 0 ? "; " + failed + " failed" : ""));
        if (!missing.isEmpty()) {
            err.println("did not answer: " + String.join(", ", missing));
        }
        return missing.isEmpty() && failed == 0 ? 0 : 1;
    }
}
