package io.brine.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Salt's nested and txt outputters, as salt prints these values (salt/output/nested.py, txt.py). */
class SaltOutputtersTest {

    @Test
    void nestedShowsMapsAfterADashedLineAndListsAsDashes() {
        Map<String, Object> ret = new LinkedHashMap<>();
        ret.put("retcode", 0L);
        ret.put("lines", List.of("a", "b"));
        ret.put("ok", true);
        ret.put("none", null);
        assertThat(SaltOutputters.nested("web1", ret)).isEqualTo("""
                web1:
                    ----------
                    retcode:
                        0
                    lines:
                        - a
                        - b
                    ok:
                        True
                    none:
                        None
                """);
        assertThat(SaltOutputters.nested(List.of("web1", "web2"))).isEqualTo("- web1\n- web2\n");
        assertThat(SaltOutputters.nested(Map.of("up", List.of()))).isEqualTo("up:\n");
    }

    @Test
    void txtPrintsEachLineOfTextAfterItsKeyAndOtherValuesInPythonsNotation() {
        assertThat(SaltOutputters.txt("web1", "one\ntwo\n")).isEqualTo("web1: one\nweb1: two\n");
        assertThat(SaltOutputters.txt("web1", true)).isEqualTo("web1: True\n");
        Map<String, Object> ret = new LinkedHashMap<>();
        ret.put("a", List.of("x", 1L, false));
        ret.put("it's", null);
        assertThat(SaltOutputters.txt("web1", ret)).isEqualTo("web1: {'a': ['x', 1, False], \"it's\": None}\n");
        assertThat(SaltOutputters.txt(List.of("web1"))).isEqualTo("['web1']\n");
    }
}
