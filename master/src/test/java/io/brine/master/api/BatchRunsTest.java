package io.brine.master.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.brine.protocol.BatchSize;
import io.brine.protocol.message.SessionMessage;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The batch runs' order (a ping, then N or N % of those that answered at a time, the next once this one returned),
 * and their cap, over a publisher that records what it is asked and whose minions answer when the test says.
 */
class BatchRunsTest {

    /** One publication: what was asked and who hears its returns. */
    record Published(String jid, SessionMessage.PublishRequest request, Consumer<SessionMessage.ReturnEvent> watcher) {

        void answer(String... ids) {
            for (String id : ids) {
                watcher.accept(new SessionMessage.ReturnEvent(jid, id, true, 0, true, 0));
            }
        }
    }

    final List<Published> published = new CopyOnWriteArrayList<>();
    final List<String> fleet = List.of("a", "b", "c", "d", "e");
    List<String> unreachable = List.of();
    BatchRuns runs;

    BatchRuns runs(int max) {
        runs = new BatchRuns(
                (name, acl, request, watcher) -> {
                    String jid = String.format("2026010100000000%04d", published.size());
                    published.add(new Published(jid, request, watcher));
                    List<String> minions = request.targetType().equals("list")
                            ? Arrays.asList(request.target().split(","))
                            : fleet;
                    return new SessionMessage.PublishReply(
                            jid, minions, request.targetType().equals("list") ? List.of() : unreachable, null);
                },
                max);
        return runs;
    }

    @AfterEach
    void close() {
        if (runs != null) {
            runs.close();
        }
    }

    Map<String, Object> start(String size) throws ApiError {
        return runs.start(
                "api:ci",
                Optional.empty(),
                new SessionMessage.PublishRequest("glob", "*", "test.echo", List.of("hi"), Map.of(), 30),
                BatchSize.parse(size),
                () -> {});
    }

    @Test
    void batchesFollowOneAnotherOverTheMinionsThatAnsweredThePing() throws Exception {
        runs(BatchRuns.MAX_ACTIVE);
        unreachable = List.of("c"); // not connected: not waited for, left out of the batches
        String id = (String) start("2").get("batch_id");
        assertThat(published).hasSize(1);
        assertThat(published.get(0).request().fun()).isEqualTo("test.ping");
        published.get(0).answer("e", "a", "b");
        assertThat(published).hasSize(1);
        published.get(0).answer("d");
        // Each batch only once the one before returned.
        await().until(() -> published.size() == 2);
        assertThat(published.get(1).request().target()).isEqualTo("a,b");
        assertThat(published.get(1).request().targetType()).isEqualTo("list");
        assertThat(published.get(1).request().fun()).isEqualTo("test.echo");
        assertThat(published.get(1).request().args()).containsExactly("hi");
        published.get(1).answer("a");
        assertThat(published).hasSize(2);
        published.get(1).answer("b");
        await().until(() -> published.size() == 3);
        assertThat(published.get(2).request().target()).isEqualTo("d,e");
        published.get(2).answer("d", "e");
        await().until(() -> runs.show(id, "api:ci", false).get("state").equals("done"));
        Map<String, Object> shown = runs.show(id, "api:ci", false);
        assertThat(shown.get("answered")).isEqualTo(List.of("a", "b", "d", "e"));
        assertThat((List<?>) shown.get("batches")).hasSize(2);
        assertThat(((Map<?, ?>) ((List<?>) shown.get("batches")).get(1)).get("returned"))
                .isEqualTo(List.of("d", "e"));
        assertThatThrownBy(() -> runs.show(id, "api:other", false)).isInstanceOf(ApiError.class);
        assertThat(runs.show(id, "api:other", true).get("batch_id")).isEqualTo(id);
    }

    @Test
    void aPercentIsOfTheMinionsThatAnswered() throws Exception {
        runs(BatchRuns.MAX_ACTIVE);
        start("40%");
        published.get(0).answer("a", "b", "c", "d", "e");
        await().until(() -> published.size() == 2);
        assertThat(published.get(1).request().target()).isEqualTo("a,b");
    }

    @Test
    void oneRunPastTheCapIsRefusedWith503UntilOneEnds() throws Exception {
        runs(BatchRuns.MAX_ACTIVE);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < BatchRuns.MAX_ACTIVE; i++) {
            ids.add((String) start("1").get("batch_id"));
        }
        int before = published.size();
        assertThatThrownBy(() -> start("1")).isInstanceOfSatisfying(ApiError.class, e -> {
            assertThat(e.status().code()).isEqualTo(503);
            assertThat(e.getMessage()).contains(BatchRuns.MAX_ACTIVE + " batch runs are active");
        });
        assertThat(published).hasSize(before); // nothing published for the refused one
        // One run ends (its ping answered, its one-minion batches returned): another may start.
        published.get(0).answer(fleet.toArray(String[]::new));
        for (String minion : fleet) {
            await().until(() -> published.stream()
                    .anyMatch(p -> p.request().target().equals(minion)
                            && p.request().targetType().equals("list")));
            published.stream().filter(p -> p.request().target().equals(minion)).forEach(p -> p.answer(minion));
        }
        await().until(() -> runs.show(ids.get(0), "api:ci", false).get("state").equals("done"));
        await().untilAsserted(() -> assertThat(start("1")).containsKey("batch_id"));
    }
}
