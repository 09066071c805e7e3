package io.brine.keytool;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code brine-key cluster}: a cluster of masters (cluster: in master.yaml); for now, importing a pki dir. */
@Command(
        name = "cluster",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        header = "Work on the cluster of masters that master.yaml's cluster: section names.",
        description = {
            "With cluster: in master.yaml every other brine-key command (-L, -a, -r, -d, -f, --rotate) works on the"
                    + " cluster's keys in ZooKeeper, from any master host, and every master sees the change within"
                    + " a second.",
        },
        subcommands = ClusterImport.class)
final class ClusterCommand implements Runnable {

    @ParentCommand
    BrineKey root;

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "choose a command: import");
    }
}
