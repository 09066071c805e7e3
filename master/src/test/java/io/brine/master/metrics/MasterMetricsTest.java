package io.brine.master.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.BrineVersion;
import io.brine.master.events.EventStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The names and units of the master's metrics, by Prometheus' conventions. */
class MasterMetricsTest {

    @Test
    void authLatencyIsAHistogramInSecondsThatAddsUpAcrossMasters() {
        MasterMetrics metrics = new MasterMetrics(new EventStream(Clock.systemUTC()));
        metrics.authLatency(3_000_000);

        String text = metrics.scrape();

        assertThat(text).contains("# TYPE brine_auth_latency_seconds histogram")
                .contains("brine_auth_latency_seconds_bucket{le=\"+Inf\"} 1")
                .contains("brine_auth_latency_seconds_count 1");
        assertThat(text).doesNotContain("quantile=");
    }

    @Test
    void minionKeyRotationsAreCountedByResult() {
        MasterMetrics metrics = new MasterMetrics(new EventStream(Clock.systemUTC()));
        metrics.minionKeyRotation("web1", "rotated", "ab:cd", "rotated");
        metrics.minionKeyRotation("web2", "refused", "-", "key_rotation is deny");
        metrics.minionKeyRotation("web3", "refused", "-", "the new key is not usable");

        assertThat(metrics.scrape()).contains("brine_minion_key_rotations_total{result=\"rotated\"} 1.0",
                "brine_minion_key_rotations_total{result=\"refused\"} 2.0");
    }

    @Test
    void theOldestAcceptedKeysAgeIsAGaugeFromItsFilesTime(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        try (io.brine.store.keys.KeyStore store = io.brine.store.keys.FileKeyStore.open(
                io.brine.store.keys.KeyStoreOptions.builder(dir).masterKey(false).build())) {
            MasterMetrics metrics = new MasterMetrics(new EventStream(Clock.systemUTC()));
            metrics.keys(store);
            assertThat(metrics.scrape()).contains("brine_oldest_accepted_key_age_seconds 0.0");
            store.offer("web1", (RSAPublicKey) io.brine.protocol.testing.TestKeys.pair(1)
                    .getPublic(), io.brine.store.keys.PolicyVerdict.ACCEPT);
            store.offer("web2", (RSAPublicKey) io.brine.protocol.testing.TestKeys.pair(2)
                    .getPublic(), io.brine.store.keys.PolicyVerdict.ACCEPT);
            Files.setLastModifiedTime(dir.resolve("minions/web1"), FileTime
                    .from(Instant.now().minus(Duration.ofDays(2))));
            store.refresh();

            String scraped = metrics.scrape();
            double age = Double.parseDouble(scraped.lines()
                    .filter(line -> line.startsWith("brine_oldest_accepted_key_age_seconds ")).findFirst()
                    .orElseThrow().split(" ")[1]);
            assertThat(age).isBetween(2 * 86_400.0, 2 * 86_400.0 + 3_600);
        }
    }

    @Test
    void buildInfoNamesTheVersionAndCommit() {
        String text = new MasterMetrics(new EventStream(Clock.systemUTC())).scrape();

        assertThat(text).contains("brine_build_info{commit=\"" + BrineVersion.commit() + "\",version=\""
                + BrineVersion.get() + "\"} 1");
    }

    @Test
    void processCpuIsInSecondsAndFileDescriptorsAreCounted() {
        String text = new MasterMetrics(new EventStream(Clock.systemUTC())).withJvm().scrape();

        assertThat(text).contains("# TYPE process_cpu_seconds_total counter", "process_files_open_files ",
                "process_files_max_files ");
        assertThat(text).doesNotContain("process_cpu_time_ns");
    }
}
