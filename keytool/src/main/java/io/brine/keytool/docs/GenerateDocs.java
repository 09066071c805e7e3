package io.brine.keytool.docs;

import io.brine.keytool.BrineKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Run at build time: writes {@code brine-key.1} (a man page, troff) and {@code brine-key.bash} (bash/zsh
 * completion) from the command's own annotations, so they never drift from {@code --help}.
 */
public final class GenerateDocs {

    private GenerateDocs() {
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : "target/docs");
        String version = args.length > 1 ? args[1] : "";
        Files.createDirectories(dir);
        CommandLine commandLine = new CommandLine(new BrineKey());
        Files.writeString(dir.resolve("brine-key.1"), manPage(commandLine.getCommandSpec(), version),
                StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("brine-key.bash"), AutoComplete.bash("brine-key", commandLine),
                StandardCharsets.UTF_8);
    }

    static String manPage(CommandSpec spec, String version) {
        StringBuilder man = new StringBuilder();
        man.append(".\\\" Generated from io.brine.keytool.BrineKey at build time; do not edit.\n");
        man.append(".TH BRINE-KEY 1 \"\" \"brine ").append(escape(version)).append("\" \"brine manual\"\n");
        man.append(".SH NAME\nbrine-key \\- ").append(escape(lowerFirst(spec.usageMessage().header()[0])))
                .append('\n');
        man.append(".SH SYNOPSIS\n.B brine-key\n[\\fIOPTIONS\\fR]\n");
        man.append(".SH DESCRIPTION\n");
        for (String paragraph : spec.usageMessage().description()) {
            man.append(paragraph.isEmpty() ? ".PP\n" : escape(paragraph) + "\n");
        }
        man.append(".SH OPTIONS\n");
        for (OptionSpec option : spec.options()) {
            man.append(".TP\n");
            List<String> names = List.of(option.names());
            for (int i = 0; i < names.size(); i++) {
                man.append(i == 0 ? "" : ", ").append("\\fB").append(escape(names.get(i))).append("\\fR");
            }
            if (option.arity().max() > 0) {
                man.append(" \\fI").append(escape(option.paramLabel())).append("\\fR");
            }
            man.append('\n');
            for (String line : option.description()) {
                man.append(escape(line.replace("${DEFAULT-VALUE}", String.valueOf(option.defaultValue()))))
                        .append('\n');
            }
        }
        if (!spec.subcommands().isEmpty()) {
            man.append(".SH COMMANDS\n");
            commands(man, spec, "");
        }
        man.append(".SH EXIT STATUS\n");
        spec.usageMessage().exitCodeList().forEach((code, meaning) -> man.append(".TP\n").append(escape(code.strip()))
                .append('\n').append(escape(meaning)).append('\n'));
        man.append(".SH EXAMPLES\n.nf\n");
        for (String line : spec.usageMessage().footer()) {
            man.append(escape(line.startsWith("  ") ? line.substring(2) : line)).append('\n');
        }
        man.append(".fi\n.SH FILES\n.TP\n/etc/brine/master.yaml\nread for \\fBpki_dir\\fR and \\fBcachedir\\fR"
                + " (and whole by \\fBpolicy check\\fR)\n")
                .append(".TP\n/etc/brine/pki/master\nthe default pki dir\n.TP\n/var/cache/brine/master/audit.log\n")
                .append("the audit log\n.SH SEE ALSO\nsalt-key(1)\n");
        return man.toString();
    }

    /** Each subcommand (depth first): its synopsis, description and options. */
    private static void commands(StringBuilder man, CommandSpec spec, String prefix) {
        for (Map.Entry<String, CommandLine> entry : spec.subcommands().entrySet()) {
            CommandSpec sub = entry.getValue().getCommandSpec();
            if (!sub.name().equals(entry.getKey())) {
                continue; // an alias
            }
            String name = prefix + sub.name();
            if (sub.subcommands().isEmpty()) {
                man.append(".SS ").append(escape(name)).append('\n');
                man.append(".B brine-key\n[\\fIOPTIONS\\fR] ").append(escape(name));
                for (var parameter : sub.positionalParameters()) {
                    man.append(" \\fI").append(escape(parameter.paramLabel())).append("\\fR");
                }
                man.append(" [\\fICOMMAND OPTIONS\\fR]\n.PP\n");
                for (String line : sub.usageMessage().header()) {
                    man.append(escape(line)).append('\n');
                }
                for (String paragraph : sub.usageMessage().description()) {
                    man.append(".PP\n").append(escape(paragraph)).append('\n');
                }
                options(man, sub);
            }
            commands(man, sub, name + " ");
        }
    }

    private static void options(StringBuilder man, CommandSpec spec) {
        for (OptionSpec option : spec.options()) {
            if (option.usageHelp() || option.versionHelp()) {
                continue;
            }
            man.append(".TP\n");
            List<String> names = List.of(option.names());
            for (int i = 0; i < names.size(); i++) {
                man.append(i == 0 ? "" : ", ").append("\\fB").append(escape(names.get(i))).append("\\fR");
            }
            if (option.arity().max() > 0) {
                man.append(" \\fI").append(escape(option.paramLabel())).append("\\fR");
            }
            man.append('\n');
            for (String line : option.description()) {
                man.append(escape(line.replace("${DEFAULT-VALUE}", String.valueOf(option.defaultValue()))))
                        .append('\n');
            }
        }
    }

    private static String escape(String text) {
        String escaped = text.replace("\\", "\\e").replace("-", "\\-");
        // A line starting with '.' or '\'' would be a troff request.
        return escaped.startsWith(".") || escaped.startsWith("'") ? "\\&" + escaped : escaped;
    }

    private static String lowerFirst(String text) {
        return text.isEmpty() ? text : text.substring(0, 1).toLowerCase(Locale.ROOT) + text.substring(1)
                .replaceAll("\\.$", "");
    }
}
