package io.brine.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** What the example configuration tells an admin to run exists: every command and option it names. */
class ConfCommandsTest {

    private static final Path CONF =
            Path.of(System.getProperty("user.dir")).getParent().resolve("conf");
    /** "brine-key WORDS..." up to the end of the line, a quote or a parenthesis. */
    private static final Pattern MENTION =
            Pattern.compile("(?<![/\\w-])(brine-key|brine-master|brine-minion|brine) " + "([^\"()\\n]*)");

    @Test
    void everyCommandTheExampleConfigurationNamesExists() throws Exception {
        List<String> checked = new ArrayList<>();
        try (Stream<Path> files = Files.list(CONF)) {
            // Not the units: their comments are useradd and install lines, where 'brine' is a user name.
            for (Path file : files.filter(f -> !f.toString().endsWith(".service"))
                    .sorted()
                    .toList()) {
                List<String> lines = Files.readAllLines(file);
                for (int i = 0; i < lines.size(); i++) {
                    Matcher mention = MENTION.matcher(lines.get(i));
                    while (mention.find()) {
                        GenerateDocs.Cli cli = GenerateDocs.CLIS.stream()
                                .filter(c -> c.name().equals(mention.group(1)))
                                .findFirst()
                                .orElseThrow();
                        String where = file.getFileName() + ":" + (i + 1) + ": "
                                + mention.group().strip();
                        String first = mention.group(2).strip().split("\\s+")[0];
                        if (first.isEmpty() || !(first.startsWith("-") || first.matches("[a-z][a-z-]+"))) {
                            continue; // prose ("the brine master"), not a command line
                        }
                        CommandLine.Model.CommandSpec spec = cli.commandLine().getCommandSpec();
                        if (first.startsWith("-")) {
                            assertThat(spec.findOption(first)).as(where).isNotNull();
                        } else if (!cli.name().equals("brine")) {
                            assertThat(spec.subcommands()).as(where).containsKey(first);
                        }
                        checked.add(where);
                    }
                }
            }
        }
        assertThat(checked).as("mentions checked").hasSizeGreaterThan(4);
    }
}
