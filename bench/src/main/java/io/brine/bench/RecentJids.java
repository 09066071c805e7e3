package io.brine.bench;

import java.util.LinkedHashSet;

/** The job ids a simulated minion has run lately, the oldest forgotten past 1,024, so a repeated job runs once. */
final class RecentJids {

    private static final int KEEP = 1024;

    private final LinkedHashSet<String> jids = new LinkedHashSet<>();

    boolean contains(String jid) {
        return jids.contains(jid);
    }

    void add(String jid) {
        jids.add(jid);
        if (jids.size() > KEEP) {
            var oldest = jids.iterator();
            oldest.next();
            oldest.remove();
        }
    }
}
