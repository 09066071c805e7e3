package io.brine.store.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditLogTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-03-01T12:00:00Z"), ZoneOffset.UTC);

    @TempDir
    Path tmp;

    @Test
    void everyEventNameIsAreaDashOutcomeInLowerCaseAndAnotherStyleIsRefused() {
        assertThat(AuditEvent.builder(AuditEvent.keyChange("accepted"), "master")
                        .build()
                        .event())
                .isEqualTo("key-accepted");
        for (String name : List.of("key.pending", "Auth-pending", "auth_pending", "auth-", "-auth", "")) {
            assertThatThrownBy(() -> AuditEvent.builder(name, "master").build())
                    .as(name)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void writesOneJsonObjectPerLineWithTimeFirstAndUnsetFieldsLeftOut() throws IOException {
        Path cachedir = tmp.resolve("cache");
        try (AuditLog log = AuditLog.open(cachedir, CLOCK)) {
            log.record(AuditEvent.builder("key-accepted", "brine-key:root")
                    .id("web1")
                    .from("pending")
                    .to("accepted")
                    .fingerprint("ab:cd")
                    .reason("accept by admin")
                    .build());
            log.record(AuditEvent.builder("auth-refused", "master")
                    .id("web2")
                    .source("10.0.0.1:4506")
                    .reason("line\nbreak \"quoted\"")
                    .build());
        }

        List<String> lines = Files.readAllLines(cachedir.resolve("audit.log"));
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0))
                .isEqualTo("{\"time\":\"2026-03-01T12:00:00Z\",\"event\":\"key-accepted\","
                        + "\"actor\":\"brine-key:root\",\"id\":\"web1\",\"from\":\"pending\",\"to\":\"accepted\","
                        + "\"fingerprint\":\"ab:cd\",\"reason\":\"accept by admin\"}");
        JsonNode second = JSON.readTree(lines.get(1));
        assertThat(second.get("reason").asText()).isEqualTo("line\nbreak \"quoted\"");
        assertThat(second.get("source").asText()).isEqualTo("10.0.0.1:4506");
        assertThat(second.has("fingerprint")).isFalse();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(cachedir.resolve("audit.log"))))
                .isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(cachedir)))
                .isEqualTo("rwx------");
    }

    @Test
    void appendsToAnExistingLog() throws IOException {
        try (AuditLog log = AuditLog.open(tmp, CLOCK)) {
            log.record(AuditEvent.builder("a", "x").build());
        }
        try (AuditLog log = AuditLog.open(tmp, CLOCK)) {
            log.record(AuditEvent.builder("b", "x").build());
        }
        assertThat(Files.readAllLines(tmp.resolve("audit.log"))).hasSize(2);
    }

    @Test
    void refusesASymlinkedLogFile() throws IOException {
        Path target = tmp.resolve("elsewhere");
        Files.writeString(target, "");
        Files.createSymbolicLink(tmp.resolve("audit.log"), target);

        assertThatThrownBy(() -> AuditLog.open(tmp, CLOCK))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("symbolic link");
        assertThat(Files.readString(target)).isEmpty();
    }

    @Test
    void linesFromManyThreadsAndTwoInstancesNeverInterleave() throws Exception {
        try (AuditLog first = AuditLog.open(tmp, CLOCK);
                AuditLog second = AuditLog.open(tmp, CLOCK)) {
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                AuditLog log = t % 2 == 0 ? first : second;
                int thread = t;
                Thread worker = new Thread(() -> {
                    for (int i = 0; i < 250; i++) {
                        log.record(AuditEvent.builder("test", "t" + thread)
                                .id("id" + i)
                                .reason("x".repeat(300))
                                .build());
                    }
                });
                worker.start();
                threads.add(worker);
            }
            for (Thread thread : threads) {
                thread.join();
            }
        }
        List<String> lines = Files.readAllLines(tmp.resolve("audit.log"));
        assertThat(lines).hasSize(1000);
        Set<String> seen = new HashSet<>();
        for (String line : lines) {
            JsonNode node = JSON.readTree(line);
            seen.add(node.get("actor").asText() + "/" + node.get("id").asText());
        }
        assertThat(seen).hasSize(1000);
    }
}
