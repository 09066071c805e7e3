package io.brine.master.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.BrineVersion;
import io.brine.master.auth.MasterKeyring;
import io.brine.master.events.EventStream;
import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.MasterKeyRotation;
import io.brine.store.keys.PolicyVerdict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The names and units of the master's metrics, by Prometheus' conventions. */
class MasterMetricsTest {

    @Test
    void authLatencyIsAHistogramInSecondsThatAddsUpAcrossMasters() {
        MasterMetrics metrics = new MasterMetrics();
        metrics.authLatency(3_000_000);

        String text = metrics.scrape();

        assertThat(text)
                .contains("# TYPE brine_auth_latency_seconds histogram")
                .contains("brine_auth_latency_seconds_bucket{le=\"+Inf\"} 1")
                .contains("brine_auth_latency_seconds_count 1");
        assertThat(text).doesNotContain("quantile=");
    }

    @Test
    void minionKeyRotationsAreCountedByResult() {
        MasterMetrics metrics = new MasterMetrics();
        metrics.minionKeyRotation("rotated");
        metrics.minionKeyRotation("refused");
        metrics.minionKeyRotation("refused");

        assertThat(metrics.scrape())
                .contains(
                        "brine_minion_key_rotations_total{result=\"rotated\"} 1.0",
                        "brine_minion_key_rotations_total{result=\"refused\"} 2.0");
    }

    @Test
    void theOldestAcceptedKeysAgeIsAGaugeFromItsFilesTime(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        try (KeyStore store =
                FileKeyStore.open(KeyStoreOptions.builder(dir).masterKey(false).build())) {
            MasterMetrics metrics = new MasterMetrics();
            metrics.keys(store);
            assertThat(metrics.scrape()).contains("brine_oldest_accepted_key_age_seconds 0.0");
            store.offer("web1", (RSAPublicKey) TestKeys.pair(1).getPublic(), PolicyVerdict.ACCEPT);
            store.offer("web2", (RSAPublicKey) TestKeys.pair(2).getPublic(), PolicyVerdict.ACCEPT);
            Files.setLastModifiedTime(
                    dir.resolve("minions/web1"), FileTime.from(Instant.now().minus(Duration.ofDays(2))));
            store.refresh();

            String scraped = metrics.scrape();
            double age = Double.parseDouble(scraped.lines()
                    .filter(line -> line.startsWith("brine_oldest_accepted_key_age_seconds "))
                    .findFirst()
                    .orElseThrow()
                    .split(" ")[1]);
            assertThat(age).isBetween(2 * 86_400.0, 2 * 86_400.0 + 3_600);
        }
    }

    @Test
    void buildInfoNamesTheVersionAndCommit() {
        String text = new MasterMetrics().scrape();

        assertThat(text)
                .contains("brine_build_info{commit=\"" + BrineVersion.commit() + "\",version=\"" + BrineVersion.get()
                        + "\"} 1");
    }

    @Test
    void processCpuIsInSecondsAndFileDescriptorsAreCounted() {
        String text = new MasterMetrics().withJvm().scrape();

        assertThat(text)
                .contains(
                        "# TYPE process_cpu_seconds_total counter",
                        "process_files_open_files ",
                        "process_files_max_files ");
        assertThat(text).doesNotContain("process_cpu_time_ns");
    }

    @Test
    void masterKeyRotationsAndRetirementsAreCountedAndStreamedAndTheKeyInForceIsGauged(@TempDir Path pki)
            throws Exception {
        KeyPair previous = TestKeys.pair(80);
        KeyPair current = TestKeys.pair(81);
        MovableClock clock = new MovableClock(Instant.ofEpochSecond(1_000));
        byte[] signed = MasterSuccessions.signedBytes(
                previous.getPublic().getEncoded(), current.getPublic().getEncoded(), 1_000_000, 1_061_000);
        MasterSuccession record = new MasterSuccession(
                previous.getPublic().getEncoded(),
                current.getPublic().getEncoded(),
                1_000_000,
                61_000 + 1_000_000,
                Rsa.sign(previous.getPrivate(), signed),
                null);
        Files.write(pki.resolve(MasterKeyRotation.CHAIN_FILE), MasterSuccessions.encodeChain(List.of(record)));
        Files.writeString(pki.resolve(MasterKeyRotation.PREVIOUS_FILE), Pem.privateKeyPkcs1(previous.getPrivate()));
        Files.setPosixFilePermissions(
                pki.resolve(MasterKeyRotation.PREVIOUS_FILE), PosixFilePermissions.fromString("r--------"));
        MasterKeyring keyring = MasterKeyring.open(pki, current, clock);
        EventStream events = new EventStream(clock);
        List<SessionMessage.Event> seen = new CopyOnWriteArrayList<>();
        events.subscribe("test", Optional.empty(), "brine/key/master/*", -1, (number, event) -> seen.add(event));
        MasterMetrics metrics = new MasterMetrics();
        metrics.masterKeys(keyring);
        assertThat(metrics.scrape())
                .contains(
                        "brine_master_key_rotations_total 0.0",
                        "brine_master_key_retirements_total 0.0",
                        "brine_master_key_last_rotation_timestamp_seconds 1000.0",
                        "brine_master_key_grace_remaining_seconds 61.0",
                        "brine_master_key_chain_records 1.0");

        String fingerprint = Fingerprints.of(current.getPublic());
        metrics.masterKeyLoaded();
        events.masterKeyLoaded(record, fingerprint, 3, 1);
        clock.advance(Duration.ofSeconds(61));
        String retired = Fingerprints.of(keyring.retireIfDue().orElseThrow());
        metrics.masterKeyRetired();
        events.masterKeyRetired(retired);

        assertThat(metrics.scrape())
                .contains(
                        "brine_master_key_rotations_total 1.0",
                        "brine_master_key_retirements_total 1.0",
                        "brine_master_key_grace_remaining_seconds 0.0");
        assertThat(seen)
                .extracting(SessionMessage.Event::tag)
                .containsExactly("brine/key/master/rotated", "brine/key/master/retired");
        assertThat(seen.get(0).data())
                .containsEntry("fingerprint", fingerprint)
                .containsEntry("previous", Fingerprints.of(previous.getPublic()))
                .containsEntry("signing_key_signed", false)
                .containsEntry("sent", 3)
                .containsEntry("unreachable", 1)
                .containsEntry("grace_until", Instant.ofEpochMilli(1_061_000).toString());
        assertThat(seen.get(1).data()).containsEntry("fingerprint", Fingerprints.of(previous.getPublic()));
        assertThat(pki.resolve(MasterKeyRotation.PREVIOUS_FILE)).doesNotExist();
    }
}
