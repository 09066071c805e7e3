package io.brine.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
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
        spec.subcommands().values().stream()
                .map(CommandLine::getCommandSpec)
                .distinct()
                .filter(sub -> !(sub.userObject() instanceof CommandLine.HelpCommand))
                .forEach(sub -> options.addAll(allOptions(sub)));
        return options;
    }

    @Test
    void eachCliHasAManPageNamingEachOfItsOptionsAndACompletionScript() throws Exception {
        GenerateDocs.main(new String[] {dir.toString(), "9.9.9"});
        assertThat(GenerateDocs.CLIS)
                .extracting(GenerateDocs.Cli::name)
                .containsExactlyInAnyOrder("brine-master", "brine-minion", "brine-key", "brine");
        for (GenerateDocs.Cli cli : GenerateDocs.CLIS) {
            String man = Files.readString(dir.resolve(cli.name() + ".1"));
            assertThat(man)
                    .startsWith(".\\\" Generated from")
                    .contains(".TH " + cli.name().toUpperCase() + " 1 \"\" \"brine 9.9.9\"")
                    .contains(".SH NAME\n" + GenerateDocs.escape(cli.name()) + " \\- ");
            List<OptionSpec> options = allOptions(cli.commandLine().getCommandSpec());
            assertThat(options).as(cli.name()).isNotEmpty();
            for (OptionSpec option : options) {
                for (String name : option.names()) {
                    assertThat(man)
                            .as("%s.1 names %s", cli.name(), name)
                            .contains("\\fB" + GenerateDocs.escape(name) + "\\fR");
                }
            }
            String completion = Files.readString(dir.resolve(cli.name() + ".bash"));
            assertThat(completion)
                    .contains("complete -F")
                    .contains(options.get(0).longestName());
        }
    }

    @Test
    void escapingKeepsTroffRequestsAndHyphensLiteral() {
        assertThat(GenerateDocs.escape("--out")).isEqualTo("\\-\\-out");
        assertThat(GenerateDocs.escape(".hidden")).isEqualTo("\\&.hidden");
        assertThat(GenerateDocs.escape("a\\b")).isEqualTo("a\\eb");
    }

    /** What brine-key's completion offers after WORDS (the last is the word being completed), from the pki dir. */
    private String complete(String... words) throws Exception {
        StringBuilder line = new StringBuilder("COMP_WORDS=(");
        for (String word : words) {
            line.append('\'').append(word).append("' ");
        }
        line.append("); COMP_CWORD=")
                .append(words.length - 1)
                .append("; _complete_brine-key_ids; printf '%s\\n' \"${COMPREPLY[@]}\"");
        Process bash = new ProcessBuilder(
                        "bash",
                        "-c",
                        "source \"$0\"; " + line,
                        dir.resolve("brine-key.bash").toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(bash.waitFor()).as(out).isZero();
        return out.strip();
    }

    @Test
    void brineKeyCompletesKeyIdsFromThePkiDirAndStates() throws Exception {
        GenerateDocs.main(new String[] {dir.toString(), "9.9.9"});
        Path pki = dir.resolve("pki");
        for (String key : List.of(
                "minions_pre/web1",
                "minions/db1",
                "minions_rejected/web2",
                "minions_denied/web3",
                "minions_pre/bad name",
                "minions_pre/.web1.tmp")) {
            Files.createDirectories(pki.resolve(key).getParent());
            Files.writeString(pki.resolve(key), "");
        }
        String p = pki.toString();
        assertThat(complete("brine-key", "--pki-dir", p, "-a", "").lines()).containsExactly("web1", "web2");
        assertThat(complete("brine-key", "--pki-dir", p, "-r", "").lines()).containsExactly("db1", "web1");
        assertThat(complete("brine-key", "--pki-dir", p, "-d", "web").lines()).containsExactly("web1", "web2", "web3");
        assertThat(complete("brine-key", "-l", "a").lines()).containsExactly("acc", "accepted", "all");
        // pki_dir of master.yaml in -c DIR, when no --pki-dir is given.
        Files.writeString(dir.resolve("master.yaml"), "# pki_dir: /nowhere\npki_dir: " + p + "  # here\n");
        assertThat(complete("brine-key", "-c", dir.toString(), "-f", "d").lines())
                .containsExactly("db1");
    }
}
