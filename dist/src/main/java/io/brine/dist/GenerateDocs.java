package io.brine.dist;

import io.brine.client.cli.BrineCli;
import io.brine.keytool.BrineKey;
import io.brine.master.MasterMain;
import io.brine.minion.MinionMain;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Run at build time: writes {@code NAME.1} (a man page, troff) and {@code NAME.bash} (bash completion) for each
 * CLI from its own picocli model, so they never drift from {@code --help}.
 */
public final class GenerateDocs {

    /** One CLI: its command name, its picocli command object, Salt's equivalent, and the files it reads. */
    record Cli(String name, Supplier<Object> command, String salt, Map<String, String> files) {

        CommandLine commandLine() {
            return new CommandLine(command.get());
        }
    }

    static final List<Cli> CLIS = List.of(
            new Cli(
                    "brine-master",
                    MasterMain::new,
                    "salt-master",
                    Map.of(
                            "/etc/brine/master.yaml", "the configuration (see conf/master.yaml)",
                            "/etc/brine/pki/master", "the default pki dir: the master's key pair and the minion keys",
                            "/var/cache/brine/master", "the default cachedir: the job cache and audit.log")),
            new Cli(
                    "brine-minion",
                    MinionMain::new,
                    "salt-minion",
                    Map.of(
                            "/etc/brine/minion.yaml", "the configuration (see conf/minion.yaml)",
                            "/etc/brine/pki/minion",
                                    "the default pki dir: the minion's key pair and the pinned master key",
                            "/var/cache/brine/minion/status.json", "the minion's state, for monitoring")),
            new Cli(
                    "brine-key",
                    BrineKey::new,
                    "salt-key",
                    Map.of(
                            "/etc/brine/master.yaml", "read for pki_dir and cachedir (and whole by policy check)",
                            "/etc/brine/pki/master", "the default pki dir",
                            "/var/cache/brine/master/audit.log", "the audit log")),
            new Cli(
                    "brine",
                    BrineCli::new,
                    "salt",
                    Map.of(
                            "/etc/brine/master.yaml", "read for the master's address, pki_dir and cachedir",
                            "/var/cache/brine/master/jobs", "the job cache that brine jobs reads")));

