package io.brine.minion.functions;

import io.brine.protocol.MinionIds;
import io.brine.protocol.targeting.Glob;
import io.brine.protocol.targeting.TargetException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The functions this minion offers: built-ins, plugins from {@code plugins_dir}, and the registry's own
 * {@code sys.list_functions} and {@code sys.doc}, filtered by the {@link FunctionAccess} allow/deny lists.
 * Immutable after construction, so workers look names up without locks. A built-in always wins a name clash with a
 * plugin, so a plugin cannot silently replace {@code cmd.run}.
 *
 * <p>{@link #close()} releases the plugin class loaders; close the job runner first.
 */
public final class FunctionRegistry implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FunctionRegistry.class);
    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]*\\.[a-z_][a-z0-9_]*");
    /** Exception messages become return values; a runaway one must not become a huge return. */
    private static final int MAX_MESSAGE = 8192;

    private final Map<String, MinionFunction> functions;
    private final FunctionAccess access;
    private final PluginJars plugins;

    /** A registry of {@code builtIns} only (no plugins). */
    public FunctionRegistry(Collection<? extends MinionFunction> builtIns, FunctionAccess access) {
        this(builtIns, PluginJars.none(), access);
    }

    /**
     * A registry of {@code builtIns} and the plugin jars in {@code pluginsDir}; a bad jar is logged and skipped, a
     * missing directory means no plugins.
     */
    public static FunctionRegistry load(
            Collection<? extends MinionFunction> builtIns, Path pluginsDir, FunctionAccess access) {
        return new FunctionRegistry(
                builtIns, PluginJars.load(pluginsDir, FunctionRegistry.class.getClassLoader()), access);
    }

    private FunctionRegistry(Collection<? extends MinionFunction> builtIns, PluginJars plugins, FunctionAccess access) {
        this.access = access;
        this.plugins = plugins;
        Map<String, MinionFunction> all = new TreeMap<>();
        List<MinionFunction> own = List.of(
                MinionFunction.of(
                        "sys.list_functions",
                        "sys.list_functions [GLOB ...]: the sorted names of the"
                                + " functions this minion allows, optionally only those matching a glob",
                        this::listFunctions),
                MinionFunction.of("sys.doc", "sys.doc [GLOB ...]: {name: doc} for the allowed functions", this::doc));
        List<MinionFunction> firstParty = new ArrayList<>(own);
        firstParty.addAll(builtIns);
        for (MinionFunction function : firstParty) {
            if (!isValidName(function.name())) {
                throw new IllegalArgumentException(
                        "built-in function with an invalid name " + printable(function.name()));
            }
            if (all.putIfAbsent(function.name(), function) != null) {
                throw new IllegalArgumentException("two built-in functions named " + function.name());
            }
        }
        for (MinionFunction function : plugins.functions()) {
            MinionFunction existing = all.putIfAbsent(function.name(), function);
            if (existing != null) {
                log.warn(
                        "Plugin function {} ({}) ignored: the name is taken by {}",
                        function.name(),
                        function.getClass().getName(),
                        firstParty.contains(existing) ? "a built-in" : "another plugin");
            }
        }
        this.functions = Collections.unmodifiableMap(all);
    }

    /** Whether a lookup found a function, and if not, why. */
    public sealed interface Lookup {

        /** The function exists and the allow/deny lists permit it. */
        record Available(MinionFunction function) implements Lookup {}

        /** The minion will not run it; {@link #result()} is the failed return to send. */
        sealed interface Refused extends Lookup {
            FunctionResult result();
        }

        /** No function of this name (Salt: "is not available"). */
        record Unknown(String name) implements Refused {
            @Override
            public FunctionResult result() {
                return FunctionResult.failure(
                        printable(name) + " is not available on this minion", FunctionResult.UNKNOWN);
            }
        }

        /** The function exists but this minion's {@code functions} allow/deny lists refuse it. */
        record Denied(String name) implements Refused {
            @Override
            public FunctionResult result() {
                return FunctionResult.failure(
                        printable(name) + " is denied by this minion's functions allow/deny" + " lists",
                        FunctionResult.DENIED);
            }
        }
    }

    public Lookup lookup(String name) {
        MinionFunction function = name == null ? null : functions.get(name);
        if (function == null) {
            return new Lookup.Unknown(String.valueOf(name));
        }
        return access.permits(name) ? new Lookup.Available(function) : new Lookup.Denied(name);
    }

    /** Looks {@code name} up and runs it; unknown and denied names come back as failed results. Never throws. */
    public FunctionResult call(String name, FunctionCall call) {
        Lookup lookup = lookup(name);
        if (lookup instanceof Lookup.Available available) {
            return invoke(available.function(), call);
        }
        return ((Lookup.Refused) lookup).result();
    }

    /**
     * Runs {@code function} and turns whatever happens into a result: its value (normalized for the wire), its
     * {@link FunctionException}, or any other exception as retcode 1 with the message only; the stack trace goes
     * to the DEBUG log, not to the master. Never throws; an interrupt is reported as a failure and the thread's
     * interrupt flag is kept.
     */
    public FunctionResult invoke(MinionFunction function, FunctionCall call) {
        String name = function.name();
        Object value;
        int retcode;
        try {
            Object returned = function.call(call);
            if (returned instanceof FunctionResult result) {
                value = result.value();
                retcode = result.retcode();
            } else {
                value = returned;
                retcode = 0;
            }
        } catch (FunctionException e) {
            log.debug("Function {} (jid {}) failed with retcode {}: {}", name, call.jid(), e.retcode(), e.getMessage());
            return FunctionResult.failure(cap(String.valueOf(e.getMessage())), e.retcode());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return FunctionResult.failure(name + " was interrupted", FunctionResult.ERROR);
        } catch (Exception | LinkageError | AssertionError | StackOverflowError e) {
            // Plugins are code we did not write: a NoClassDefFoundError or a runaway recursion in one must end as a
            // failed return, not as a dead worker thread and a job that never answers.
            log.debug("Function {} (jid {}) threw", name, call.jid(), e);
            String message = e.getMessage() == null || e.getMessage().isBlank()
                    ? e.getClass().getSimpleName()
                    : e.getClass().getSimpleName() + ": " + e.getMessage();
            return FunctionResult.failure(cap(message), FunctionResult.ERROR);
        }
        try {
            return new FunctionResult(Documents.normalize(value), retcode);
        } catch (IllegalArgumentException e) {
            log.warn(
                    "Function {} (jid {}) returned something that cannot be sent: {}",
                    name,
                    call.jid(),
                    e.getMessage());
            return FunctionResult.failure(
                    name + " returned a value that cannot be sent: " + e.getMessage(), FunctionResult.ERROR);
        }
    }

    /** The sorted names of the functions the allow/deny lists permit. */
    public List<String> names() {
        return functions.keySet().stream().filter(access::permits).toList();
    }

    public FunctionAccess access() {
        return access;
    }

    @Override
    public void close() {
        plugins.close();
    }

    private Object listFunctions(FunctionCall call) throws FunctionException {
        return List.copyOf(matching(call).keySet());
    }

    private Object doc(FunctionCall call) throws FunctionException {
        Map<String, Object> docs = new LinkedHashMap<>();
        matching(call).forEach((name, function) -> docs.put(name, function.doc()));
        return docs;
    }

    /** The allowed functions whose names match any of the call's positional globs (all when there are none). */
    private Map<String, MinionFunction> matching(FunctionCall call) throws FunctionException {
        call.checkArguments(Integer.MAX_VALUE, Set.of());
        List<Glob> globs = new ArrayList<>();
        for (int i = 0; i < call.args().size(); i++) {
            try {
                globs.add(Glob.compile(call.requireString(i, "glob")));
            } catch (TargetException e) {
                throw new FunctionException(e.getMessage());
            }
        }
        Map<String, MinionFunction> result = new TreeMap<>();
        functions.forEach((name, function) -> {
            if (access.permits(name) && (globs.isEmpty() || globs.stream().anyMatch(g -> g.matches(name)))) {
                result.put(name, function);
            }
        });
        return result;
    }

    static boolean isValidName(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    static String printable(String s) {
        return MinionIds.printable(s);
    }

    private static String cap(String message) {
        return message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE) + "... (truncated)";
    }
}
