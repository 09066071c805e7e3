package io.brine.minion.functions;

import java.util.Objects;

/**
 * A function a publication can run on a minion, named {@code module.fun} as in Salt ({@code test.ping},
 * {@code cmd.run}). Built-ins implement it, and so do plugins: a jar in the minion's {@code plugins_dir} with a
 * {@code META-INF/services/io.brine.minion.functions.MinionFunction} entry.
 *
 * <p>What {@link #call} returns travels to the master as msgpack, so it must be built from: {@code null},
 * {@link Boolean}, {@link Long} or {@link Integer} (any integral number up to 64 bits), {@link Double},
 * {@link String}, {@code byte[]}, {@link java.util.List} and {@link java.util.Map} with {@link String} keys (a
 * document). Anything else is refused with retcode 1 (see {@link Documents}). To set a retcode with a normal
 * return value (as {@code cmd.run} does with the command's exit code) return a {@link FunctionResult}.
 *
 * <p>A function signals failure by throwing {@link FunctionException}; any other exception becomes retcode 1 with
 * its message, never a stack trace. It runs on a worker thread with a deadline: long work checks
 * {@link FunctionCall#cancelled()} or lets {@link InterruptedException} propagate.
 */
public interface MinionFunction {

    /** {@code module.fun}: lower-case letters, digits and {@code _}, one dot. */
    String name();

    /** Runs the function; the arguments and the job's context are in {@code call}. */
    Object call(FunctionCall call) throws Exception;

    /** One or two lines for {@code sys.doc}: the arguments and what comes back. */
    default String doc() {
        return "";
    }

    /** The body of a function defined with a lambda. */
    @FunctionalInterface
    interface Body {
        Object call(FunctionCall call) throws Exception;
    }

    /** A function from a name, a doc line and a lambda: how the built-ins are written. */
    static MinionFunction of(String name, String doc, Body body) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(doc, "doc");
        Objects.requireNonNull(body, "body");
        return new MinionFunction() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Object call(FunctionCall call) throws Exception {
                return body.call(call);
            }

            @Override
            public String doc() {
                return doc;
            }

            @Override
            public String toString() {
                return "MinionFunction[" + name + "]";
            }
        };
    }
}
