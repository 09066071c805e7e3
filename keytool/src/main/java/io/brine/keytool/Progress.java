package io.brine.keytool;

import java.io.PrintWriter;
import java.text.NumberFormat;
import java.util.Locale;

/**
 * A counter for long admin work on a terminal ({@code \r1,234/3,000}), redrawn about a hundred times in a run
 * whatever its length: a count of steps, not a clock, so it costs nothing per key and tests see the same output.
 */
final class Progress {

    /** Fewer keys than this finish before a counter would be read. */
    static final int MIN_KEYS = 100;

    private final PrintWriter terminal;
    private final int total;
    private final int every;
    private int done;
    private int width;

    Progress(PrintWriter terminal, int total) {
        this.terminal = terminal;
        this.total = total;
        this.every = Math.max(1, total / 100);
    }

    /** One more done. */
    void step() {
        done++;
        if (done % every == 0 || done == total) {
            String text = count(done) + "/" + count(total);
            width = Math.max(width, text.length());
            terminal.print("\r" + text);
            terminal.flush();
        }
    }

    /** Erases the counter, so that a message can take its line; the next step draws it again. */
    void clear() {
        if (width > 0) {
            terminal.print("\r" + " ".repeat(width) + "\r");
            terminal.flush();
        }
    }

    /** Ends the counter's line. */
    void finish() {
        if (width > 0) {
            terminal.println();
            terminal.flush();
        }
    }

    /** 1234 as 1,234. */
    static String count(long n) {
        return NumberFormat.getIntegerInstance(Locale.ROOT).format(n);
    }
}
