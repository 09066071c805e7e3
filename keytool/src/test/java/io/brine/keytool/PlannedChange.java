package io.brine.keytool;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;

/**
 * brine-key's accept, reject or delete with something done between its two steps, as {@link BrineKey#call} runs
 * them: the keys are selected, listed and confirmed ({@link ChangeKeys#plan}), then {@code between} runs (another
 * admin, a minion re-offering), then the changes are written ({@link ChangeKeys#apply}). No thread, no timing.
 */
final class PlannedChange {

    private PlannedChange() {}

    static BrineKeyTest.Result run(KeytoolConfig.Defaults defaults, Runnable between, String... args) {
        BrineKeyTest.FakeTerminal terminal = new BrineKeyTest.FakeTerminal();
        BrineKey command = new BrineKey(terminal, Map.of(), defaults);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        PrintWriter outWriter = new PrintWriter(out, true);
        PrintWriter errWriter = new PrintWriter(err, true);
        BrineKey.commandLine(command).setOut(outWriter).setErr(errWriter).parseArgs(args);
        Action action = Action.of(command);
        ChangeKeys.Change change = switch (action.kind()) {
            case ACCEPT -> ChangeKeys.Change.ACCEPT;
            case REJECT -> ChangeKeys.Change.REJECT;
            case DELETE -> ChangeKeys.Change.DELETE;
            default -> throw new IllegalArgumentException("not a change: " + action.option());
        };
        String bound = action.boundFingerprint(command.finger);
        KeytoolConfig config = command.config();
        ChangeKeys changes = new ChangeKeys(command, new Output(outWriter, errWriter, command.out, false), terminal);
        ChangeKeys.Plan plan = changes.plan(
                config.scan(),
                change,
                action.argument(),
                action.all() ? List.of() : Action.globs(action.argument()),
                action.all(),
                bound,
                config.reserved());
        between.run();
        int exit = plan.exit() != null ? plan.exit() : changes.apply(config, change, plan.keys(), bound);
        return new BrineKeyTest.Result(exit, out.toString(), err.toString());
    }
}
