package io.brine.minion.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.minion.functions.FunctionAccess;
import io.brine.minion.functions.FunctionRegistry;
import io.brine.minion.functions.MinionFunction;
import io.brine.minion.functions.builtin.BuiltinFunctions;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionMessage.Return;
import io.brine.protocol.testing.MovableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class JobRunnerTest {

    private static final Map<String, Object> GRAINS = Map.of("os", "Debian", "roles", List.of("web"));

    private final List<Return> returns = new CopyOnWriteArrayList<>();
    private final Set<String> started = ConcurrentHashMap.newKeySet();
    private final CountDownLatch release = new CountDownLatch(1);
    private final MovableClock clock = new MovableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final List<JobRunner> runners = new ArrayList<>();

    private final FunctionRegistry registry =
            new FunctionRegistry(functions(), FunctionAccess.of(List.of(), List.of("cmd.*")));

    private List<MinionFunction> functions() {
        List<MinionFunction> all =
                new ArrayList<>(BuiltinFunctions.create(new BuiltinFunctions.Settings(1024, Path.of("/"), "dev")));
        all.add(MinionFunction.of("test.block", "waits for the test to release it", call -> {
            started.add(call.jid());
            release.await();
            return "released";
        }));
        all.add(MinionFunction.of("test.tick", "takes 1.5 s on the test clock", call -> {
            clock.advance(Duration.ofMillis(1500));
            return true;
        }));
        return all;
    }

    private JobRunner runner(String id, int workers, int queue, Duration defaultTimeout) {
        JobRunner runner =
                new JobRunner(id, registry, () -> GRAINS, workers, queue, defaultTimeout, returns::add, clock);
        runners.add(runner);
        return runner;
    }

    private JobRunner runner() {
        return runner("web1", 2, 10, Duration.ofSeconds(30));
    }

    @AfterEach
    void closeRunners() {
        release.countDown();
        runners.forEach(JobRunner::close);
    }

    private static PublishLoad targeted(
            String jid, String fun, String targetType, String target, int timeout, Object... args) {
        return new PublishLoad(
                jid, new PublishLoad.Target(targetType, target), fun, List.of(args), Map.of(), timeout, "test");
    }

    private static PublishLoad load(String jid, String fun, Object... args) {
        return targeted(jid, fun, "glob", "web*", 0, args);
    }

    private Return awaitReturn(String jid) {
        AtomicReference<Return> found = new AtomicReference<>();
        await().until(() -> {
            returns.stream().filter(r -> r.jid().equals(jid)).findFirst().ifPresent(found::set);
            return found.get() != null;
        });
        return found.get();
    }

    @Test
    void aTargetedJobReturnsItsValueRetcodeAndDuration() {
        JobRunner runner = runner();
        runner.submit(load("j1", "test.tick"));
        assertThat(awaitReturn("j1")).isEqualTo(new Return("j1", "test.tick", true, 0, true, 1500));
        await().until(() -> runner.running().isEmpty());
    }

    @Test
    void aLoadForAnotherMinionIsDroppedWithNoReturn() {
        JobRunner runner = runner();
        runner.submit(targeted("other-glob", "test.ping", "glob", "db*", 0));
        runner.submit(targeted("other-grain", "test.ping", "grain", "os:redhat", 0));
        runner.submit(targeted("other-compound", "test.ping", "compound", "web1 and not G@roles:web", 0));
        runner.submit(targeted("bad-target", "test.ping", "compound", "web1 and (", 0));
        // Dropping happens inside submit: nothing was queued, so nothing can come back later.
        assertThat(runner.running()).isEmpty();
        assertThat(returns).isEmpty();

        runner.submit(targeted("mine-list", "test.ping", "list", "db1,web1", 0));
        runner.submit(targeted("mine-grain", "test.ping", "grain", "roles:web", 0));
        awaitReturn("mine-list");
        awaitReturn("mine-grain");
        assertThat(returns).extracting(Return::jid).containsExactlyInAnyOrder("mine-list", "mine-grain");
    }

    @Test
    void unknownAndDeniedFunctionsAreAnsweredAtOnce() {
        JobRunner runner = runner();
        runner.submit(load("j-unknown", "nope.nothing"));
        runner.submit(load("j-denied", "cmd.run", "id"));
        assertThat(returns)
                .containsExactly(
                        new Return(
                                "j-unknown",
                                "nope.nothing",
                                "'nope.nothing' is not available on this minion",
                                254,
                                false,
                                0),
                        new Return(
                                "j-denied",
                                "cmd.run",
                                "'cmd.run' is denied by this minion's functions allow/deny lists",
                                253,
                                false,
                                0));
    }

    @Test
    void aFullQueueAnswersMinionBusyAndTheAcceptedJobsStillRun() {
        JobRunner runner = runner("web1", 1, 1, Duration.ofSeconds(30));
        runner.submit(load("j1", "test.block"));
        await().until(() -> started.contains("j1"));
        runner.submit(load("j2", "test.block")); // waits in the queue
        runner.submit(load("j3", "test.ping"));

        Return busy = awaitReturn("j3");
        assertThat(busy.success()).isFalse();
        assertThat(busy.retcode()).isEqualTo(75);
        assertThat((String) busy.returnValue()).startsWith("minion busy");
        assertThat(runner.running()).containsExactlyInAnyOrder("j1", "j2");

        release.countDown();
        assertThat(awaitReturn("j1").returnValue()).isEqualTo("released");
        assertThat(awaitReturn("j2").returnValue()).isEqualTo("released");
    }

    @Test
    void aDuplicateJidWhileRunningIsDroppedAndAnsweredOnce() {
        JobRunner runner = runner();
        runner.submit(load("j1", "test.block"));
        await().until(() -> started.contains("j1"));
        runner.submit(load("j1", "test.block"));
        release.countDown();
        awaitReturn("j1");
        await().until(() -> runner.running().isEmpty());
        assertThat(returns).extracting(Return::jid).containsExactly("j1");
        assertThat(started).containsExactly("j1");
    }

    @Test
    void aJobPastItsTimeoutIsInterruptedAndReturnsRetcode124() {
        JobRunner runner = runner("web1", 2, 10, Duration.ofMillis(300));
        // An hour's sleep: that both jobs return at all (within the suite's wait) shows the timeout worked.
        runner.submit(load("j-default", "test.sleep", 3600L));
        runner.submit(targeted("j-own", "test.block", "glob", "*", 1));

        Return byDefault = awaitReturn("j-default");
        assertThat(byDefault.retcode()).isEqualTo(124);
        assertThat(byDefault.success()).isFalse();
        // The runner's timer and test.sleep's own deadline check race (the test clock stands still); both say so.
        assertThat((String) byDefault.returnValue()).startsWith("test.sleep timed out");
        // test.block knows no deadline: only the runner's interrupt can end it.
        assertThat(awaitReturn("j-own"))
                .isEqualTo(new Return("j-own", "test.block", "test.block timed out after 1 s", 124, false, 0));
        await().until(() -> runner.running().isEmpty());
        assertThat(returns).hasSize(2);
    }

    @Test
    void anExceptionIsRetcode1WithItsMessageAndNoStackTrace() {
        JobRunner runner = runner();
        runner.submit(load("j1", "test.exception", "kaputt"));
        Return result = awaitReturn("j1");
        assertThat(result.retcode()).isEqualTo(1);
        assertThat(result.success()).isFalse();
        assertThat(result.returnValue()).isEqualTo("IllegalStateException: kaputt");
    }

    @Test
    void countsTheJobsItAnsweredAndThoseThatFailed() {
        JobRunner runner = runner();
        runner.submit(load("j1", "test.ping"));
        runner.submit(load("j2", "test.exception", "kaputt"));
        awaitReturn("j1");
        awaitReturn("j2");
        assertThat(runner.jobsReturned()).isEqualTo(2);
        assertThat(runner.jobsFailed()).isEqualTo(1);
    }

    @Test
    void theFunctionSeesTheGrainsAndArgumentsOfItsJob() {
        JobRunner runner = runner();
        runner.submit(new PublishLoad(
                "j1", new PublishLoad.Target("glob", "web1"), "grains.get", List.of("os"), Map.of(), 0, "test"));
        runner.submit(new PublishLoad(
                "j2", new PublishLoad.Target("glob", "web1"), "test.arg", List.of(1L), Map.of("k", "v"), 0, "test"));
        assertThat(awaitReturn("j1").returnValue()).isEqualTo("Debian");
        assertThat(awaitReturn("j2").returnValue()).isEqualTo(Map.of("args", List.of(1L), "kwargs", Map.of("k", "v")));
    }

    @Test
    void closeStopsEveryThreadAndNothingIsReturnedAfterwards() {
        JobRunner runner = runner("closing1", 2, 10, Duration.ofSeconds(30));
        runner.submit(targeted("j1", "test.block", "glob", "*", 0));
        runner.submit(targeted("j2", "test.sleep", "glob", "*", 0, 0.1));
        awaitReturn("j2");
        await().until(() -> started.contains("j1"));

        runner.close();

        await().until(() -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().startsWith("brine-job-closing1") && t.isAlive()));
        assertThat(runner.running()).isEmpty();
        runner.submit(targeted("j3", "test.ping", "glob", "*", 0));
        assertThat(returns).extracting(Return::jid).containsExactly("j2");
    }
}
