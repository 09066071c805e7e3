package io.brine.minion.functions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FunctionCallTest {

    @Test
    void parametersBindByPositionOrByNameButNotBoth() throws Exception {
        assertThat(FunctionCall.of(List.of("hi"), Map.of()).requireString(0, "text"))
                .isEqualTo("hi");
        assertThat(FunctionCall.of(List.of(), Map.of("text", "hi")).requireString(0, "text"))
                .isEqualTo("hi");
        assertThatThrownBy(
                        () -> FunctionCall.of(List.of("a"), Map.of("text", "b")).arg(0, "text"))
                .isInstanceOf(FunctionException.class)
                .hasMessageContaining("two values");
        assertThatThrownBy(() -> FunctionCall.of(List.of(), Map.of()).requireString(0, "text"))
                .hasMessage("missing argument 'text'");
    }

    @Test
    void typedReadersAcceptTheirTextFormsAndExplainMistakes() throws Exception {
        FunctionCall call =
                FunctionCall.of(Arrays.asList("2.5", "yes", 3L, null), Map.of("m", Map.of("k", 1), "l", List.of()));
        assertThat(call.number(0, "a")).contains(2.5);
        assertThat(call.bool(1, "b")).contains(true);
        assertThat(call.string(2, "c")).contains("3");
        assertThat(call.arg(3, "d")).isEmpty();
        assertThat(call.map(FunctionCall.KEYWORD_ONLY, "m")).contains(Map.of("k", 1L));
        assertThatThrownBy(() -> call.number(1, "b")).hasMessage("argument 'b' must be a number, not 'yes'");
        assertThatThrownBy(() -> call.string(FunctionCall.KEYWORD_ONLY, "l"))
                .hasMessage("argument 'l' must be a string, not a list");
        assertThatThrownBy(() -> call.bool(0, "a")).hasMessageContaining("true or false");
    }

    @Test
    void unknownKeywordsAndExtraPositionalsAreRefusedSoTyposFailLoudly() {
        FunctionCall call = FunctionCall.of(List.of("a", "b"), Map.of("timout", 5));
        assertThatThrownBy(() -> call.checkArguments(2, Set.of("timeout")))
                .hasMessage("unknown keyword argument timout (accepted: timeout)");
        assertThatThrownBy(() -> call.checkArguments(1, Set.of("timout")))
                .hasMessageContaining("at most 1 positional argument");
    }

    @Test
    void tooManyWordsAreHintedAsOneQuotedArgumentWhateverTheFunction() {
        // test.echo hello world: not "quote a command" (there is no command), but the words it got, quoted.
        assertThatThrownBy(() ->
                        FunctionCall.of(List.of("hello", "world"), Map.of()).checkArguments(1, Set.of()))
                .hasMessage("takes at most 1 positional argument, got 2 (to pass 'hello world' as one argument,"
                        + " quote it)")
                .message()
                .doesNotContain("command");
        // Not every argument is a word: no hint then.
        assertThatThrownBy(() -> FunctionCall.of(List.of("a", 5L), Map.of()).checkArguments(1, Set.of()))
                .hasMessage("takes at most 1 positional argument, got 2");
    }

    @Test
    void remainingTimeIsMeasuredOnTheCallsClockAndNeverNegative() {
        Clock clock = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
        FunctionCall call = new FunctionCall(
                "j", List.of(), Map.of(), Map.of(), clock.instant().plusSeconds(3), clock, () -> false);
        assertThat(call.remaining()).isEqualTo(Duration.ofSeconds(3));
        assertThat(call.withTimeout(Duration.ofSeconds(-1)).remaining()).isZero();
        assertThat(call.cancelled()).isFalse();
        assertThat(new FunctionCall("j", List.of(), Map.of(), Map.of(), clock.instant(), clock, () -> true).cancelled())
                .isTrue();
    }
}
