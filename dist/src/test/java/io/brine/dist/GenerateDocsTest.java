package io.brine.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

class GenerateDocsTest {

    @TempDir
    Path dir;

    /** Every option of every command of the CLI, subcommands included (not 'help'). */
    private static List<OptionSpec> allOptions(CommandSpec spec) {
        List<OptionSpec> options = new ArrayList<>(spec.options());
        spec.subcommands().values().stream().map(CommandLine::getCommandSpec).distinct()
                .filter(sub -> !(sub.userObject() instanceof CommandLine.HelpCommand))
                .forEach(sub -> options.addAll(allOptions(sub)));
        return options;
    }

    @Test
    void eachCliHasAManPageNamingEachOfItsOptionsAndACompletionScript() throws Exception {
        GenerateDocs.main(new String[] {dir.toString(), "9.9.9"});
        assertThat(GenerateDocs.CLIS).extracting(GenerateDocs.Cli::name)
                .containsExactlyInAnyOrder("brine-master", "brine-minion", "brine-key", "brine");
        for (GenerateDocs.Cli cli : GenerateDocs.CLIS) {
            String man = Files.readString(dir.resolve(cli.name() + ".1"));
            assertThat(man).startsWith(".\\\" Generated from").contains(".TH " + cli.name().toUpperCase()
                    + " 1 \"\" \"brine 9.9.9\"").contains(".SH NAME\n" + GenerateDocs.escape(cli.name()) + " \\- ");
            List<OptionSpec> options = allOptions(cli.commandLine().getCommandSpec());
            assertThat(options).as(cli.name()).isNotEmpty();
            for (OptionSpec option : options) {
                for (String name : option.names()) {
                    assertThat(man).as("%s.1 names %s", cli.name(), name)
                            .contains("\\fB" + GenerateDocs.escape(name) + "\\fR");
                }
            }
            String completion = Files.readString(dir.resolve(cli.name() + ".bash"));
            assertThat(completion).contains("complete -F").contains(options.get(0).longestName());
        }
    }

    @Test
    void escapingKeepsTroffRequestsAndHyphensLiteral() {
        assertThat(GenerateDocs.escape("--out")).isEqualTo("\\-\\-out");
        assertThat(GenerateDocs.escape(".hidden")).isEqualTo("\\&.hidden");
        assertThat(GenerateDocs.escape("a\\b")).isEqualTo("a\\eb");
    }
}
