package io.brine.master.jobs;

import java.util.List;
import java.util.Map;

/**
 * A published job as the job cache keeps it.
 *
 * @param minions the minions the master resolved the target to (whom it expects returns from)
 */
public record JobRecord(
        String jid,
        String time,
        String publisher,
        String targetType,
        String target,
        String fun,
        List<Object> args,
        Map<String, Object> kwargs,
        int timeoutSeconds,
        List<String> minions) {

    public JobRecord {
        args = List.copyOf(args);
        kwargs = Map.copyOf(kwargs);
        minions = List.copyOf(minions);
    }
}
