package io.brine.master.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.targeting.Targets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GrainsStoreTest {

    @Test
    void aMinionCannotClassifyItselfButItsSignedClassificationIsTargetable() {
        GrainsStore grains =
                new GrainsStore(id -> id.equals("web1") ? Map.of("role", "web") : Map.of(), Clock.systemUTC());
        grains.put("web1", Map.of("os", "Debian", "class", Map.of("role", "db")));
        grains.put("web2", Map.of("os", "Debian", "class", Map.of("role", "web")));

        assertThat(grains.get("web1"))
                .containsEntry("class", Map.of("role", "web"))
                .containsEntry("os", "Debian");
        assertThat(grains.get("web2")).doesNotContainKey("class").containsEntry("os", "Debian");
        assertThat(Targets.parse("grain", "class:role:web").matches("web1", grains.get("web1")))
                .isTrue();
        assertThat(Targets.parse("grain", "class:role:web").matches("web2", grains.get("web2")))
                .isFalse();
        assertThat(Targets.parse("compound", "G@class:role:web").matches("web1", grains.get("web1")))
                .isTrue();
        assertThat(grains.get("web3")).isEqualTo(Map.of("id", "web3"));
    }

    @Test
    void withoutClassificationsGrainsAreAsReported() {
        GrainsStore grains = new GrainsStore(id -> Map.of(), Clock.systemUTC());
        Map<String, Object> reported = new LinkedHashMap<>();
        reported.put("os", "Debian");
        reported.put("num_cpus", 2L);
        reported.put("ipv4", new ArrayList<>(List.of("10.0.0.1", "127.0.0.1")));
        reported.put("nested", new HashMap<>(Map.of("a", new HashMap<>(Map.of("b", "yes")))));
        reported.put("nothing", null);
        grains.put("web1", reported);
        Map<String, Object> withId = new HashMap<>(reported);
        withId.put("id", "web1");
        assertThat(grains.get("web1")).isEqualTo(withId);
        assertThat(Targets.parse("grain", "ipv4:10.0.0.1").matches("web1", grains.get("web1")))
                .isTrue();
        assertThat(Targets.parse("grain", "nested:a:b:yes").matches("web1", grains.get("web1")))
                .isTrue();
    }

    @Test
    void theIdGrainIsTheSessionsWhateverTheMinionClaims() {
        GrainsStore grains = new GrainsStore(id -> Map.of(), Clock.systemUTC());
        grains.put("web1", Map.of("id", "db1", "os", "Debian"));
        grains.put("web2", Map.of("os", "Debian"));
        grains.put("web3", Map.of());

        assertThat(grains.get("web1")).containsEntry("id", "web1").containsEntry("os", "Debian");
        assertThat(grains.get("web2")).containsEntry("id", "web2");
        assertThat(grains.get("web3")).isEqualTo(Map.of("id", "web3"));
        assertThat(Targets.parse("grain", "id:db1").matches("web1", grains.get("web1")))
                .isFalse();
        assertThat(Targets.parse("compound", "G@id:web1").matches("web1", grains.get("web1")))
                .isTrue();
        assertThat(Targets.parse("compound", "P@id:web").matches("web2", grains.get("web2")))
                .isTrue();
    }

    @Test
    void storedGrainsAreImmutableAndNotTheReportedMap() {
        GrainsStore grains = new GrainsStore(id -> Map.of(), Clock.systemUTC());
        Map<String, Object> reported = new HashMap<>(Map.of("roles", new ArrayList<>(List.of("web"))));
        grains.put("web1", reported);
        reported.put("os", "changed later");

        assertThat(grains.get("web1")).doesNotContainKey("os");
        assertThatThrownBy(() -> grains.get("web1").put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
        @SuppressWarnings("unchecked")
        List<Object> roles = (List<Object>) grains.get("web1").get("roles");
        assertThatThrownBy(() -> roles.add("db")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void equalShortStringsAreSharedAmongMinionsAndLongOnesAreNot() {
        GrainsStore grains = new GrainsStore(id -> Map.of(), Clock.systemUTC());
        String longValue = "x".repeat(GrainsStore.POOLED_MAX_LENGTH + 1);
        // new String(...): distinct instances, as two decoded messages would give.
        grains.put("web1", Map.of(new String("os"), new String("Debian"), "motd", new String(longValue)));
        grains.put("web2", Map.of(new String("os"), new String("Debian"), "motd", new String(longValue)));

        Map.Entry<String, Object> os1 = entry(grains.get("web1"), "os");
        Map.Entry<String, Object> os2 = entry(grains.get("web2"), "os");
        assertThat(os1.getKey()).isSameAs(os2.getKey());
        assertThat(os1.getValue()).isSameAs(os2.getValue());
        assertThat(grains.get("web1").get("motd"))
                .isEqualTo(longValue)
                .isNotSameAs(grains.get("web2").get("motd"));
    }

    @Test
    void thePoolStopsGrowingAtItsBoundAndGrainsStayCorrect() {
        GrainsStore grains = new GrainsStore(id -> Map.of(), Clock.systemUTC());
        for (int i = 0; i < GrainsStore.POOL_MAX_ENTRIES; i++) {
            grains.put("m" + i, Map.of("serial", "s" + i));
        }
        grains.put("late1", Map.of("serial", new String("late")));
        grains.put("late2", Map.of("serial", new String("late")));

        assertThat(grains.get("late1")).containsEntry("serial", "late");
        assertThat(grains.get("late1").get("serial"))
                .isNotSameAs(grains.get("late2").get("serial"));
        assertThat(grains.get("m7")).containsEntry("serial", "s7");
    }

    private static Map.Entry<String, Object> entry(Map<String, Object> map, String key) {
        return map.entrySet().stream()
                .filter(e -> e.getKey().equals(key))
                .findFirst()
                .orElseThrow();
    }
}
