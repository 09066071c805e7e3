package io.brine.minion.functions;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;

/**
 * One invocation of a {@link MinionFunction}: the publication's arguments and the job's context.
 *
 * <p>Parameters are read the way Salt binds them: by position, or by name from the keyword arguments
 * ({@code test.echo hello} and {@code test.echo text=hello} are the same call). The typed readers below throw
 * {@link FunctionException} with a message fit for the publisher when an argument is missing or of the wrong type.
 *
 * @param jid          the job id
 * @param args         positional arguments (may hold {@code null})
 * @param kwargs       keyword arguments
 * @param grains       the minion's grains when the job was accepted
 * @param deadline     when the job's timeout runs out; the runner interrupts the function then
 * @param clock        the clock {@code deadline} is measured on
 * @param cancellation true once the job has been cancelled (timed out, minion shutting down)
 */
public record FunctionCall(
        String jid,
        List<Object> args,
        Map<String, Object> kwargs,
        Map<String, Object> grains,
        Instant deadline,
        Clock clock,
        BooleanSupplier cancellation) {

    /** For {@link #arg(int, String)} and the typed readers: the parameter has no position, only a name. */
    public static final int KEYWORD_ONLY = -1;

    public FunctionCall {
        Objects.requireNonNull(jid, "jid");
        Objects.requireNonNull(deadline, "deadline");
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(cancellation, "cancellation");
        // Null-tolerant copies: msgpack nil is a legitimate argument.
        args = Collections.unmodifiableList(new ArrayList<>(args));
        kwargs = Collections.unmodifiableMap(new LinkedHashMap<>(kwargs));
        grains = Collections.unmodifiableMap(new LinkedHashMap<>(grains));
    }

    /** A call outside any job (tests, a local CLI): no grains, a one-day deadline, never cancelled. */
    public static FunctionCall of(List<Object> args, Map<String, Object> kwargs) {
        Clock clock = Clock.systemUTC();
        return new FunctionCall(
                "local", args, kwargs, Map.of(), clock.instant().plus(Duration.ofDays(1)), clock, () -> false);
    }

    public FunctionCall withGrains(Map<String, Object> newGrains) {
        return new FunctionCall(jid, args, kwargs, newGrains, deadline, clock, cancellation);
    }

    public FunctionCall withTimeout(Duration timeout) {
        return new FunctionCall(jid, args, kwargs, grains, clock.instant().plus(timeout), clock, cancellation);
    }

    /** True once the job is cancelled or this thread interrupted: long-running work stops when it sees this. */
    public boolean cancelled() {
        return cancellation.getAsBoolean() || Thread.currentThread().isInterrupted();
    }

    /** Time left before {@link #deadline()}, never negative. */
    public Duration remaining() {
        Duration left = Duration.between(clock.instant(), deadline);
        return left.isNegative() ? Duration.ZERO : left;
    }

    /**
     * The parameter at {@code position} or named {@code name}.
     *
     * @throws FunctionException if it was given both ways
     */
    public Optional<Object> arg(int position, String name) throws FunctionException {
        boolean positional = position >= 0 && position < args.size();
        boolean named = name != null && kwargs.containsKey(name);
        if (positional && named) {
            throw new FunctionException("got two values for argument '" + name + "'");
        }
        if (positional) {
            return Optional.ofNullable(args.get(position));
        }
        return named ? Optional.ofNullable(kwargs.get(name)) : Optional.empty();
    }

    public String requireString(int position, String name) throws FunctionException {
        return string(position, name).orElseThrow(() -> new FunctionException("missing argument '" + name + "'"));
    }

    /** A string parameter; numbers and booleans are taken in their text form. */
    public Optional<String> string(int position, String name) throws FunctionException {
        Optional<Object> value = arg(position, name);
        if (value.isEmpty()) {
            return Optional.empty();
        }
        Object v = value.get();
        if (v instanceof String || v instanceof Number || v instanceof Boolean) {
            return Optional.of(v.toString());
        }
        throw new FunctionException("argument '" + name + "' must be a string, not " + typeName(v));
    }

    /** A finite number, given as a number or as its text. */
    public Optional<Double> number(int position, String name) throws FunctionException {
        Optional<Object> value = arg(position, name);
        if (value.isEmpty()) {
            return Optional.empty();
        }
        Object v = value.get();
        double d;
        if (v instanceof Number n) {
            d = n.doubleValue();
        } else if (v instanceof String s) {
            try {
                d = Double.parseDouble(s.strip());
            } catch (NumberFormatException e) {
                throw new FunctionException("argument '" + name + "' must be a number, not '" + s + "'");
            }
        } else {
            throw new FunctionException("argument '" + name + "' must be a number, not " + typeName(v));
        }
        if (!Double.isFinite(d)) {
            throw new FunctionException("argument '" + name + "' must be a finite number");
        }
        return Optional.of(d);
    }

    /** A boolean, given as one or as true/false/yes/no/1/0 (how YAML-minded admins type it). */
    public Optional<Boolean> bool(int position, String name) throws FunctionException {
        Optional<Object> value = arg(position, name);
        if (value.isEmpty()) {
            return Optional.empty();
        }
        Object v = value.get();
        if (v instanceof Boolean b) {
            return Optional.of(b);
        }
        String text = v instanceof String || v instanceof Long || v instanceof Integer
                ? v.toString().strip().toLowerCase(Locale.ROOT)
                : "";
        switch (text) {
            case "true", "yes", "on", "1":
                return Optional.of(true);
            case "false", "no", "off", "0":
                return Optional.of(false);
            default:
                throw new FunctionException("argument '" + name + "' must be true or false, not "
                        + (v instanceof String ? "'" + v + "'" : typeName(v)));
        }
    }

    /** A map (document) parameter. */
    public Optional<Map<String, Object>> map(int position, String name) throws FunctionException {
        Optional<Object> value = arg(position, name);
        if (value.isEmpty()) {
            return Optional.empty();
        }
        if (value.get() instanceof Map<?, ?> m) {
            try {
                return Optional.of(Documents.normalizeDocument(m));
            } catch (IllegalArgumentException e) {
                throw new FunctionException("argument '" + name + "': " + e.getMessage());
            }
        }
        throw new FunctionException("argument '" + name + "' must be a map, not " + typeName(value.get()));
    }

    /**
     * Refuses more than {@code maxPositional} positional arguments or a keyword outside {@code keywords}, so a typo
     * such as {@code timout=5} fails loudly instead of being ignored.
     */
    public void checkArguments(int maxPositional, Set<String> keywords) throws FunctionException {
        if (args.size() > maxPositional) {
            throw new FunctionException("takes at most " + maxPositional + " positional argument"
                    + (maxPositional == 1 ? "" : "s") + ", got " + args.size() + quotingHint(maxPositional));
        }
        Set<String> unknown = new TreeSet<>(kwargs.keySet());
        unknown.removeAll(keywords);
        if (!unknown.isEmpty()) {
            throw new FunctionException("unknown keyword argument" + (unknown.size() == 1 ? " " : "s ")
                    + String.join(", ", unknown) + " (accepted: " + String.join(", ", new TreeSet<>(keywords)) + ")");
        }
    }

    /** When the words past the last allowed argument look like one argument split on spaces: how to pass it. */
    private String quotingHint(int maxPositional) {
        if (maxPositional < 1 || !args.stream().allMatch(String.class::isInstance)) {
            return "";
        }
        List<String> words = args.subList(maxPositional - 1, args.size()).stream()
                .map(String.class::cast)
                .toList();
        return " (to pass '" + String.join(" ", words) + "' as one argument, quote it)";
    }

    private static String typeName(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Map<?, ?>) {
            return "a map";
        }
        if (v instanceof List<?>) {
            return "a list";
        }
        if (v instanceof byte[]) {
            return "bytes";
        }
        return "a " + v.getClass().getSimpleName().toLowerCase(Locale.ROOT);
    }
}
