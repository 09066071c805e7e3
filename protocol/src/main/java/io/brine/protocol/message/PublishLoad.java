package io.brine.protocol.message;

import java.util.List;
import java.util.Map;

/**
 * What a publication asks minions to do, sealed inside {@link Publish#box()}.
 *
 * @param jid            the job id
 * @param target         the target expression, checked again by each minion
 * @param fun            the function name, e.g. {@code test.ping}
 * @param args           positional arguments
 * @param kwargs         keyword arguments
 * @param timeoutSeconds how long the function may run on the minion (0: the minion's default)
 * @param publisher      who published it, for the minion's log
 */
public record PublishLoad(
        String jid,
        Target target,
        String fun,
        List<Object> args,
        Map<String, Object> kwargs,
        int timeoutSeconds,
        String publisher) {

    public PublishLoad {
        args = Copies.list(args);
        kwargs = Copies.map(kwargs);
    }

    /** A target expression; {@code type} is one of glob, pcre, list, grain, compound. */
    public record Target(String type, String expression) {}
}
