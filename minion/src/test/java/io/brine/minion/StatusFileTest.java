package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.protocol.testing.MovableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StatusFileTest {

    private static final Instant T0 = Instant.parse("2025-03-01T10:00:00Z");

    @TempDir
    Path dir;

    private final MovableClock clock = new MovableClock(T0);

    private StatusFile status() {
        return new StatusFile("web1", dir.resolve("cache/status.json"), clock, "aa:bb");
    }

    private JsonNode written() throws Exception {
        return new ObjectMapper().readTree(Files.readString(dir.resolve("cache/status.json")));
    }

    @Test
    void everyChangeIsWrittenWithEveryField() throws Exception {
        StatusFile status = status();
        status.masterKey("cc:dd");
        status.enter(MinionState.PENDING, "waiting for an admin", Duration.ofSeconds(10));
        JsonNode json = written();
        assertThat(json.get("id").asText()).isEqualTo("web1");
        assertThat(json.get("state").asText()).isEqualTo("pending");
        assertThat(json.get("reason").asText()).isEqualTo("waiting for an admin");
        assertThat(json.get("since").asText()).isEqualTo(T0.toString());
        assertThat(json.get("next_attempt").asText())
                .isEqualTo(T0.plusSeconds(10).toString());
        assertThat(json.get("fingerprint").asText()).isEqualTo("aa:bb");
        assertThat(json.get("master_fingerprint").asText()).isEqualTo("cc:dd");
        assertThat(json.get("generation").isNull()).isTrue();
        assertThat(json.get("stale_publications").asLong()).isZero();
        assertThat(json.get("resumable_until").isNull()).isTrue();
    }

    @Test
    void aStoredTicketIsWrittenAtOnceKeptAcrossStateChangesAndClearedWhenGivenUp() throws Exception {
        StatusFile status = status();
        status.enter(MinionState.ACCEPTED, "accepted", null);
        status.ticket(T0.plusSeconds(86_400));
        assertThat(written().get("resumable_until").asText())
                .isEqualTo(T0.plusSeconds(86_400).toString());
        status.enter(MinionState.CONNECTING, "master lost the session", null);
        assertThat(written().get("resumable_until").asText())
                .isEqualTo(T0.plusSeconds(86_400).toString());
        status.ticket(null);
        assertThat(written().get("resumable_until").isNull()).isTrue();
        assertThat(status.current().resumableUntil()).isNull();
    }

    @Test
    void aStalePublicationIsCountedAndWrittenAtOnceAndTheCountSurvivesStateChanges() throws Exception {
        StatusFile status = status();
        status.enter(MinionState.ACCEPTED, "accepted", null);
        status.stalePublication();
        assertThat(written().get("stale_publications").asLong()).isEqualTo(1);
        status.stalePublication();
        status.enter(MinionState.CONNECTING, "master lost the session", null);
        assertThat(written().get("stale_publications").asLong()).isEqualTo(2);
        assertThat(status.current().stalePublications()).isEqualTo(2);
    }

    @Test
    void sinceIsWhenTheStateBeganNotItsLastChange() throws Exception {
        StatusFile status = status();
        status.enter(MinionState.CONNECTING, "connecting to the master", null);
        clock.advance(Duration.ofMinutes(1));
        status.enter(MinionState.CONNECTING, "no answer from the master", Duration.ofSeconds(10));
        assertThat(status.current().since()).isEqualTo(T0);
        assertThat(written().get("reason").asText()).isEqualTo("no answer from the master");
        clock.advance(Duration.ofMinutes(1));
        status.enter(MinionState.ACCEPTED, "accepted", null);
        assertThat(status.current().since()).isEqualTo(T0.plus(Duration.ofMinutes(2)));
        assertThat(written().get("next_attempt").isNull()).isTrue();
    }

    @Test
    void aSessionsGenerationIsWrittenWithItsStateAndAnInstalledOneAtOnce() throws Exception {
        StatusFile status = status();
        status.generation(7);
        assertThat(dir.resolve("cache/status.json")).doesNotExist();
        status.enter(MinionState.ACCEPTED, "accepted", null);
        assertThat(written().get("generation").asLong()).isEqualTo(7);
        status.installed(8);
        assertThat(written().get("generation").asLong()).isEqualTo(8);
        assertThat(written().get("state").asText()).isEqualTo("accepted");
    }

    /** The state and reason written once a minion in {@code state} closes. */
    private String stoppedFrom(MinionState state) throws Exception {
        StatusFile status = status();
        status.enter(state, "why", null);
        status.stopped();
        return written().get("state").asText() + " (" + written().get("reason").asText() + ")";
    }

    @Test
    void stoppingKeepsARejectionOrAMasterKeyMismatchAsTheFinalStateAndReason() throws Exception {
        assertThat(stoppedFrom(MinionState.MASTER_KEY_MISMATCH)).isEqualTo("master_key_mismatch (why)");
        assertThat(stoppedFrom(MinionState.REJECTED)).isEqualTo("rejected (why)");
        assertThat(stoppedFrom(MinionState.ACCEPTED)).isEqualTo("stopped (stopped)");
        assertThat(stoppedFrom(MinionState.PENDING)).isEqualTo("stopped (stopped)");
    }

    @Test
    void withoutAFileNothingIsWritten() {
        StatusFile status = new StatusFile("web1", null, clock, "aa:bb");
        status.enter(MinionState.ACCEPTED, "accepted", null);
        assertThat(status.current().state()).isEqualTo(MinionState.ACCEPTED);
        assertThat(dir).isEmptyDirectory();
    }
}
