package io.brine.protocol.targeting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TargetsTest {

    private static final Map<String, Object> DEBIAN =
            Map.of("os", "Debian", "roles", List.of("web", "cache"), "cloud", Map.of("region", "eu-west-1"));
    private static final Map<String, Object> REDHAT = Map.of("os", "RedHat", "roles", List.of("db"));

    @Test
    void globsMatchWholeIdsLikeTheShell() {
        Target t = Targets.parse("glob", "web*");
        assertThat(t.matches("web1", Map.of())).isTrue();
        assertThat(t.matches("db-web1", Map.of())).isFalse();
        assertThat(Targets.parse("glob", "web?").matches("web12", Map.of())).isFalse();
        assertThat(Targets.parse("glob", "web[12]").matches("web2", Map.of())).isTrue();
        assertThat(Targets.parse("glob", "web[!12]").matches("web2", Map.of())).isFalse();
        assertThat(Targets.parse("glob", "web.example.com").matches("webxexample.com", Map.of()))
                .isFalse();
        assertThat(Targets.parse("glob", "*").matches("anything", Map.of())).isTrue();
    }

    @Test
    void compoundPAtIsAGrainRegexAnchoredAtTheStartWithoutCase() {
        assertThat(Targets.parse("compound", "P@os:(debian|ubuntu)$").matches("web1", DEBIAN))
                .isTrue();
        assertThat(Targets.parse("compound", "P@os:(debian|ubuntu)$").matches("db1", REDHAT))
                .isFalse();
        assertThat(Targets.parse("compound", "P@roles:ca.*").matches("web1", DEBIAN))
                .isTrue();
        assertThat(Targets.parse("compound", "P@cloud:region:eu-.*").matches("web1", DEBIAN))
                .isTrue();
        assertThat(Targets.parse("compound", "P@os:hat").matches("db1", REDHAT)).isFalse();
        assertThat(Targets.parse("compound", "P@os:deb").usesGrains()).isTrue();
        assertThatThrownBy(() -> Targets.parse("compound", "P@os:(deb"))
                .isInstanceOf(TargetException.class)
                .hasMessageContaining("bad regular expression");
    }

    @Test
    void compoundSAtMatchesASubnetOnTheIpv4Grain() {
        Map<String, Object> inside = Map.of("ipv4", List.of("127.0.0.1", "10.1.2.3"));
        Map<String, Object> outside = Map.of("ipv4", List.of("127.0.0.1", "192.168.1.5"));
        assertThat(Targets.parse("compound", "S@10.0.0.0/8").matches("a", inside))
                .isTrue();
        assertThat(Targets.parse("compound", "S@10.0.0.0/8").matches("b", outside))
                .isFalse();
        assertThat(Targets.parse("compound", "S@192.168.1.5").matches("b", outside))
                .isTrue();
        assertThat(Targets.parse("compound", "S@192.168.1.0/31").matches("b", outside))
                .isFalse();
        assertThat(Targets.parse("compound", "S@0.0.0.0/0").matches("c", Map.of("ipv4", "8.8.8.8")))
                .isTrue();
        assertThat(Targets.parse("compound", "S@10.0.0.0/8 and not S@10.1.0.0/16")
                        .matches("a", inside))
                .isFalse();
        assertThat(Targets.parse("compound", "S@10.0.0.0/8").matches("d", Map.of()))
                .isFalse();
        for (String bad : List.of("S@10.0.0/8", "S@10.0.0.0/33", "S@300.0.0.0/8", "S@web1", "S@10.0.0.0/")) {
            assertThatThrownBy(() -> Targets.parse("compound", bad))
                    .as(bad)
                    .isInstanceOf(TargetException.class)
                    .hasMessageContaining("subnet");
        }
    }

    @Test
    void literalGlobsAndListsNameExactIds() {
        assertThat(Targets.parse("glob", "web1").exactIds()).contains(Set.of("web1"));
        assertThat(Targets.parse("glob", "web*").exactIds()).isEmpty();
        assertThat(Targets.parse("list", "a, b,c,").exactIds()).contains(Set.of("a", "b", "c"));
    }

    @Test
    void aListNamingSomethingThatIsNotAMinionIdIsABadTarget() {
        for (String list : List.of("web1,Web2", "web1,../x", "a b", "web1,-x")) {
            assertThatThrownBy(() -> Targets.parse("list", list))
                    .as(list)
                    .isInstanceOf(TargetException.class)
                    .hasMessageContaining("not a minion id");
            assertThatThrownBy(() -> Targets.parse("compound", "L@" + list))
                    .as(list)
                    .isInstanceOf(TargetException.class);
        }
    }

    @Test
    void pcreIsAnchoredAtTheStartLikeSalt() {
        Target t = Targets.parse("pcre", "web[0-9]+");
        assertThat(t.matches("web12", Map.of())).isTrue();
        assertThat(t.matches("web12.example.com", Map.of())).isTrue();
        assertThat(t.matches("xweb12", Map.of())).isFalse();
        assertThat(Targets.parse("pcre", "web\\d$").matches("web1x", Map.of())).isFalse();
    }

    @Test
    void grainsMatchCaseInsensitivelyNestedAndInLists() {
        assertThat(Targets.parse("grain", "os:debian").matches("m", DEBIAN)).isTrue();
        assertThat(Targets.parse("grain", "os:deb*").matches("m", REDHAT)).isFalse();
        assertThat(Targets.parse("grain", "roles:cache").matches("m", DEBIAN)).isTrue();
        assertThat(Targets.parse("grain", "cloud:region:eu-*").matches("m", DEBIAN))
                .isTrue();
        assertThat(Targets.parse("grain", "missing:x").matches("m", DEBIAN)).isFalse();
        assertThat(Targets.parse("grain", "cloud:*").matches("m", DEBIAN)).isFalse();
    }

    @Test
    void onlyTargetsThatReadGrainsSayTheyUseThem() {
        assertThat(Targets.parse("glob", "web*").usesGrains()).isFalse();
        assertThat(Targets.parse("pcre", "web[0-9]").usesGrains()).isFalse();
        assertThat(Targets.parse("list", "web1,web2").usesGrains()).isFalse();
        assertThat(Targets.parse("compound", "web* and not L@web2").usesGrains())
                .isFalse();
        assertThat(Targets.parse("grain", "os:Debian").usesGrains()).isTrue();
        assertThat(Targets.parse("compound", "web* and G@os:Debian").usesGrains())
                .isTrue();
        assertThat(Targets.parse("compound", "web* or G@os:Debian").usesGrains())
                .isTrue();
        assertThat(Targets.parse("compound", "not G@os:Debian").usesGrains()).isTrue();
        // A target that does not read grains matches the same with or without them.
        Target glob = Targets.parse("compound", "web* and not L@web2");
        assertThat(glob.matches("web1", Map.of()))
                .isEqualTo(glob.matches("web1", DEBIAN))
                .isTrue();
    }

    @Test
    void compoundFollowsSaltsPrecedence() {
        Target t = Targets.parse("compound", "G@os:debian and web* or L@db1,db2");
        assertThat(t.matches("web1", DEBIAN)).isTrue();
        assertThat(t.matches("web1", REDHAT)).isFalse();
        assertThat(t.matches("db2", REDHAT)).isTrue();
        Target grouped = Targets.parse("compound", "G@os:debian and (web* or db*)");
        assertThat(grouped.matches("db1", DEBIAN)).isTrue();
        assertThat(grouped.matches("db1", REDHAT)).isFalse();
        Target negated = Targets.parse("compound", "not web* and not E@db[0-9]");
        assertThat(negated.matches("cache1", Map.of())).isTrue();
        assertThat(negated.matches("db7", Map.of())).isFalse();
        assertThat(negated.matches("web7", Map.of())).isFalse();
        assertThat(Targets.parse("compound", "web1 AND NOT web2").matches("web1", Map.of()))
                .isTrue();
    }

    @Test
    void refusesMalformedExpressionsSayingWhere() {
        assertThatThrownBy(() -> Targets.parse("compound", "web* and")).hasMessageContaining("ends where");
        assertThatThrownBy(() -> Targets.parse("compound", "(web* or db*")).hasMessageContaining("missing ')'");
        assertThatThrownBy(() -> Targets.parse("compound", "web* db*")).hasMessageContaining("unexpected 'db*'");
        assertThatThrownBy(() -> Targets.parse("compound", "X@foo")).hasMessageContaining("unsupported");
        assertThatThrownBy(() -> Targets.parse("pcre", "web(")).hasMessageContaining("bad regular expression");
        assertThatThrownBy(() -> Targets.parse("grain", "os")).hasMessageContaining("key:glob");
        assertThatThrownBy(() -> Targets.parse("glob", " ")).hasMessageContaining("empty");
        assertThatThrownBy(() -> Targets.parse("nodegroup", "x")).hasMessageContaining("unknown target type");
        assertThatThrownBy(() -> Targets.parse("glob", "a".repeat(5000))).hasMessageContaining("longer than");
    }
}
