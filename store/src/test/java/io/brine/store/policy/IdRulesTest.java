package io.brine.store.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The autosign/autoreject file syntax, line by line, and what each entry matches. */
class IdRulesTest {

    @ParameterizedTest(name = "entry [{0}] vs id {1} -> {2}")
    @CsvSource(
            delimiter = '|',
            value = {
                // entry            | id                      | matches
                "web1.example.com   | web1.example.com        | true",
                "web1.example.com   | web2.example.com        | false",
                "web1.example.com   | web1.example.com.evil   | false",
                "web1               | web1.example.com        | false",
                "*.example.com      | web.example.com         | true",
                "*.example.com      | a.b.example.com         | true",
                "*.example.com      | example.com             | false",
                "*.example.com      | webexample.com          | false",
                "*.example.com      | web.example.com.evil.io | false",
                "*.example.com      | web.example.org         | false",
                "*.example.com      | web_1.example.com       | true",
                "*.com              | a.b.com                 | true",
                "*.com              | com                     | false",
                "*                  | anything                | true",
                "*                  | a.b.c                   | true",
            })
    void whatAnEntryMatches(String entry, String id, boolean matches) {
        IdRules rules = IdRules.parse(entry + "\n");
        assertThat(rules.problems()).isEmpty();
        assertThat(rules.match(id).isPresent()).isEqualTo(matches);
    }

    @ParameterizedTest(name = "[{0}] is not an entry: {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "'web1.example.com.'  | empty label",
                "'.example.com'       | empty label",
                "'web1..example.com'  | empty label",
                "'*.'                 | empty",
                "'*.example.com.'     | empty label",
                "'**.example.com'     | '*' may stand only",
                "'*.*.example.com'    | '*' may stand only",
                "'web*.example.com'   | '*' may stand only",
                "'*example.com'       | '*' may stand only",
                "'web.*.com'          | '*' may stand only",
                "'example.*'          | '*' may stand only",
                "'*.example.com*'     | '*' may stand only",
                "'web?.example.com'   | not other glob characters",
                "'web[12].example.com'| not other glob characters",
                "'web{1,2}'           | not other glob characters",
                "'!web1'              | not other glob characters",
                "'Web1.example.com'   | lower case",
                "'*.Example.com'      | lower case",
                "' web1'              | white space",
                "'web1 '              | white space",
                "'web1 # the web box' | white space",
                "' # indented comment'| white space",
                "'web1\tweb2'         | white space",
                "'-web1'              | starting with '-'",
                "'web/1'              | outside [a-z0-9._-]",
                "'wéb1'               | outside [a-z0-9._-]",
            })
    void linesThatAreNotEntriesAreProblems(String line, String reason) {
        IdRules rules = IdRules.parse("web9\n" + line + "\n");
        assertThat(rules.problems()).singleElement().satisfies(problem -> {
            assertThat(problem.line()).isEqualTo(2);
            assertThat(problem.text()).isEqualTo(line);
            assertThat(problem.reason()).contains(reason);
        });
        assertThat(rules.size()).isEqualTo(1);
        assertThat(rules.match("web9")).isPresent();
    }

    @Test
    void commentsOnlyInTheFirstColumnAndBlankLinesAreSkipped() {
        IdRules rules = IdRules.parse("# web fleet\n\n   \n#*\nweb1\n#db1\n");
        assertThat(rules.problems()).isEmpty();
        assertThat(rules.size()).isEqualTo(1);
        assertThat(rules.match("db1")).isEmpty();
        assertThat(rules.matchesEverything()).isFalse();
    }

    @Test
    void aBadLineDoesNotStopTheRestFromApplyingAndLinesAreNumberedWithCrlf() {
        IdRules rules = IdRules.parse("web1\r\nBAD LINE\r\n*.db.example.com\r\n");
        assertThat(rules.problems()).extracting(IdRules.Problem::line).containsExactly(2);
        assertThat(rules.match("web1"))
                .hasValueSatisfying(e -> assertThat(e.line()).isEqualTo(1));
        assertThat(rules.match("x.db.example.com")).hasValueSatisfying(e -> {
            assertThat(e.line()).isEqualTo(3);
            assertThat(e.text()).isEqualTo("*.db.example.com");
        });
    }

    @Test
    void anExactEntryWinsThenTheLongestDomainThenStar() {
        IdRules rules = IdRules.parse(
                String.join("\n", List.of("*", "*.example.com", "*.web.example.com", "a.web.example.com")));
        assertThat(rules.match("a.web.example.com").orElseThrow().text()).isEqualTo("a.web.example.com");
        assertThat(rules.match("b.web.example.com").orElseThrow().text()).isEqualTo("*.web.example.com");
        assertThat(rules.match("db.example.com").orElseThrow().text()).isEqualTo("*.example.com");
        assertThat(rules.match("example.com").orElseThrow().text()).isEqualTo("*");
        assertThat(rules.matchesEverything()).isTrue();
    }

    @Test
    void anEmptyFileMatchesNothing() {
        assertThat(IdRules.parse("").match("web1")).isEmpty();
        assertThat(IdRules.EMPTY.match("web1")).isEmpty();
    }
}
