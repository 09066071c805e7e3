package io.brine.minion.functions.builtin;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.minion.functions.FunctionAccess;
import io.brine.minion.functions.FunctionCall;
import io.brine.minion.functions.FunctionRegistry;
import io.brine.minion.functions.FunctionResult;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class BuiltinFunctionsTest {

    private static final Map<String, Object> GRAINS =
            Map.of("os", "Debian", "cloud", Map.of("region", "eu-west-1", "zones", List.of("a", "b")), "num_cpus", 2L);

    private final FunctionRegistry registry = new FunctionRegistry(
            BuiltinFunctions.create(new BuiltinFunctions.Settings(1024, Path.of("/"), "1.2.3")),
            FunctionAccess.allowAll());

    private FunctionResult call(String fun, List<Object> args, Map<String, Object> kwargs) {
        return registry.call(fun, FunctionCall.of(args, kwargs).withGrains(GRAINS));
    }

    @Test
    void everyBuiltInIsRegisteredAndDocumented() {
        assertThat(registry.names())
                .containsExactly(
                        "cmd.retcode",
                        "cmd.run",
                        "cmd.run_all",
                        "grains.get",
                        "grains.items",
                        "sys.doc",
                        "sys.list_functions",
                        "test.arg",
                        "test.echo",
                        "test.exception",
                        "test.ping",
                        "test.retcode",
                        "test.sleep",
                        "test.version");
        assertThat((Map<?, ?>) call("sys.doc", List.of(), Map.of()).value())
                .allSatisfy((name, doc) -> assertThat((String) doc).startsWith((String) name));
    }

    @Test
    void testPingAnswersTrue() {
        assertThat(call("test.ping", List.of(), Map.of())).isEqualTo(new FunctionResult(true, 0));
    }

    @Test
    void testEchoReturnsItsArgumentByPositionOrName() {
        assertThat(call("test.echo", List.of("hello world"), Map.of()).value()).isEqualTo("hello world");
        assertThat(call("test.echo", List.of(), Map.of("text", "hi")).value()).isEqualTo("hi");
        assertThat(call("test.echo", List.of(), Map.of()).retcode()).isEqualTo(1);
    }

    @Test
    void testVersionIsTheConfiguredVersionAndDevOutsideAJar() {
        assertThat(call("test.version", List.of(), Map.of()).value()).isEqualTo("1.2.3");
        assertThat(BuiltinFunctions.brineVersion()).isEqualTo("dev");
    }

    @Test
    void testArgShowsWhatArrived() {
        assertThat(call("test.arg", List.of("a", 1L), Map.of("k", true)).value())
                .isEqualTo(Map.of("args", List.of("a", 1L), "kwargs", Map.of("k", true)));
    }

    @Test
    void testRetcodeAndTestExceptionExerciseTheErrorPath() {
        assertThat(call("test.retcode", List.of(3L), Map.of())).isEqualTo(new FunctionResult(true, 3));
        assertThat(call("test.retcode", List.of(), Map.of()).retcode()).isEqualTo(42);
        assertThat(call("test.exception", List.of("kaputt"), Map.of()))
                .isEqualTo(new FunctionResult("IllegalStateException: kaputt", 1));
    }

    @Test
    void testSleepAnswersTrueOnceItHasSlept() {
        // That it sleeps at all is testSleepSleepsUntilInterrupted's.
        assertThat(call("test.sleep", List.of("0.2"), Map.of())).isEqualTo(new FunctionResult(true, 0));
        assertThat(call("test.sleep", List.of(-1L), Map.of()).retcode()).isEqualTo(1);
    }

    @Test
    void testSleepHonoursTheJobsDeadlineOnItsOwn() {
        // An hour's sleep: that it answers at all (within the suite's wait) shows the deadline was honoured.
        CompletableFuture<FunctionResult> result = CompletableFuture.supplyAsync(() -> registry.call(
                "test.sleep", FunctionCall.of(List.of(3600L), Map.of()).withTimeout(Duration.ofMillis(200))));
        await().until(result::isDone);
        assertThat(result.join().retcode()).isEqualTo(FunctionResult.TIMEOUT);
    }

    @Test
    void testSleepSleepsUntilInterrupted() throws Exception {
        AtomicReference<FunctionResult> result = new AtomicReference<>();
        Thread sleeper = new Thread(() -> result.set(call("test.sleep", List.of(3600L), Map.of())));
        sleeper.start();
        await().until(() -> sleeper.getState() == Thread.State.TIMED_WAITING || !sleeper.isAlive());
        assertThat(result.get()).as("an hour's sleep is still sleeping").isNull();
        sleeper.interrupt();
        sleeper.join(WAIT.toMillis());
        assertThat(sleeper.isAlive()).isFalse();
        assertThat(result.get().success()).isFalse();
    }

    @Test
    void grainsItemsReturnsAllGrains() {
        assertThat(call("grains.items", List.of(), Map.of()).value()).isEqualTo(GRAINS);
    }

    @Test
    void grainsGetFollowsColonSeparatedKeysAndFallsBackToTheDefault() {
        assertThat(call("grains.get", List.of("os"), Map.of()).value()).isEqualTo("Debian");
        assertThat(call("grains.get", List.of("cloud:region"), Map.of()).value())
                .isEqualTo("eu-west-1");
        assertThat(call("grains.get", List.of("cloud:zones:1"), Map.of()).value())
                .isEqualTo("b");
        assertThat(call("grains.get", List.of("cloud/region"), Map.of("delimiter", "/"))
                        .value())
                .isEqualTo("eu-west-1");
        assertThat(call("grains.get", List.of("cloud:nothing"), Map.of()).value())
                .isEqualTo("");
        assertThat(call("grains.get", List.of("cloud:nothing", "fallback"), Map.of())
                        .value())
                .isEqualTo("fallback");
        assertThat(call("grains.get", List.of("os:deeper"), Map.of("default", 5L))
                        .value())
                .isEqualTo(5L);
    }
}
