package io.brine.master.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import io.brine.cluster.ClusterHealth;
import io.brine.daemon.testing.LogCapture;
import io.brine.master.jobs.JobRecord;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.testing.TestKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The announcement a master writes for the others: only the cluster's master key makes or opens one. */
class ClusterPublicationsTest {

    private static final Supplier<ClusterHealth> CONNECTED =
            () -> new ClusterHealth(ClusterHealth.State.CONNECTED, Instant.EPOCH);
    private static final String JID = "20261125221500123456";

    private final ClusterPublications cluster = new ClusterPublications(
            null, null, TestKeys.pair(250), Clock.systemUTC(), "m1:/var/cache/brine", CONNECTED);
    private final PublishLoad load = new PublishLoad(
            JID,
            new PublishLoad.Target("glob", "web*"),
            "cmd.run",
            List.of("echo secret-argument"),
            Map.of("cwd", "/tmp"),
            30,
            "root");
    private final JobRecord record = new JobRecord(
            JID,
            "2026-11-25T22:15:00Z",
            "root",
            "glob",
            "web*",
            "cmd.run",
            load.args(),
            load.kwargs(),
            30,
            List.of("web1", "web2"));

    @Test
    void anAnnouncementOpensToTheSameJobOnAnotherMaster() throws Exception {
        byte[] data = cluster.encode(record, load, 1234L);

        ClusterPublications other = new ClusterPublications(
                null,
                null,
                TestKeys.pair(250),
                Clock.fixed(Instant.ofEpochMilli(1234L + 1000), ZoneOffset.UTC),
                "m2:/var/cache/brine",
                CONNECTED);
        var heard = other.decode(JID, data);

        assertThat(heard.origin()).isEqualTo("m1:/var/cache/brine");
        assertThat(heard.issuedMs()).isEqualTo(1234L);
        assertThat(heard.load()).isEqualTo(load);
        assertThat(heard.record()).isEqualTo(record);
    }

    @Test
    void anErrorDeliveringAnotherMastersJobIsLoggedNotLost() throws Exception {
        byte[] data = cluster.encode(record, load, 1234L);
        ClusterPublications other = new ClusterPublications(
                null,
                null,
                TestKeys.pair(250),
                Clock.fixed(Instant.ofEpochMilli(1234L + 1000), ZoneOffset.UTC),
                "m2:/var/cache/brine",
                CONNECTED);

        try (LogCapture logs = LogCapture.of(ClusterPublications.class)) {
            other.heard(JID, data, (heardRecord, heardLoad, issuedMs) -> {
                throw new IllegalStateException("the job cache's disk went away");
            });

            assertThat(logs.at(Level.WARN))
                    .singleElement()
                    .asString()
                    .contains(
                            "Job '" + JID + "'", "not delivered here", "the job cache's disk went away", "unconfirmed");
        }
    }

    @Test
    void itsOwnAnnouncementAndOneTooOldToDeliverAreNotOpened() throws Exception {
        long now = 1_800_000_000_000L;
        byte[] fresh = cluster.encode(record, load, now);
        ClusterPublications self = new ClusterPublications(
                null,
                null,
                TestKeys.pair(250),
                Clock.fixed(Instant.ofEpochMilli(now), ZoneOffset.UTC),
                "m1:/var/cache/brine",
                CONNECTED);
        assertThat(self.decode(JID, fresh)).as("this master's own").isNull();

        ClusterPublications later = new ClusterPublications(
                null,
                null,
                TestKeys.pair(250),
                Clock.fixed(Instant.ofEpochMilli(now + ClusterPublications.MAX_AGE.toMillis() + 1), ZoneOffset.UTC),
                "m2:/var/cache/brine",
                CONNECTED);
        assertThat(later.decode(JID, fresh))
                .as("one millisecond past the age it is delivered at")
                .isNull();
        ClusterPublications inTime = new ClusterPublications(
                null,
                null,
                TestKeys.pair(250),
                Clock.fixed(Instant.ofEpochMilli(now + ClusterPublications.MAX_AGE.toMillis()), ZoneOffset.UTC),
                "m2:/var/cache/brine",
                CONNECTED);
        assertThat(inTime.decode(JID, fresh).load()).isEqualTo(load);
    }

    @Test
    void theLoadIsNotReadableInZooKeeper() throws Exception {
        byte[] data = cluster.encode(record, load, 1234L);

        assertThat(new String(data, StandardCharsets.ISO_8859_1)).doesNotContain("secret-argument");
    }

    @Test
    void anyChangedByteOrAnotherJidOrAnotherMasterKeyIsRefused() throws Exception {
        byte[] data = cluster.encode(record, load, 1234L);
        for (int i = 0; i < data.length; i += 37) {
            byte[] tampered = data.clone();
            tampered[i] ^= 1;
            assertThatThrownBy(() -> cluster.decode(JID, tampered)).isInstanceOf(IOException.class);
        }
        assertThatThrownBy(() -> cluster.decode("20261125221500123457", data)).isInstanceOf(IOException.class);
        ClusterPublications stranger =
                new ClusterPublications(null, null, TestKeys.pair(248), Clock.systemUTC(), "m3", CONNECTED);
        assertThatThrownBy(() -> stranger.decode(JID, data)).hasMessageContaining("not signed");
        assertThatThrownBy(() -> cluster.decode(JID, stranger.encode(record, load, 1L)))
                .hasMessageContaining("not signed");
    }
}
