package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProcStatsTest {

    private static final String TCP = String.join(
            "\n",
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
            "   0: 0100007F:9C40 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1",
            "   1: 0100007F:9C40 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 2 1",
            "   2: 0100007F:D431 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 3 1",
            "   3: 0100007F:9C40 0100007F:D432 06 00000000:00000000 00:00000000 00000000  1000        0 0 3",
            "   4: 0100007F:9C40 0100007F:D433 01 00000000:00000000 00:00000000 00000000  1000        0 4 1",
            "   5: 0100007F:9C41 0100007F:D434 01 00000000:00000000 00:00000000 00000000  1000        0 5 1",
            "");

    @Test
    void establishedCountsTheConnectionsAcceptedOnAPortNotTheListenerNorTheClientsSideNorOtherStates() {
        // 40000 = 0x9C40: the listener (0A), two accepted (01), one in TIME_WAIT (06); 0x9C41 is the next port.
        assertThat(ProcStats.established(TCP, 40000)).isEqualTo(2);
        assertThat(ProcStats.established(TCP, 40001)).isEqualTo(1);
        assertThat(ProcStats.established(TCP, 0xD431)).isEqualTo(1); // the client side of connection 1, from its port
        assertThat(ProcStats.established(TCP, 12345)).isZero();
        assertThat(ProcStats.established("", 40000)).isZero();
    }

    @Test
    void aProcessTreesCpuIsGroupedByProcessNameOverEveryDescendant() throws Exception {
        // A parent named sh with two children named sleep: a salt-master's tree is a parent and its forked workers.
        Process parent = new ProcessBuilder("sh", "-c", "sleep 60 & sleep 60 & wait").start();
        try {
            await().until(() -> parent.descendants().count() == 2);

            Map<String, Long> byName = ProcStats.cpuMillisByProcessName(parent.pid());

            assertThat(byName).containsOnlyKeys("sh", "sh (sys)", "sleep", "sleep (sys)");
        } finally {
            parent.descendants().forEach(ProcessHandle::destroy);
            parent.destroy();
        }
    }

    @Test
    void theGroupsAddUpToTheTreesCpuWithItsReapedChildren() throws Exception {
        // The parent spends CPU in a child it reaps (cutime), then becomes sleep: counted under the name it has now.
        Process parent = new ProcessBuilder(
                        "sh", "-c", "(i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done) & wait; exec sleep 60")
                .start();
        try {
            // The busy child has ended and been reaped once the parent itself is sleep.
            await().until(() -> ProcStats.read(Path.of("/proc", Long.toString(parent.pid()), "stat"))
                    .contains("(sleep)"));

            Map<String, Long> byName = ProcStats.cpuMillisByProcessName(parent.pid());
            long tree = ProcStats.treeCpuMillis(parent.pid());

            assertThat(byName.get("sleep") + byName.get("sleep (sys)")).isPositive();
            assertThat(byName.values().stream().mapToLong(Long::longValue).sum())
                    .isBetween(tree - 20, tree);
        } finally {
            parent.descendants().forEach(ProcessHandle::destroy);
            parent.destroy();
        }
    }
}
