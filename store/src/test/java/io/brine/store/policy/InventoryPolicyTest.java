package io.brine.store.policy;

import static io.brine.store.policy.Attempts.T0;
import static io.brine.store.policy.Attempts.attempt;
import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.testing.MovableClock;
import io.brine.store.keys.PolicyVerdict;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The inventory: a record, the window after created_at, the source address and the claimed addresses. */
class InventoryPolicyTest {

    static final Map<String, Object> CLAIMS =
            Map.of("ipv4", List.of("127.0.0.1", "10.0.0.5"), "ipv6", List.of("::1", "fe80::1", "2001:db8::5"));

    @TempDir
    Path dir;

    final MovableClock clock = new MovableClock(T0.plusSeconds(600));
    InventoryPolicy policy;

    @BeforeEach
    void setUp() throws Exception {
        Path file = Files.writeString(dir.resolve("inventory.yaml"), """
                # made by the provisioning system
                - id: web1.example.com
                  created_at: 2026-11-22T10:00:00Z
                  addresses: [10.0.0.5, '2001:db8::5']
                - id: web2.example.com
                  created_at: 1795341600
                  addresses: ['10.0.0.6']
                - id: dup
                  created_at: 2026-11-22T10:00:00Z
                  addresses: [10.0.0.7]
                - id: dup
                  created_at: 2026-11-22T10:00:00Z
                  addresses: [10.0.0.7]
                - id: Bad
                  created_at: 2026-11-22T10:00:00Z
                  addresses: [10.0.0.8]
                - id: nohost
                  created_at: 2026-11-22T10:00:00Z
                  addresses: [db.example.com]
                """);
        policy = new InventoryPolicy(file, Duration.ofHours(2), clock);
    }

    private PolicyDecision ask(String id, Map<String, Object> claims, String from) {
        return policy.evaluate(attempt(id, 1, claims, null, null, from));
    }

    @Test
    void anExpectedMachineWithinTheWindowFromItsAddressIsAccepted() {
        PolicyDecision decision = ask("web1.example.com", CLAIMS, "10.0.0.5");
        assertThat(decision.verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(decision.rule()).isEqualTo("inventory_file " + dir.resolve("inventory.yaml") + " web1.example.com");
        assertThat(ask("web1.example.com", CLAIMS, "2001:db8:0:0::5").verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        assertThat(ask("web1.example.com", CLAIMS, "::ffff:10.0.0.5").verdict()).isEqualTo(PolicyVerdict.ACCEPT);
    }

    @Test
    void theWindowIsCountedFromCreatedAt() {
        clock.set(T0.plus(Duration.ofHours(2)));
        assertThat(ask("web1.example.com", CLAIMS, "10.0.0.5").verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        clock.set(T0.plus(Duration.ofHours(2)).plusSeconds(1));
        assertThat(ask("web1.example.com", CLAIMS, "10.0.0.5").reason()).contains("has passed");
        clock.set(T0.minus(Duration.ofMinutes(4)));
        assertThat(ask("web1.example.com", CLAIMS, "10.0.0.5").verdict()).isEqualTo(PolicyVerdict.ACCEPT);
        clock.set(T0.minus(Duration.ofMinutes(6)));
        assertThat(ask("web1.example.com", CLAIMS, "10.0.0.5").reason()).contains("after now");
    }

    @Test
    void epochSecondsWorkAsCreatedAt() {
        clock.set(Instant.ofEpochSecond(1795341600).plusSeconds(60));
        assertThat(ask("web2.example.com", Map.of("ipv4", "10.0.0.6"), "10.0.0.6")
                        .verdict())
                .isEqualTo(PolicyVerdict.ACCEPT);
    }

    @Test
    void theSourceAddressMustBeTheRecords() {
        assertThat(ask("web1.example.com", CLAIMS, "10.0.0.99").reason()).contains("comes from '10.0.0.99'");
        assertThat(ask("web1.example.com", CLAIMS, "unknown").verdict()).isEqualTo(PolicyVerdict.NONE);
    }

    @Test
    void everyClaimedAddressBesidesLoopbackAndLinkLocalMustBeTheRecords() {
        assertThat(ask("web1.example.com", Map.of("ipv4", List.of("10.0.0.5", "172.17.0.1")), "10.0.0.5")
                        .reason())
                .contains("claims the address 172.17.0.1");
        assertThat(ask("web1.example.com", Map.of("ipv4", List.of("127.0.0.1")), "10.0.0.5")
                        .reason())
                .contains("claims no address");
        assertThat(ask("web1.example.com", Map.of(), "10.0.0.5").reason()).contains("claims no address");
        assertThat(ask("web1.example.com", Map.of("ipv4", List.of("10.0.0.5", "web1")), "10.0.0.5")
                        .reason())
                .contains("not an IP address");
        assertThat(ask("web1.example.com", Map.of("ipv4", "10.0.0.5"), "10.0.0.5")
                        .verdict())
                .isEqualTo(PolicyVerdict.ACCEPT);
    }

    @Test
    void noRecordDuplicateRecordsAndBadRecordsAcceptNothing() {
        assertThat(ask("web3.example.com", CLAIMS, "10.0.0.5").reason()).startsWith("no record for");
        assertThat(ask("dup", Map.of("ipv4", "10.0.0.7"), "10.0.0.7").reason()).startsWith("no record for");
        assertThat(ask("nohost", Map.of("ipv4", "10.0.0.7"), "10.0.0.7").reason())
                .startsWith("no record for");
    }

    @Test
    void parseReportsEachProblemAndJsonFilesAreJson() throws Exception {
        Inventory yaml =
                Inventory.parse(dir.resolve("inventory.yaml"), Files.readAllBytes(dir.resolve("inventory.yaml")));
        assertThat(yaml.size()).isEqualTo(2);
        assertThat(yaml.problems())
                .hasSize(3)
                .anySatisfy(p -> assertThat(p).startsWith("entry 5: 'Bad'"))
                .anySatisfy(p -> assertThat(p).startsWith("entry 6: addresses: 'db.example.com' is not an IP"))
                .anySatisfy(p -> assertThat(p).startsWith("dup has more than one record"));

        Inventory json = Inventory.parse(Path.of("inv.json"), """
                [{"id": "web1", "created_at": "2026-11-22T10:00:00+01:00", "addresses": ["10.0.0.5"]},
                 {"id": "web2", "created_at": "yesterday", "addresses": ["10.0.0.6"]},
                 {"id": "web3", "created_at": 0, "addresses": ["10.0.0.6"], "role": "web"}]
                """.getBytes());
        assertThat(json.record("web1").orElseThrow().createdAt()).isEqualTo(T0.minus(Duration.ofHours(1)));
        assertThat(json.problems()).hasSize(2);
        assertThat(Inventory.parse(Path.of("inv.json"), "{".getBytes()).problems())
                .singleElement()
                .satisfies(p -> assertThat(p).startsWith("not valid JSON"));
        assertThat(Inventory.parse(Path.of("inv.yaml"), "web1: x".getBytes()).problems())
                .singleElement()
                .satisfies(p -> assertThat(p).startsWith("expected a list"));
    }
}
