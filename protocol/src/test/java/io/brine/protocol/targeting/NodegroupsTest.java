package io.brine.protocol.targeting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodegroupsTest {

    private static final Map<String, Object> DEBIAN = Map.of("os", "Debian");
    private static final Map<String, Object> REDHAT = Map.of("os", "RedHat");

    private static Map<String, String> definitions(String... nameAndDefinition) {
        Map<String, String> definitions = new LinkedHashMap<>();
        for (int i = 0; i < nameAndDefinition.length; i += 2) {
            definitions.put(nameAndDefinition[i], nameAndDefinition[i + 1]);
        }
        return definitions;
    }

    private static Target parsed(Nodegroups.Expanded expanded) {
        return Targets.parse(expanded.type(), expanded.expression());
    }

    @Test
    void aNodegroupTermBecomesItsDefinitionInParentheses() {
        Nodegroups groups = Nodegroups.of(definitions("web", "web* or L@db1"));
        Nodegroups.Expanded expanded = groups.expand("compound", "N@web and not web3");

        assertThat(expanded).isEqualTo(new Nodegroups.Expanded("compound", "( web* or L@db1 ) and not web3"));
        // Without the parentheses "and not web3" would bind to L@db1 only, and web3 would be targeted.
        Target target = parsed(expanded);
        assertThat(target.matches("web1", Map.of())).isTrue();
        assertThat(target.matches("web3", Map.of())).isFalse();
        assertThat(target.matches("db1", Map.of())).isTrue();
    }

    @Test
    void nodegroupsUseNodegroupsWhateverTheirOrderInTheFile() {
        Nodegroups groups = Nodegroups.of(definitions(
                "debian_web", "N@web and G@os:debian",
                "web", "web*",
                "all", "N@debian_web or N@web or N@web"));

        Target target = parsed(groups.expand(Nodegroups.TYPE, "debian_web"));
        assertThat(groups.expand(Nodegroups.TYPE, "debian_web").expression()).isEqualTo("( ( web* ) and G@os:debian )");
        assertThat(target.matches("web1", DEBIAN)).isTrue();
        assertThat(target.matches("web1", REDHAT)).isFalse();
        assertThat(parsed(groups.expand("compound", "(N@all)")).matches("web2", REDHAT))
                .isTrue();
    }

    @Test
    void targetsWithoutNodegroupsAreLeftAsTheyAre() {
        Nodegroups groups = Nodegroups.of(definitions("web", "web*"));

        assertThat(groups.expand("compound", "G@os:debian   and (web1)"))
                .isEqualTo(new Nodegroups.Expanded("compound", "G@os:debian   and (web1)"));
        assertThat(groups.expand("glob", "N@web")).isEqualTo(new Nodegroups.Expanded("glob", "N@web"));
        assertThat(groups.expand("list", "a,b")).isEqualTo(new Nodegroups.Expanded("list", "a,b"));
    }

    @Test
    void anUnknownNodegroupIsNamedToThePublisher() {
        Nodegroups groups = Nodegroups.of(definitions("web", "web*"));

        assertThatThrownBy(() -> groups.expand("compound", "N@web or N@dbs"))
                .isInstanceOf(TargetException.class)
                .hasMessage("unknown nodegroup dbs");
        assertThatThrownBy(() -> groups.expand(Nodegroups.TYPE, "dbs")).hasMessage("unknown nodegroup dbs");
        assertThatThrownBy(() -> Nodegroups.none().expand(Nodegroups.TYPE, "web"))
                .hasMessage("unknown nodegroup web (master.yaml defines no nodegroups)");
    }

    @Test
    void aMinionRefusesAnUnexpandedNodegroupTerm() {
        assertThatThrownBy(() -> Targets.parse("compound", "N@web"))
                .isInstanceOf(TargetException.class)
                .hasMessageContaining("was not expanded");
    }

    @Test
    void everyBadDefinitionIsNamedAtOnce() {
        Map<String, String> problems = Nodegroups.problems(definitions(
                "ok", "web*",
                "loop_a", "N@loop_b or web1",
                "loop_b", "N@loop_a",
                "self", "db* and not N@self",
                "unknown", "N@ok or N@nowhere",
                "syntax", "web* and",
                "bad name!", "web*",
                "uses_loop", "N@loop_a"));

        assertThat(problems).containsOnlyKeys("loop_a", "loop_b", "self", "unknown", "syntax", "bad name!");
        assertThat(problems.get("loop_a")).isEqualTo("uses itself: loop_a -> loop_b -> loop_a");
        assertThat(problems.get("loop_b")).isEqualTo("uses itself: loop_b -> loop_a -> loop_b");
        assertThat(problems.get("self")).isEqualTo("uses itself: self -> self");
        assertThat(problems.get("unknown")).isEqualTo("uses the unknown nodegroup nowhere");
        assertThat(problems.get("syntax")).contains("compound target ends where a term was expected");
        assertThat(problems.get("bad name!")).contains("a nodegroup name is");
        assertThatThrownBy(() -> Nodegroups.of(definitions("self", "N@self")))
                .hasMessage("nodegroup self: uses itself: self -> self");
    }

    @Test
    void aDiamondIsNoCycleAndManyLevelsStayLinear() {
        // Each level uses the one below twice: the expansion doubles, the check must not.
        Map<String, String> definitions = definitions("g0", "web1");
        for (int i = 1; i <= 40; i++) {
            definitions.put("g" + i, "N@g" + (i - 1) + " or N@g" + (i - 1));
        }
        Map<String, String> problems = Nodegroups.problems(definitions);

        assertThat(problems.keySet())
                .doesNotContain("g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8")
                .contains("g9"); // the first over the length of a target; the ones above use it
        assertThat(problems.get("g9")).startsWith("expands to ").endsWith("more than a target may have (4096)");
        assertThat(problems).hasSize(1);
    }

    @Test
    void saltsListFormIsAListOfIdsOrOfCompoundWords() {
        assertThat(Nodegroups.fromList(List.of("web1", "db1"))).isEqualTo("L@web1,db1");
        assertThat(Nodegroups.fromList(List.of("G@os:debian", "or", "web1"))).isEqualTo("G@os:debian or web1");
        assertThatThrownBy(() -> Nodegroups.fromList(List.of("web1", "db*")))
                .isInstanceOf(TargetException.class)
                .hasMessageContaining("'db*' is not one");
        assertThatThrownBy(() -> Nodegroups.fromList(List.of("Web1"))).hasMessageContaining("not one");
        assertThatThrownBy(() -> Nodegroups.fromList(List.of())).hasMessageContaining("empty list");
    }

    @Test
    void aPublisherChecksTheSyntaxWithoutKnowingTheNodegroups() {
        assertThat(Nodegroups.syntaxProblem("compound", "N@web and not web3")).isEmpty();
        assertThat(Nodegroups.syntaxProblem(Nodegroups.TYPE, "web")).isEmpty();
        assertThat(Nodegroups.syntaxProblem("compound", "N@web and")).isPresent();
        assertThat(Nodegroups.syntaxProblem(Nodegroups.TYPE, "a b"))
                .get()
                .asString()
                .contains("bad nodegroup");
        assertThat(Nodegroups.syntaxProblem("glob", "web*")).isEmpty();
        assertThat(Nodegroups.syntaxProblem("pcre", "web(")).isPresent();
    }
}
