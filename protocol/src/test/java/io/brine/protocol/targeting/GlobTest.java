package io.brine.protocol.targeting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The one glob translator: Salt's fnmatch for targets, and its strict form for brine-key's id arguments. */
class GlobTest {

    @Test
    void wildcardsSetsAndRangesMatchWholeStringsLikeFnmatch() {
        Glob glob = Glob.compile("web[0-9]?.*");
        assertThat(glob.matches("web1a.example.com")).isTrue();
        assertThat(glob.matches("web1.example.com")).isFalse();
        assertThat(glob.matches("xweb1a.example.com")).isFalse();
        assertThat(Glob.compile("web[!12]").matches("web3")).isTrue();
        assertThat(Glob.compile("web[!12]").matches("web2")).isFalse();
        assertThat(Glob.compile("a.b").matches("axb")).isFalse();
    }

    @Test
    void whatFnmatchTakesLiterallyIsLiteral() {
        // Python's fnmatch: [^...] is a set holding '^', and a '[' without its ']' is a '['.
        assertThat(Glob.compile("[^a]").matches("^")).isTrue();
        assertThat(Glob.compile("[^a]").matches("b")).isFalse();
        assertThat(Glob.compile("web[1").matches("web[1")).isTrue();
        assertThat(Glob.compile("os:Debian (x)+").matches("os:Debian (x)+")).isTrue();
        assertThat(Glob.compile("debian", true).matches("Debian")).isTrue();
        assertThat(Glob.compile("debian").matches("Debian")).isFalse();
    }

    @Test
    void anIdGlobMatchesAsTheTargetGlobDoes() {
        for (String text : new String[] {"web*", "web?", "web[0-9]", "web[!2]", "db1.example.com", "a_b-c"}) {
            Glob ids = Glob.compileIds(text);
            Glob target = Glob.compile(text);
            for (String id : new String[] {"web1", "web2", "web12", "db1.example.com", "db1xexample.com", "a_b-c"}) {
                assertThat(ids.matches(id)).as("%s on %s", text, id).isEqualTo(target.matches(id));
            }
        }
    }

    @Test
    void anIdGlobRefusesWhatNoIdCanMatchSoATypoIsAnError() {
        assertThatThrownBy(() -> Glob.compileIds("Web1"))
                .isInstanceOf(TargetException.class)
                .hasMessageContaining("'Web1' is not a valid id");
        assertThatThrownBy(() -> Glob.compileIds("Web*"))
                .hasMessageContaining("U+0057")
                .hasMessageContaining("[a-z0-9._-]");
        assertThatThrownBy(() -> Glob.compileIds("web[1")).hasMessageContaining("'[' without a matching ']'");
        assertThatThrownBy(() -> Glob.compileIds("web[^1]")).hasMessageContaining("[!...]");
        assertThatThrownBy(() -> Glob.compileIds("web[A-Z]")).hasMessageContaining("U+0041");
        assertThatThrownBy(() -> Glob.compileIds("")).hasMessageContaining("empty");
    }
}
