package io.brine.protocol;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * Ids that are valid ({@link MinionIds}) but refused as a minion's: {@code reserved_ids} of master.yaml. A key filed
 * under {@code con} or {@code nul} is a file a Windows tool or a copy to a Windows share cannot handle (a device name,
 * with any extension: {@code con.example.com} too), and {@code master} or {@code root} reads as the master itself in
 * logs, targets and listings.
 *
 * <p>An entry is {@code NAME}: that whole id; or {@code NAME.*}: {@code NAME} and every id that starts with
 * {@code NAME.} (so {@code con.*} is any id whose first label is {@code con}). {@code NAME} is a valid id; nothing
 * else is an entry. An empty list reserves nothing.
 */
public final class ReservedIds {

    /** What {@code NAME.*} ends with. */
    public static final String ANY_LABELS = ".*";

    /** The default list: Windows device names as a first label, {@code master} and {@code root} as whole ids. */
    public static final List<String> DEFAULT_ENTRIES = defaults();

    public static final ReservedIds DEFAULT = of(DEFAULT_ENTRIES);
    public static final ReservedIds NONE = of(List.of());

    private final List<String> entries;

    private ReservedIds(List<String> entries) {
        this.entries = entries;
    }

    private static List<String> defaults() {
        List<String> entries = new ArrayList<>();
        Stream.of(
                        Stream.of("con", "prn", "aux", "nul"),
                        IntStream.rangeClosed(1, 9).mapToObj(n -> "com" + n),
                        IntStream.rangeClosed(1, 9).mapToObj(n -> "lpt" + n))
                .flatMap(s -> s)
                .forEach(device -> entries.add(device + ANY_LABELS));
        entries.add("master");
        entries.add("root");
        return List.copyOf(entries);
    }

    /**
     * @throws IllegalArgumentException naming the first entry that is not one ({@link #entryProblem})
     */
    public static ReservedIds of(List<String> entries) {
        for (String entry : entries) {
            entryProblem(entry).ifPresent(problem -> {
                throw new IllegalArgumentException(MinionIds.printable(entry) + ": " + problem);
            });
        }
        return new ReservedIds(List.copyOf(entries));
    }

    /** Why {@code entry} is not a {@code reserved_ids} entry, or empty when it is. */
    public static Optional<String> entryProblem(String entry) {
        String name = entry.endsWith(ANY_LABELS) ? entry.substring(0, entry.length() - ANY_LABELS.length()) : entry;
        return MinionIds.problem(name)
                .map(problem -> "not a reserved id (an id, or an id followed by .* for it" + " and every id under it: "
                        + problem + ")");
    }

    public List<String> entries() {
        return entries;
    }

    /** The entry that reserves {@code id}, or empty when a minion may use it. */
    public Optional<String> match(String id) {
        for (String entry : entries) {
            if (entry.endsWith(ANY_LABELS)) {
                String name = entry.substring(0, entry.length() - ANY_LABELS.length());
                if (id.equals(name)
                        || (id.startsWith(name) && id.length() > name.length() && id.charAt(name.length()) == '.')) {
                    return Optional.of(entry);
                }
            } else if (id.equals(entry)) {
                return Optional.of(entry);
            }
        }
        return Optional.empty();
    }

    /** Why a minion may not use {@code id}, in one phrase for an answer, a log line and brine-key; or empty. */
    public Optional<String> problem(String id) {
        return match(id).map(entry -> "id " + id + " is reserved (reserved_ids entry " + entry + "): use another id");
    }

    @Override
    public String toString() {
        return "ReservedIds" + entries;
    }
}
