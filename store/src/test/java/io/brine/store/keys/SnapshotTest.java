package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.Snapshot.Entry;
import io.brine.store.keys.Snapshot.FileStamp;
import java.nio.file.attribute.FileTime;
import java.security.interfaces.RSAPublicKey;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class SnapshotTest {

    private static final RSAPublicKey KEY = (RSAPublicKey) TestKeys.pair(0).getPublic();
    private static final List<KeyState> STATES =
            List.of(KeyState.PENDING, KeyState.ACCEPTED, KeyState.REJECTED, KeyState.DENIED);

    private static Entry entry(String id, KeyState state) {
        return Entry.of(
                new StoredKey(id, state, KEY, "fp"),
                new FileStamp(id, 1, FileTime.fromMillis(0), FileTime.fromMillis(0)));
    }

    @Test
    void countsAndAcceptedIdsFollowEveryWriteAsAFullRecountWould() {
        Random random = new Random(7);
        Snapshot snapshot = Snapshot.EMPTY;
        for (int step = 0; step < 2000; step++) {
            String id = "m" + random.nextInt(40);
            int action = random.nextInt(4);
            if (action == 0) {
                snapshot = snapshot.without(STATES.get(random.nextInt(STATES.size())), id);
            } else if (action == 1) {
                snapshot = snapshot.synced(step, List.of());
            } else {
                snapshot = snapshot.with(entry(id, STATES.get(random.nextInt(STATES.size()))));
            }
            if (random.nextInt(5) == 0) {
                snapshot.acceptedIds(); // computed now and then, so later snapshots may inherit it
            }
            Snapshot recounted = new Snapshot(
                    snapshot.generation,
                    snapshot.dirStamps,
                    snapshot.keys,
                    snapshot.denied,
                    snapshot.problems,
                    snapshot.scannedAtNanos);
            for (KeyState state : KeyState.values()) {
                assertThat(snapshot.count(state)).as("step %d, %s", step, state).isEqualTo(recounted.count(state));
            }
            assertThat(snapshot.acceptedIds()).as("step %d", step).containsExactlyElementsOf(recounted.acceptedIds());
        }
    }

    @Test
    void acceptedIdsAreSorted() {
        Map<String, Entry> keys = new HashMap<>();
        for (String id : List.of("web10", "db1", "web2")) {
            keys.put(id, entry(id, KeyState.ACCEPTED));
        }
        keys.put("new1", entry("new1", KeyState.PENDING));
        Snapshot snapshot = new Snapshot(0, List.of(), keys, Map.of(), List.of(), 0);
        assertThat(snapshot.acceptedIds()).containsExactly("db1", "web10", "web2");
        assertThat(snapshot.with(entry("a0", KeyState.ACCEPTED)).acceptedIds())
                .containsExactlyElementsOf(new TreeSet<>(List.of("a0", "db1", "web10", "web2")));
    }
}
