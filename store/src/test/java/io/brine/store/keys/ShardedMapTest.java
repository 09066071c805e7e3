package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ShardedMapTest {

    @Test
    void behavesAsAMapThroughEveryWriteAndLeavesEarlierVersionsUnchanged() {
        Random random = new Random(11);
        Map<String, Integer> expected = new HashMap<>();
        ShardedMap<Integer> map = ShardedMap.of();
        for (int step = 0; step < 5000; step++) {
            String key = "m" + random.nextInt(300);
            ShardedMap<Integer> before = map;
            Map<String, Integer> expectedBefore = new HashMap<>(expected);
            if (random.nextInt(3) == 0) {
                map = map.without(key);
                expected.remove(key);
            } else {
                map = map.with(key, step);
                expected.put(key, step);
            }
            assertThat(map).isEqualTo(expected);
            assertThat(map.size()).isEqualTo(expected.size());
            assertThat(before).isEqualTo(expectedBefore);
        }
        assertThat(ShardedMap.copyOf(expected)).isEqualTo(expected).hasSize(expected.size());
        assertThat(map.get(42)).isNull();
        assertThat(map.containsKey("nope")).isFalse();
    }
}
