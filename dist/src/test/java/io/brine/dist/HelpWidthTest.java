package io.brine.dist;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.bench.BenchMain;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every CLI's {@code --help}, subcommands included, as an 80-column terminal shows it: each example of its footer is
 * one line of at most 80 columns, as written, so it can be copied whole (issue 29).
 */
class HelpWidthTest {

    static final int COLUMNS = 80;

    /** Each command's name (with its parents') and its help as printed at {@link #COLUMNS} columns. */
    private static void render(String name, CommandLine command, Map<String, CommandLine> into) {
        if (command.getCommandSpec().userObject() instanceof CommandLine.HelpCommand) {
            return;
        }
        command.setUsageHelpAutoWidth(false);
        command.setUsageHelpWidth(COLUMNS);
        into.put(name, command);
        command.getSubcommands().forEach((sub, line) -> {
            if (!sub.equals(line.getCommandName()) || into.containsKey(name + " " + sub)) {
                return; // an alias
            }
            render(name + " " + sub, line, into);
        });
    }

    private static Map<String, CommandLine> everyCommand() {
        Map<String, CommandLine> commands = new LinkedHashMap<>();
        for (GenerateDocs.Cli cli : GenerateDocs.CLIS) {
            render(cli.name(), cli.commandLine(), commands);
        }
        render("brine-bench", new CommandLine(new BenchMain()), commands);
        return commands;
    }

    @Test
    void everyExampleInEveryHelpIsOneWholeLineOfAtMost80Columns() {
        List<String> problems = new ArrayList<>();
        Map<String, CommandLine> commands = everyCommand();
        assertThat(commands)
                .containsKeys(
                        "brine-master",
                        "brine-minion",
                        "brine-key",
                        "brine",
                        "brine-bench",
                        "brine events",
                        "brine-key policy");
        commands.forEach((name, command) -> {
            String help = command.getUsageMessage(CommandLine.Help.Ansi.OFF);
            List<String> shown = help.lines().toList();
            for (String example : command.getCommandSpec().usageMessage().footer()) {
                String line = example.stripTrailing();
                if (line.isBlank() || !line.startsWith(" ")) {
                    continue; // a heading or a sentence: wrapped as prose
                }
                if (line.length() > COLUMNS) {
                    problems.add(name + ": " + line.length() + " columns: " + line.strip());
                } else if (!shown.contains(line)) {
                    problems.add(name + ": split: " + line.strip());
                }
            }
            shown.stream()
                    .filter(l -> l.length() > COLUMNS)
                    .forEach(l -> problems.add(name + ": a line of " + l.length() + " columns: " + l.strip()));
        });
        assertThat(problems).isEmpty();
    }
}
