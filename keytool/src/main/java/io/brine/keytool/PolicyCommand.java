package io.brine.keytool;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code brine-key policy}: the acceptance policies of master.yaml; for now, a dry run. */
@Command(
        name = "policy",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        header = "Ask the acceptance policies of master.yaml about a key, without changing anything.",
        subcommands = PolicyCheck.class)
final class PolicyCommand implements Runnable {

    @ParentCommand
    BrineKey root;

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "choose a command: check");
    }
}
