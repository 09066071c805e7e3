package io.brine.transport.testing;

import java.util.List;
import java.util.Set;

/** The threads a test started, to check that closing a transport stops them all. */
public final class Threads {

    private Threads() {}

    /** Every live thread now. */
    public static Set<Thread> live() {
        return Set.copyOf(Thread.getAllStackTraces().keySet());
    }

    /** The threads alive now that were not in {@code before}. */
    public static List<Thread> newSince(Set<Thread> before) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && !before.contains(t))
                .toList();
    }
}
