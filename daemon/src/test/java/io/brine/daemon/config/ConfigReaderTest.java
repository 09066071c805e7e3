package io.brine.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.tuple;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ConfigReaderTest {

    @TempDir
    Path dir;

    private Path write(String yaml) throws IOException {
        return Files.writeString(dir.resolve("test.yaml"), yaml);
    }

    private ConfigReader open(String yaml) throws Exception {
        return ConfigReader.open(write(yaml));
    }

    /** Reads {@code yaml} with {@code reads}, and returns the problems {@code finish()} reports (none: empty). */
    private List<ConfigProblem> problems(String yaml, Consumer<ConfigSection> reads) throws Exception {
        ConfigReader reader = open(yaml);
        reads.accept(reader.root());
        ConfigException e = catchThrowableOfType(ConfigException.class, reader::finish);
        return e == null ? List.of() : e.problems();
    }

    private ConfigProblem onlyProblem(String yaml, Consumer<ConfigSection> reads) throws Exception {
        List<ConfigProblem> problems = problems(yaml, reads);
        assertThat(problems).hasSize(1);
        return problems.get(0);
    }

    // ------------------------------------------------------------ files

    @ParameterizedTest
    @ValueSource(strings = {"", "\n\n", "# only a comment\n", "---\n", "~\n", "\uFEFF"})
    void emptyDocumentMeansAllDefaults(String yaml) throws Exception {
        ConfigReader reader = open(yaml);
        assertThat(reader.root().integer("port", 1, 10)).isEmpty();
        assertThat(reader.root().string("name")).isEmpty();
        reader.finish();
    }

    @Test
    void missingFileIsOneClearProblem() {
        Path missing = dir.resolve("master.yaml");
        assertThatThrownBy(() -> ConfigReader.open(missing))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining(missing + ": file not found");
    }

    @Test
    void directoryIsRefused() {
        assertThatThrownBy(() -> ConfigReader.open(dir)).hasMessageContaining("is a directory");
    }

    @Test
    void tooLargeFileIsRefusedBeforeParsing() throws IOException {
        Path big = Files.write(dir.resolve("big.yaml"), new byte[ConfigReader.MAX_FILE_BYTES + 1]);
        assertThatThrownBy(() -> ConfigReader.open(big)).hasMessageContaining("larger than 1 MiB");
    }

    @Test
    void invalidUtf8IsRefused() throws IOException {
        Path bad = Files.write(dir.resolve("bad.yaml"), new byte[] {'a', ':', ' ', (byte) 0xC3, (byte) 0x28});
        assertThatThrownBy(() -> ConfigReader.open(bad)).hasMessageContaining("not valid UTF-8");
    }

    @Test
    void syntaxErrorNamesItsLine() throws IOException {
        Path file = write("a: 1\nb: [1, 2\nc: 3\n");
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigReader.open(file));
        assertThat(e.problems()).singleElement().satisfies(p -> {
            assertThat(p.line()).isEqualTo(3);
            assertThat(p.message()).startsWith("invalid YAML: ");
        });
    }

    @Test
    void tabIndentationIsASyntaxError() throws IOException {
        Path file = write("a: 1\n\tb: 2\n");
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigReader.open(file));
        assertThat(e.problems())
                .singleElement()
                .satisfies(p -> assertThat(p.line()).isEqualTo(2));
        assertThat(e.getMessage()).doesNotContain("\t");
    }

    @Test
    void topLevelMustBeAMapping() throws IOException {
        for (String[] yamlAndGot :
                new String[][] {{"- a\n- b\n", "a list"}, {"just text\n", "\"just text\""}, {"42\n", "\"42\""}}) {
            Path file = write(yamlAndGot[0]);
            assertThatThrownBy(() -> ConfigReader.open(file))
                    .hasMessageContaining("top level must be a mapping")
                    .hasMessageContaining("got " + yamlAndGot[1]);
        }
    }

    @Test
    void secondDocumentIsRefused() throws IOException {
        Path file = write("a: 1\n---\nb: 2\n");
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigReader.open(file));
        assertThat(e.problems()).singleElement().satisfies(p -> {
            assertThat(p.line()).isEqualTo(3);
            assertThat(p.message()).contains("more than one YAML document");
        });
    }

    // ------------------------------------------------------------ structure

    @Test
    void duplicateKeyIsAProblemAtTheSecondOccurrence() throws Exception {
        ConfigProblem p = onlyProblem("port: 1\nname: x\nport: 2\n", root -> {
            assertThat(root.integer("port", 1, 10)).hasValue(1);
            root.string("name");
        });
        assertThat(p.line()).isEqualTo(3);
        assertThat(p.key()).isEqualTo("port");
        assertThat(p.message()).isEqualTo("duplicate key (first at line 1)");
    }

    @Test
    void duplicateKeyInNestedMappingHasItsPath() throws Exception {
        ConfigProblem p = onlyProblem(
                "tls:\n  cert: a\n  cert: b\n", root -> root.section("tls").ifPresent(tls -> tls.string("cert")));
        assertThat(p.key()).isEqualTo("tls.cert");
        assertThat(p.line()).isEqualTo(3);
    }

    @Test
    void unknownKeySuggestsTheClosestAndListsTheValidOnes() throws Exception {
        ConfigProblem p = onlyProblem("publish_port: 1\npublsh_port: 2\n", root -> {
            root.integer("publish_port", 1, 10);
            root.integer("ret_port", 1, 10);
        });
        assertThat(p.line()).isEqualTo(2);
        assertThat(p.key()).isEqualTo("publsh_port");
        assertThat(p.message())
                .isEqualTo("unknown key, did you mean publish_port? (valid keys here: publish_port, ret_port)");
    }

    @ParameterizedTest
    @CsvSource({
        "publish-port,publish_port",
        "PUBLISH_PORT,publish_port",
        "keep_jobs,keep_jobs_seconds",
        "retport,ret_port"
    })
    void suggestionsCoverCommonSlips(String typed, String meant) throws Exception {
        ConfigProblem p = onlyProblem(typed + ": 1\n", root -> {
            root.integer("publish_port", 1, 10);
            root.integer("ret_port", 1, 10);
            root.seconds("keep_jobs_seconds", 1, 10);
        });
        assertThat(p.message()).startsWith("unknown key, did you mean " + meant + "?");
    }

    @Test
    void validKeysAreListedOnceASectionAndEachUnknownKeyGetsItsNearestName() throws Exception {
        List<ConfigProblem> problems = problems("colour: red\npublsh_port: 2\nretport: 3\n", root -> {
            root.integer("publish_port", 1, 10);
            root.integer("ret_port", 1, 10);
        });
        assertThat(problems)
                .extracting(ConfigProblem::message)
                .containsExactly(
                        "unknown key (valid keys here: publish_port, ret_port)",
                        "unknown key, did you mean publish_port? (valid keys listed at line 1)",
                        "unknown key, did you mean ret_port? (valid keys listed at line 1)");
    }

    @Test
    void unrelatedUnknownKeyGetsNoSuggestion() throws Exception {
        ConfigProblem p = onlyProblem("colour: red\n", root -> root.integer("publish_port", 1, 10));
        assertThat(p.message()).isEqualTo("unknown key (valid keys here: publish_port)");
    }

    @Test
    void unknownKeyInNestedSectionNamesItsPath() throws Exception {
        ConfigProblem p = onlyProblem(
                "tls:\n  cert: a\n  kye: b\n",
                root -> root.section("tls").ifPresent(tls -> {
                    tls.path("cert");
                    tls.path("key");
                }));
        assertThat(p.key()).isEqualTo("tls.kye");
        assertThat(p.line()).isEqualTo(3);
        assertThat(p.message()).contains("did you mean key?");
    }

    @Test
    void aliasesAndTagsAreRefused() throws Exception {
        List<ConfigProblem> problems = problems("a: &x foo\nb: *x\nc: !!int 5\nd: !!str 0600\n", root -> {
            root.string("a");
            assertThat(root.string("b")).isEmpty();
            assertThat(root.integer("c", 0, 10)).isEmpty();
            assertThat(root.string("d")).hasValue("0600");
        });
        assertThat(problems).extracting(ConfigProblem::line).containsExactly(2, 3);
        assertThat(problems.get(0).message()).contains("aliases");
        assertThat(problems.get(1).message()).contains("tags (!!int)");
    }

    @Test
    void tooDeepNestingIsAProblemNotAStackOverflow() throws Exception {
        String deep = "a: " + "[".repeat(500) + "]".repeat(500) + "\n";
        assertThat(problems(deep, root -> root.strings("a", ValueCheck.any())))
                .anySatisfy(p -> assertThat(p.message()).isEqualTo("nested deeper than 16 levels"));
    }

    @Test
    void allProblemsAreReportedTogetherInFileOrder() throws Exception {
        String yaml = """
                # a comment
                name: ok
                port: abc
                enabled: yes

                colour: red
                timeout: 30s
                """;
        ConfigReader reader = open(yaml);
        ConfigSection root = reader.root();
        root.seconds("timeout", 1, 60);
        root.string("name");
        root.bool("enabled");
        root.integer("port", 1, 65535);
        ConfigException e = catchThrowableOfType(ConfigException.class, reader::finish);
        assertThat(e.problems())
                .extracting(ConfigProblem::line, ConfigProblem::key)
                .containsExactly(tuple(3, "port"), tuple(4, "enabled"), tuple(6, "colour"), tuple(7, "timeout"));
        Path file = dir.resolve("test.yaml");
        assertThat(e.getMessage())
                .isEqualTo(String.join(
                        System.lineSeparator(),
                        "invalid configuration (4 problems):",
                        "  " + file + ":3: port: expected an integer from 1 to 65535, got \"abc\"",
                        "  " + file
                                + ":4: enabled: expected true or false, got \"yes\" (YAML 1.1 reads yes/no/on/off as"
                                + " booleans; brine takes only true and false)",
                        "  " + file + ":6: colour: unknown key (valid keys here: timeout, name, enabled, port)",
                        "  " + file
                                + ":7: timeout: expected a whole number of seconds from 1 to 60, got \"30s\" (write the"
                                + " number of seconds alone, without a unit)"));
    }

    @Test
    void problemsAtNoLineComeLastAndPrintWithoutOne() throws Exception {
        ConfigReader reader = open("a: x\nb: 1\n");
        reader.root().problem("id", "cannot derive it; set id");
        reader.root().string("a");
        reader.root().problem("a", "clashes with b");
        reader.root().integer("b", 0, 1);
        ConfigException e = catchThrowableOfType(ConfigException.class, reader::finish);
        assertThat(e.problems())
                .extracting(ConfigProblem::toString)
                .containsExactly(
                        dir.resolve("test.yaml") + ":1: a: clashes with b",
                        dir.resolve("test.yaml") + ": id: cannot derive it; set id");
    }

    // ------------------------------------------------------------ scalars

    @ParameterizedTest
    @ValueSource(strings = {"yes", "no", "on", "off", "y", "0600", "1e3", "12:30", "true", "~x", "0x1F", "1_000"})
    void stringKeysKeepTheTextAsWritten(String value) throws Exception {
        ConfigReader reader = open("name: " + value + "\n");
        assertThat(reader.root().string("name")).hasValue(value);
        reader.finish();
    }

    @ParameterizedTest
    @ValueSource(strings = {"key:", "key: ~", "key: null", "key: ''", "key: \"\""})
    void nothingMeansNotSet(String yaml) throws Exception {
        ConfigReader reader = open(yaml + "\n");
        assertThat(reader.root().string("key")).isEmpty();
        assertThat(reader.root().has("key")).isFalse();
        reader.finish();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {"true|true", "True|true", "TRUE|true", "false|false", "False|false"})
    void booleansAreOnlyTrueAndFalse(String text, boolean expected) throws Exception {
        ConfigReader reader = open("flag: " + text + "\n");
        assertThat(reader.root().bool("flag")).hasValue(expected);
        reader.finish();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "yes|got \"yes\" (YAML 1.1 reads yes/no/on/off as booleans; brine takes only true and false)",
                "off|got \"off\" (YAML 1.1",
                "'''true'''|got \"true\" (remove the quotes)",
                "1|got \"1\"",
                "[true]|got a list"
            })
    void yamlOneOneBooleansAreRefused(String text, String got) throws Exception {
        ConfigProblem p = onlyProblem(
                "flag: " + text + "\n", root -> assertThat(root.bool("flag")).isEmpty());
        assertThat(p.message()).startsWith("expected true or false, " + got);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {"4505|4505", "1|1", "65535|65535", "-0|0"})
    void integersArePlainDecimal(String text, int expected) throws Exception {
        ConfigReader reader = open("port: " + text + "\n");
        assertThat(reader.root().integer("port", 0, 65535)).hasValue(expected);
        reader.finish();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "abc|got \"abc\"",
                "0|got \"0\"",
                "65536|got \"65536\"",
                "99999999999999999999|got \"99999999999999999999\"",
                "0600|got \"0600\" (a leading zero is ambiguous: YAML 1.1 reads it as octal)",
                "1e3|got \"1e3\"",
                "4505.0|got \"4505.0\"",
                "1_000|got \"1_000\" (write the digits without '_')",
                "0x1F|got \"0x1F\"",
                "+5|got \"+5\"",
                "'''4505'''|got the string \"4505\" (remove the quotes)",
                "{a: 1}|got a mapping"
            })
    void integerPitfallsAreRefused(String text, String got) throws Exception {
        ConfigProblem p = onlyProblem(
                "port: " + text + "\n",
                root -> assertThat(root.integer("port", 1, 65535)).isEmpty());
        assertThat(p.line()).isEqualTo(1);
        assertThat(p.column()).isEqualTo(7);
        assertThat(p.message()).isEqualTo("expected an integer from 1 to 65535, " + got);
    }

    @Test
    void secondsAreADuration() throws Exception {
        ConfigReader reader = open("t: 86400\n");
        assertThat(reader.root().seconds("t", 1, Long.MAX_VALUE)).hasValue(Duration.ofDays(1));
        reader.finish();
        ConfigProblem p = onlyProblem("t: 0\n", root -> root.seconds("t", 1, Long.MAX_VALUE));
        assertThat(p.message()).isEqualTo("expected a whole number of seconds of at least 1, got \"0\"");
    }

    @Test
    void choiceIsALowerCaseEnumName() throws Exception {
        ConfigReader reader = open("transport: tcp\nlevel: debug\n");
        assertThat(reader.root().choice("transport", TransportKind.class)).hasValue(TransportKind.TCP);
        assertThat(reader.root().choice("level", LogLevel.class)).hasValue(LogLevel.DEBUG);
        reader.finish();
        ConfigProblem p = onlyProblem("transport: ZeroMQ\n", root -> root.choice("transport", TransportKind.class));
        assertThat(p.message()).isEqualTo("expected one of zeromq, tcp, got \"ZeroMQ\"");
    }

    @Test
    void choicesAreOneValueOrAListOfDistinctValues() throws Exception {
        ConfigReader reader = open("one: tcp\nboth: [tcp, zeromq]\n");
        assertThat(reader.root().choices("one", TransportKind.class)).hasValue(Set.of(TransportKind.TCP));
        assertThat(reader.root().choices("both", TransportKind.class).orElseThrow())
                .containsExactly(TransportKind.TCP, TransportKind.ZEROMQ);
        reader.finish();
        assertThat(onlyProblem("t: [tcp, tcp]\n", root -> root.choices("t", TransportKind.class))
                        .message())
                .isEqualTo("tcp is listed twice");
        assertThat(onlyProblem("t: [tcp, zmq]\n", root -> root.choices("t", TransportKind.class))
                        .message())
                .isEqualTo("expected one of zeromq, tcp, got \"zmq\"");
        assertThat(onlyProblem("t: []\n", root -> root.choices("t", TransportKind.class))
                        .message())
                .startsWith("expected one of zeromq, tcp, or a list of them");
    }

    @ParameterizedTest
    @CsvSource({
        "localhost,localhost",
        "salt.example.com,salt.example.com",
        "Master-1.lan.,Master-1.lan.",
        "10.0.0.1,10.0.0.1",
        "0.0.0.0,0.0.0.0",
        "'''::''',::",
        "::1,::1",
        "'''[fe80::1]''',fe80::1",
        "2001:db8::8a2e:370:7334,2001:db8::8a2e:370:7334"
    })
    void hostsAreNamesOrAddressLiterals(String text, String expected) throws Exception {
        ConfigReader reader = open("master: " + text + "\n");
        assertThat(reader.root().host("master")).hasValue(expected);
        reader.finish();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "256.1.1.1",
                "10.0.0",
                "010.0.0.1",
                "1.2.3.4.5",
                "-master",
                "mas ter",
                "a..b",
                "http://x",
                "1::2::3",
                "'[foo]'",
                "under_score.example",
                "x.1"
            })
    void badHostsAreRefused(String text) throws Exception {
        ConfigProblem p = onlyProblem(
                "master: " + text + "\n",
                root -> assertThat(root.host("master")).isEmpty());
        assertThat(p.key()).isEqualTo("master");
    }

    @Test
    void controlCharactersAreRefusedAndEscapedInTheMessage() throws Exception {
        ConfigProblem p = onlyProblem("name: \"evil\\e[31m\"\n", root -> root.string("name"));
        assertThat(p.message()).isEqualTo("contains a control character (U+001B): \"evil\\u001b[31m\"");
    }

    @Test
    void valueChecksNameTheValue() throws Exception {
        ValueCheck lowerCase = v -> v.equals(v.toLowerCase()) ? Optional.empty() : Optional.of("must be lower case");
        ConfigProblem p = onlyProblem("id: Web1\n", root -> root.string("id", lowerCase));
        assertThat(p.message()).isEqualTo("\"Web1\" is not valid: must be lower case");
    }

    @Test
    void secretsNeverAppearInProblems() throws Exception {
        ConfigReader reader = open("token: s3cr3t\n");
        Optional<Secret> token = reader.root().secret("token");
        reader.finish();
        assertThat(token).map(Secret::reveal).hasValue("s3cr3t");
        assertThat(token.get()).hasToString("<redacted>").isEqualTo(new Secret("s3cr3t"));

        ConfigProblem p = onlyProblem("token: \"s3cr3t\\t\"\n", root -> root.secret("token"));
        assertThat(p.message())
                .isEqualTo("contains a control character (U+0009)")
                .doesNotContain("s3cr3t");
    }

    // ------------------------------------------------------------ paths

    @Test
    void relativePathsResolveAgainstTheConfigDirectory() throws Exception {
        ConfigReader reader = open("a: pki\nb: ../cache/x\nc: /var/lib/brine\nd: ./x/./y\n");
        ConfigSection root = reader.root();
        assertThat(root.path("a")).hasValue(dir.toAbsolutePath().resolve("pki"));
        assertThat(root.path("b")).hasValue(dir.toAbsolutePath().getParent().resolve("cache/x"));
        assertThat(root.path("c")).hasValue(Path.of("/var/lib/brine"));
        assertThat(root.path("d")).hasValue(dir.toAbsolutePath().resolve("x/y"));
        reader.finish();
        assertThat(reader.directory()).isEqualTo(dir.toAbsolutePath());
    }

    @Test
    void tildeIsNotExpanded() throws Exception {
        ConfigProblem p = onlyProblem("a: ~/pki\n", root -> root.path("a"));
        assertThat(p.message()).startsWith("~ is not expanded");
    }

    // ------------------------------------------------------------ collections

    @Test
    void listsOfStrings() throws Exception {
        ConfigReader reader = open("a: [web*, 'db?', 10]\nb:\n  - x\n  - yes\nc: []\n");
        ConfigSection root = reader.root();
        assertThat(root.strings("a", ValueCheck.glob())).hasValue(List.of("web*", "db?", "10"));
        assertThat(root.strings("b", ValueCheck.any())).hasValue(List.of("x", "yes"));
        assertThat(root.strings("c", ValueCheck.any())).hasValue(List.of());
        reader.finish();
    }

    @Test
    void listItemProblemsNameTheItemAndItsLine() throws Exception {
        List<ConfigProblem> problems = problems(
                "a:\n  - ok*\n  - 'bad glob'\n  - [nested]\n  -\n  - 'x['\n",
                root -> assertThat(root.strings("a", ValueCheck.glob())).hasValue(List.of("ok*")));
        assertThat(problems)
                .extracting(ConfigProblem::key, ConfigProblem::line, ConfigProblem::message)
                .containsExactly(
                        tuple("a[1]", 3, "\"bad glob\" is not valid: a glob cannot contain white space"),
                        tuple("a[2]", 4, "expected a single value, got a list"),
                        tuple("a[3]", 5, "expected a single value, got nothing"),
                        tuple("a[4]", 6, "\"x[\" is not valid: a glob has an unclosed '['"));
    }

    @Test
    void aScalarIsNotTakenForAList() throws Exception {
        ConfigProblem p = onlyProblem("a: web*\n", root -> root.strings("a", ValueCheck.glob()));
        assertThat(p.message()).isEqualTo("expected a list, got \"web*\" (write [value] or '- value' lines)");
    }

    @Test
    void mapsOfValuesOrLists() throws Exception {
        ConfigReader reader = open("grains:\n  roles: [web, db]\n  os: debian\n  cores: 4\n");
        Optional<Map<String, List<String>>> grains = reader.root().stringLists("grains", ValueCheck.any());
        reader.finish();
        assertThat(grains)
                .hasValueSatisfying(g -> assertThat(g)
                        .containsExactly(
                                Map.entry("roles", List.of("web", "db")),
                                Map.entry("os", List.of("debian")),
                                Map.entry("cores", List.of("4"))));
    }

    @Test
    void mapValueProblemsNameTheirPath() throws Exception {
        List<ConfigProblem> problems =
                problems("g:\n  a: {x: 1}\n  b:\n  'c d': 1\n", root -> root.stringLists("g", ValueCheck.any()));
        assertThat(problems)
                .extracting(ConfigProblem::key, ConfigProblem::line)
                .containsExactly(tuple("g.a", 2), tuple("g.b", 3), tuple("g.c d", 4));
    }

    @Test
    void listsOfSectionsAndMapsOfSections() throws Exception {
        String yaml = """
                tokens:
                  - match: web*
                    sha256: abc
                  - match: db*
                    sha265: typo
                acl:
                  ops:
                    targets: ['*']
                  dev: nope
                """;
        ConfigReader reader = open(yaml);
        ConfigSection root = reader.root();
        List<ConfigSection> tokens = root.sectionList("tokens").orElseThrow();
        assertThat(tokens).extracting(ConfigSection::path).containsExactly("tokens[0]", "tokens[1]");
        for (ConfigSection token : tokens) {
            token.string("match");
            if (token.string("sha256").isEmpty()) {
                token.problem("sha256", "is required");
            }
        }
        Map<String, ConfigSection> acl = root.sectionMap("acl").orElseThrow();
        assertThat(acl).containsOnlyKeys("ops");
        acl.get("ops").strings("targets", ValueCheck.glob());
        ConfigException e = catchThrowableOfType(ConfigException.class, reader::finish);
        assertThat(e.problems())
                .extracting(ConfigProblem::key, ConfigProblem::line, ConfigProblem::message)
                .containsExactly(
                        tuple("tokens[1].sha256", 4, "is required"),
                        tuple(
                                "tokens[1].sha265",
                                5,
                                "unknown key, did you mean sha256? (valid keys here: match, sha256)"),
                        tuple("acl.dev", 9, "expected a mapping of 'key: value' lines, got \"nope\""));
    }
}
