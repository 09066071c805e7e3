package io.brine.minion.functions.builtin;

import io.brine.minion.functions.FunctionCall;
import io.brine.minion.functions.FunctionException;
import io.brine.minion.functions.FunctionResult;
import io.brine.minion.functions.MinionFunction;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Salt's {@code test} module: the functions one uses to check that publication and returns work end to end. */
final class TestFunctions {

    private TestFunctions() {}

    static List<MinionFunction> functions(String version) {
        return List.of(
                MinionFunction.of("test.ping", "test.ping: true, if the minion is there to answer", call -> true),
                MinionFunction.of("test.echo", "test.echo TEXT: TEXT", call -> {
                    call.checkArguments(1, Set.of("text"));
                    return call.arg(0, "text").orElseThrow(() -> new FunctionException("missing argument 'text'"));
                }),
                MinionFunction.of(
                        "test.sleep",
                        "test.sleep SECONDS: sleeps (fractions allowed), then true;"
                                + " the job's timeout interrupts it",
                        TestFunctions::sleep),
                MinionFunction.of("test.version", "test.version: the brine version of this minion", call -> version),
                MinionFunction.of(
                        "test.arg",
                        "test.arg ARGS... [KEY=VALUE...]: {args: [...], kwargs: {...}}, to see" + " what arrived",
                        call -> {
                            Map<String, Object> result = new LinkedHashMap<>();
                            result.put("args", call.args());
                            result.put("kwargs", call.kwargs());
                            return result;
                        }),
                MinionFunction.of("test.retcode", "test.retcode [CODE=42]: true, with retcode CODE", call -> {
                    call.checkArguments(1, Set.of("code"));
                    double code = call.number(0, "code").orElse(42.0);
                    if (code != Math.rint(code) || code < Integer.MIN_VALUE || code > Integer.MAX_VALUE) {
                        throw new FunctionException("argument 'code' must be an integer");
                    }
                    return new FunctionResult(true, (int) code);
                }),
                MinionFunction.of(
                        "test.exception",
                        "test.exception [MESSAGE]: fails with MESSAGE, to see how" + " errors come back",
                        call -> {
                            call.checkArguments(1, Set.of("message"));
                            throw new IllegalStateException(
                                    call.string(0, "message").orElse("Test Exception"));
                        }));
    }

    private static Object sleep(FunctionCall call) throws FunctionException, InterruptedException {
        call.checkArguments(1, Set.of("length"));
        double seconds = call.number(0, "length")
                .orElseThrow(() -> new FunctionException("missing argument 'length' (seconds)"));
        if (seconds < 0) {
            throw new FunctionException("argument 'length' must not be negative");
        }
        Duration wanted = Duration.ofNanos((long) Math.min(seconds * 1e9, Long.MAX_VALUE));
        Duration left = call.remaining();
        // Under a job runner the deadline interrupts the sleep; called without one, honour it ourselves.
        if (wanted.compareTo(left) > 0) {
            Thread.sleep(left.toMillis());
            throw new FunctionException(
                    "test.sleep timed out: the job's deadline came before the "
                            + BigDecimal.valueOf(seconds).stripTrailingZeros().toPlainString() + " s were over",
                    FunctionResult.TIMEOUT);
        }
        Thread.sleep(wanted.toMillis(), wanted.toNanosPart() % 1_000_000);
        return true;
    }
}
