package io.brine.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MinionIdsTest {

    @ParameterizedTest
    @ValueSource(strings = {"web1", "web1.example.com", "a", "db_2", "x-y.z-0", "0.1.2.3", "a.b.c.d.e.f"})
    void acceptsDnsStyleIds(String id) {
        assertThat(MinionIds.problem(id)).isEmpty();
        assertThat(MinionIds.requireValid(id)).isEqualTo(id);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                ".",
                "..",
                "web..1",
                ".web",
                "web.",
                "Web1",
                "web 1",
                "web/1",
                "../etc",
                "a\\b",
                "-rf",
                "web.-x",
                "we*b",
                "w\u00e9b",
                "web\u0000",
                "web\n",
                "\u212a",
                "web\u00a0",
                "a:b",
                "~root"
            })
    void refusesAnythingElse(String id) {
        assertThat(MinionIds.problem(id)).isPresent();
        assertThatThrownBy(() -> MinionIds.requireValid(id)).isInstanceOf(InvalidIdException.class);
    }

    @Test
    void refusesNull() {
        assertThat(MinionIds.isValid(null)).isFalse();
    }

    @Test
    void boundsLengthOfIdAndLabel() {
        String label63 = "a".repeat(63);
        assertThat(MinionIds.isValid(label63)).isTrue();
        assertThat(MinionIds.isValid(label63 + "a")).isFalse();
        String id253 = String.join(".", label63, label63, label63, "a".repeat(61));
        assertThat(id253).hasSize(253);
        assertThat(MinionIds.isValid(id253)).isTrue();
        assertThat(MinionIds.isValid(id253 + "a")).isFalse();
    }

    @Test
    void resolvesOnlyInsideTheDirectory(@org.junit.jupiter.api.io.TempDir Path dir) {
        assertThat(MinionIds.resolveInside(dir, "web1"))
                .isEqualTo(dir.toAbsolutePath().resolve("web1"));
        assertThatThrownBy(() -> MinionIds.resolveInside(dir, "..")).isInstanceOf(InvalidIdException.class);
        assertThatThrownBy(() -> MinionIds.resolveInside(dir, "a/../../b")).isInstanceOf(InvalidIdException.class);
    }

    @Test
    void errorMessagesNeverCarryControlCharacters() {
        assertThatThrownBy(() -> MinionIds.requireValid("evil\u001b[31m\n"))
                .hasMessageContaining("\\u001b")
                .hasMessageNotContaining("\n");
    }
}
