package io.brine.minion.functions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DocumentsTest {

    @Test
    void widensNumbersAndTurnsCollectionsIntoLists() {
        Map<Object, Object> input = new HashMap<>();
        input.put("int", 1);
        input.put("short", (short) 2);
        input.put("float", 1.5f);
        input.put("set", new LinkedHashSet<>(List.of("a", "b")));
        input.put("array", new Object[] {1, "x", null});
        input.put(7, "numeric key");
        input.put("nothing", null);

        Map<String, Object> out = Documents.normalizeDocument(input);

        assertThat(out)
                .containsEntry("int", 1L)
                .containsEntry("short", 2L)
                .containsEntry("float", 1.5)
                .containsEntry("set", List.of("a", "b"))
                .containsEntry("7", "numeric key")
                .containsEntry("nothing", null);
        assertThat(out.get("array")).isEqualTo(Arrays.asList(1L, "x", null));
    }

    @Test
    void copiesDeeplySoTheFunctionCannotChangeWhatIsSent() {
        List<Object> mutable = new ArrayList<>(List.of("a"));
        byte[] bytes = {1, 2};
        Object out = Documents.normalize(Map.of("list", mutable, "bytes", bytes));
        mutable.add("b");
        bytes[0] = 9;
        assertThat(((Map<?, ?>) out).get("list")).isEqualTo(List.of("a"));
        assertThat((byte[]) ((Map<?, ?>) out).get("bytes")).containsExactly(1, 2);
        assertThatThrownBy(() -> ((Map<String, Object>) out).put("x", 1))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void refusesWhatCannotBeSentSayingWhere() {
        assertThatThrownBy(() -> Documents.normalize(Map.of("when", new Object())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("value.when")
                .hasMessageContaining("java.lang.Object");
        assertThatThrownBy(() -> Documents.normalize(BigInteger.TWO.pow(64))).hasMessageContaining("64-bit");
        assertThatThrownBy(() -> Documents.normalize(Map.of(List.of(1), "x"))).hasMessageContaining("keys");
    }

    @Test
    void aReferenceCycleIsRefusedNotAStackOverflow() {
        List<Object> cycle = new ArrayList<>();
        cycle.add(cycle);
        assertThatThrownBy(() -> Documents.normalize(cycle)).hasMessageContaining("nested more than");
        assertThat(Documents.normalize(Arrays.asList("fine"))).isEqualTo(List.of("fine"));
    }
}
