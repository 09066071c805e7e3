package io.brine.master.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.MasterConfig;
import java.time.Clock;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The fan-out of a job's events to many API subscribers with an ACL: what it costs per event, not per minion. */
class EventFanOutTest {

    /** A job's minions that count how often they are gone through. */
    private static final class Counted extends AbstractSet<String> {
        final Set<String> minions;
        final AtomicInteger walks = new AtomicInteger();

        Counted(Set<String> minions) {
            this.minions = minions;
        }

        @Override
        public Iterator<String> iterator() {
            walks.incrementAndGet();
            return minions.iterator();
        }

        @Override
        public int size() {
            return minions.size();
        }
    }

    @Test
    void aSubscribersAclIsMatchedAgainstAJobsMinionsOncePerJobNotOncePerReturn() throws Exception {
        EventStream stream = new EventStream(Clock.systemUTC());
        Set<String> web = IntStream.range(0, 100).mapToObj(i -> "web" + i).collect(Collectors.toUnmodifiableSet());
        Counted job = new Counted(web);
        Counted other = new Counted(Set.of("web1", "db1"));
        Optional<MasterConfig.PublisherAcl> acl =
                Optional.of(new MasterConfig.PublisherAcl(List.of("web*"), List.of("test.*")));
        AtomicInteger delivered = new AtomicInteger();
        AtomicInteger hidden = new AtomicInteger();
        for (int i = 0; i < 5; i++) {
            stream.subscribe("api:ops" + i, acl, "brine/job/*", -1, (number, event) -> {
                if (event.tag().contains("/j2/")) {
                    hidden.incrementAndGet();
                }
                delivered.incrementAndGet();
                return true;
            });
        }
        stream.emit("brine/job/j1/new", job, "test.ping", Map.of());
        for (String minion : web) {
            stream.emit("brine/job/j1/ret/" + minion, job, "test.ping", Map.of());
        }
        // A job with a minion the ACL does not cover: none of its events, decided once per subscriber too.
        stream.emit("brine/job/j2/new", other, "test.ping", Map.of());
        stream.emit("brine/job/j2/ret/web1", other, "test.ping", Map.of());
        // The same minions with a function the ACL does not allow: decided again, and hidden.
        stream.emit("brine/job/j3/new", job, "cmd.run", Map.of());

        assertThat(delivered).hasValue(5 * 101);
        assertThat(hidden).hasValue(0);
        // Once per subscriber for j1's 101 events, once more for j3's other function.
        assertThat(job.walks).hasValue(10);
        assertThat(other.walks).hasValue(5);
    }
}