    private GenerateDocs() {}

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : "target/docs");
        String version = args.length > 1 ? args[1] : "";
        Files.createDirectories(dir);
        for (Cli cli : CLIS) {
            CommandLine commandLine = cli.commandLine();
            Files.writeString(
                    dir.resolve(cli.name() + ".1"),
                    manPage(cli, commandLine.getCommandSpec(), version),
                    StandardCharsets.UTF_8);
            Files.writeString(
                    dir.resolve(cli.name() + ".bash"), completion(cli.name(), commandLine), StandardCharsets.UTF_8);
        }
    }

    /** picocli's completion, and for brine-key the key ids and states of the pki dir (brine-key-ids.bash). */
    static String completion(String name, CommandLine commandLine) throws IOException {
        String script = AutoComplete.bash(name, commandLine);
        if (!name.equals("brine-key")) {
            return script;
        }
        try (InputStream ids = GenerateDocs.class.getResourceAsStream("brine-key-ids.bash")) {
            return script + new String(ids.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static String manPage(Cli cli, CommandSpec spec, String version) {
        StringBuilder man = new StringBuilder();
        man.append(".\\\" Generated from ")
                .append(spec.userObject().getClass().getName())
                .append(" at build time; do not edit.\n");
        man.append(".TH ")
                .append(cli.name().toUpperCase(Locale.ROOT))
                .append(" 1 \"\" \"brine ")
                .append(escape(version))
                .append("\" \"brine manual\"\n");
        man.append(".SH NAME\n")
                .append(escape(cli.name()))
                .append(" \\- ")
                .append(escape(summary(spec)))
                .append('\n');
        man.append(".SH SYNOPSIS\n");
        String[] synopsis = spec.usageMessage().customSynopsis();
        if (synopsis.length > 0) {
            man.append(".nf\n");
            for (String line : synopsis) {
                man.append(escape(line)).append('\n');
            }
            man.append(".fi\n");
        } else {
            man.append(".B ").append(escape(cli.name())).append("\n[\\fIOPTIONS\\fR]");
            if (!spec.subcommands().isEmpty()) {
                man.append(" [\\fICOMMAND\\fR]");
            }
            man.append('\n');
        }
        man.append(".SH DESCRIPTION\n");
        for (String paragraph : spec.usageMessage().description()) {
            man.append(paragraph.isEmpty() ? ".PP\n" : escape(paragraph) + "\n.br\n");
        }
        man.append(".SH OPTIONS\n");
        options(man, spec);
        if (spec.subcommands().values().stream().anyMatch(sub -> !isHelp(sub.getCommandSpec()))) {
            man.append(".SH COMMANDS\n");
            commands(man, cli.name(), spec, "");
        }
        if (!spec.usageMessage().exitCodeList().isEmpty()) {
            man.append(".SH EXIT STATUS\n");
            spec.usageMessage()
                    .exitCodeList()
                    .forEach((code, meaning) -> man.append(".TP\n")
                            .append(escape(code.strip()))
                            .append('\n')
                            .append(escape(meaning))
                            .append('\n'));
        }
        List<String> examples = List.of(spec.usageMessage().footer()).stream()
                .filter(line -> !line.isBlank() && !line.strip().equals("Examples:"))
                .toList();
        if (!examples.isEmpty()) {
            man.append(".SH EXAMPLES\n.nf\n");
            for (String line : examples) {
                man.append(escape(line.startsWith("  ") ? line.substring(2) : line))
                        .append('\n');
            }
            man.append(".fi\n");
        }
        man.append(".SH FILES\n");
        cli.files().entrySet().stream()
                .sorted(Map.Entry.comparingByKey())
                .forEach(file -> man.append(".TP\n")
                        .append(escape(file.getKey()))
                        .append('\n')
                        .append(escape(file.getValue()))
                        .append('\n'));
        man.append(".SH SEE ALSO\n")
                .append(CLIS.stream()
                        .filter(other -> other != cli)
                        .map(other -> "\\fB" + escape(other.name()) + "\\fR(1)")
                        .collect(Collectors.joining(", ")))
                .append(", ")
                .append(escape(cli.salt()))
                .append("(1)\n");
        return man.toString();
    }

    private static String summary(CommandSpec spec) {
        String[] header = spec.usageMessage().header();
        String text = header.length > 0 ? header[0] : spec.usageMessage().description()[0];
        text = text.replaceAll("\\.$", "");
        return text.isEmpty() ? text : text.substring(0, 1).toLowerCase(Locale.ROOT) + text.substring(1);
    }

    private static boolean isHelp(CommandSpec spec) {
        return spec.userObject() instanceof CommandLine.HelpCommand;
    }

    /** Each subcommand (depth first): its synopsis, description and options. */
    private static void commands(StringBuilder man, String program, CommandSpec spec, String prefix) {
        for (Map.Entry<String, CommandLine> entry : spec.subcommands().entrySet()) {
            CommandSpec sub = entry.getValue().getCommandSpec();
            if (!sub.name().equals(entry.getKey()) || isHelp(sub)) {
                continue; // an alias, or 'help'
            }
            String name = prefix + sub.name();
            if (sub.subcommands().isEmpty()) {
                man.append(".SS ").append(escape(name)).append('\n');
                man.append(".B ").append(escape(program)).append("\n").append(escape(name));
                for (var parameter : sub.positionalParameters()) {
                    man.append(" \\fI").append(escape(parameter.paramLabel())).append("\\fR");
                }
                man.append(" [\\fIOPTIONS\\fR]\n.PP\n");
                for (String line : sub.usageMessage().header()) {
                    man.append(escape(line)).append('\n');
                }
                for (String paragraph : sub.usageMessage().description()) {
                    man.append(".PP\n").append(escape(paragraph)).append('\n');
                }
                options(man, sub);
            }
            commands(man, program, sub, name + " ");
        }
    }

    private static void options(StringBuilder man, CommandSpec spec) {
        for (OptionSpec option : spec.options()) {
            man.append(".TP\n");
            List<String> names = List.of(option.names());
            for (int i = 0; i < names.size(); i++) {
                man.append(i == 0 ? "" : ", ")
                        .append("\\fB")
                        .append(escape(names.get(i)))
                        .append("\\fR");
            }
            if (option.arity().max() > 0) {
                man.append(" \\fI").append(escape(option.paramLabel())).append("\\fR");
            }
            man.append('\n');
            for (String line : option.description()) {
                man.append(escape(line.replace("${DEFAULT-VALUE}", String.valueOf(option.defaultValue()))
                                .replace("${COMPLETION-CANDIDATES}", candidates(option))))
                        .append('\n');
            }
        }
    }

    private static String candidates(OptionSpec option) {
        Iterable<String> candidates = option.completionCandidates();
        return candidates == null ? "" : String.join(", ", candidates);
    }

    /** Escapes troff: backslashes, hyphens, and a leading '.' or '\'' (which would be a request). */
    static String escape(String text) {
        String escaped = text.replace("\\", "\\e").replace("-", "\\-");
        return escaped.startsWith(".") || escaped.startsWith("'") ? "\\&" + escaped : escaped;
    }
}
