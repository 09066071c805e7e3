package io.brine.protocol;

/**
 * Salt's batch size, as {@code brine -b} and the API's {@code "batch"} take it: N minions at a time (1 or more), or
 * N percent (1 to 100) of the minions that answered the first {@code test.ping}. One parser for both.
 */
public record BatchSize(int value, boolean percent) {

    public BatchSize {
        if (value < 1 || (percent && value > 100)) {
            throw new IllegalArgumentException(problem(value + (percent ? "%" : "")));
        }
    }

    /** {@code N} (1 or more, at most 9 digits) or {@code N%} (1 to 100). */
    public static BatchSize parse(String text) {
        boolean percent = text.endsWith("%");
        String digits = percent ? text.substring(0, text.length() - 1) : text;
        if (digits.matches("[0-9]{1,9}")) {
            int value = Integer.parseInt(digits);
            if (value >= 1 && (!percent || value <= 100)) {
                return new BatchSize(value, percent);
            }
        }
        throw new IllegalArgumentException(problem(text));
    }

    private static String problem(String text) {
        return "expected N (1 or more minions) or N% (1 to 100), not '" + MinionIds.printable(text) + "'";
    }

    /** How many minions one batch holds when {@code minions} answered. */
    public int of(int minions) {
        return percent ? Math.max(1, (int) Math.ceil(minions * value / 100.0)) : value;
    }

    @Override
    public String toString() {
        return value + (percent ? "%" : "");
    }
}
