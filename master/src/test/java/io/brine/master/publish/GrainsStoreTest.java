package io.brine.master.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.target.Targets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GrainsStoreTest {

    @Test
    void aMinionCannotClassifyItselfButItsSignedClassificationIsTargetable() {
        GrainsStore grains = new GrainsStore(id -> id.equals("web1") ? Map.of("role", "web") : Map.of());
        grains.put("web1", Map.of("os", "Debian", "class", Map.of("role", "db")));
        grains.put("web2", Map.of("os", "Debian", "class", Map.of("role", "web")));

        assertThat(grains.get("web1")).containsEntry("class", Map.of("role", "web")).containsEntry("os", "Debian");
        assertThat(grains.get("web2")).doesNotContainKey("class").containsEntry("os", "Debian");
        assertThat(Targets.parse("grain", "class:role:web").matches("web1", grains.get("web1"))).isTrue();
        assertThat(Targets.parse("grain", "class:role:web").matches("web2", grains.get("web2"))).isFalse();
        assertThat(Targets.parse("compound", "G@class:role:web").matches("web1", grains.get("web1"))).isTrue();
        assertThat(grains.get("web3")).isEmpty();
    }

    @Test
    void withoutClassificationsGrainsAreAsReported() {
        GrainsStore grains = new GrainsStore();
        Map<String, Object> reported = Map.of("os", "Debian");
        grains.put("web1", reported);
        assertThat(grains.get("web1")).isSameAs(reported);
    }
}
