package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.MasterConfig;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two hundred real minions (own sockets, own threads) authenticating at once against one master. Runs alone: it takes
 * both cores by itself.
 */
@RunsAlone
class SwarmAuthIT {

    private static final int MINIONS = 200;

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    @Test
    void twoHundredMinionsAuthenticatingAtOnceAllEndAccepted() throws Exception {
        fleet = new Fleet(dir);
        long filesBefore = openFiles();
        int threadsBefore = Thread.activeCount();
        // The minions start first and wait for a master that is not up yet, so that they all ask at once when
        // it comes: the herd after a master restart.
        fleet.relayForLateMaster();
        List<String> ids = IntStream.range(0, MINIONS)
                .mapToObj(i -> String.format("swarm%03d", i))
                .toList();
        long started = System.nanoTime();
        // Started from a few threads, as if on as many hosts.
        ExecutorService starters = Executors.newFixedThreadPool(16);
        try {
            List<Future<MinionDaemon>> starts = new ArrayList<>();
            for (String id : ids) {
                starts.add(starters.submit(() -> fleet.startMinion(id)));
            }
            for (Future<MinionDaemon> start : starts) {
                start.get();
            }
        } finally {
            starters.shutdown();
        }
        long launched = System.nanoTime();

        // On loopback every minion has the same source address; the per-source limit is for real networks.
        fleet.startMaster(b -> b.acceptance(
                        MasterConfig.Acceptance.builder().autoAccept(true).build())
                .authRatePerSource(1000)
                .authBurst(1000));
        long masterUp = System.nanoTime();
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> fleet.minions.stream().allMatch(m -> m.minion().state() == MinionState.ACCEPTED));
        long accepted = System.nanoTime();

        assertThat(fleet.acceptedIds()).hasSize(MINIONS);
        assertThat(fleet.master.master().sessions().size()).isEqualTo(MINIONS);
        fleet.awaitSubscribed(ids.toArray(String[]::new));
        JobPublisher.Published job = fleet.publish("test.ping", ids);
        assertThat(job.unreachable()).isEmpty();
        fleet.awaitReturns(job.jid(), ids);
        long returned = System.nanoTime();
        // A rotation reaches all of them inside their sessions (AES only on the master: no RSA per minion).
        long generation = fleet.master.master().keyring().current().number();
        fleet.master.master().requestRotation("SwarmAuthIT");
        await().until(() ->
                fleet.minions.stream().allMatch(m -> m.minion().status().generation() == generation + 1));
        long rotated = System.nanoTime();

        int threads = Thread.activeCount() - threadsBefore;
        long files = openFiles() - filesBefore;
        long closing = System.nanoTime();
        fleet.close();
        System.out.printf(
                "SwarmAuthIT: %d minions started in %d ms; all accepted %d ms after their master came "
                        + "up; a test.ping to all returned in %d ms; a rotation reached all in %d ms; all closed in %d ms; "
                        + "%d threads and %d open files more in this JVM while they ran%n",
                MINIONS,
                (launched - started) / 1_000_000,
                (accepted - masterUp) / 1_000_000,
                (returned - accepted) / 1_000_000,
                (rotated - returned) / 1_000_000,
                (System.nanoTime() - closing) / 1_000_000,
                threads,
                files);
    }

    private static long openFiles() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
