package io.brine.client.cli;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.daemon.BrineVersion;
import io.brine.daemon.config.ConfigException;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.protocol.BatchSize;
import io.brine.protocol.RootPublisher;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.targeting.Nodegroups;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * {@code brine TARGET FUNCTION [ARG...] [key=value...]}: Salt's {@code salt} command. Publishes a job to the
 * targeted minions and prints their returns; {@code brine jobs list|show} reads the job cache.
 */
@Command(
        name = "brine",
        mixinStandardHelpOptions = true,
        versionProvider = BrineVersion.class,
        sortOptions = false,
        usageHelpAutoWidth = true,
        customSynopsis = {
            "brine [OPTIONS] TARGET FUNCTION [ARG...]",
            "brine jobs list|show [OPTIONS]",
            "brine manage up|down|status [TARGET] [OPTIONS]",
            "brine events [--tag GLOB] [--out json]"
        },
        subcommands = {Jobs.class, Manage.class, EventsCommand.class, CommandLine.HelpCommand.class},
        description = {
            "Runs FUNCTION on the minions that TARGET selects and prints their returns.",
            "",
            "TARGET is a glob on minion ids unless a target option says otherwise. Arguments of the form key=value "
                    + "are keyword arguments; true/false and integers are typed, everything else is a string.",
            "",
            "Exit codes: 0 every targeted minion returned success; 1 some did not return, failed, or nothing "
                    + "matched; 2 usage or configuration error, or the master refused the job (it runs nowhere); 3 "
                    + "no answer to the publish: the job may or may not have been published."
        },
        footer = {
            "",
            "Examples:",
            "  brine '*' test.ping",
            "  brine -L web1,web2 test.echo hello",
            "  brine -C 'G@os:debian and web*' cmd.run 'uname -a'",
            "  brine -N web test.ping",
            "  brine --async '*' test.sleep 30",
            "  brine jobs show 20261122031109123456",
            "  brine manage down"
        })
public final class BrineCli implements Callable<Integer> {

    private static final Pattern KWARG = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)=(.*)", Pattern.DOTALL);
    private static final Pattern INTEGER = Pattern.compile("-?[0-9]{1,18}");

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Mixin
    Connection connection;

    @ArgGroup(exclusive = true)
    TargetType targetType = new TargetType();

    static final class TargetType {
        @Option(
                names = {"-E", "--pcre"},
                description = "TARGET is a regular expression on ids (anchored at the " + "start, as in Salt).")
        boolean pcre;

        @Option(
                names = {"-L", "--list"},
                description = "TARGET is a comma-separated list of ids.")
        boolean list;

        @Option(
                names = {"-G", "--grain"},
                description = "TARGET is grain:glob, e.g. os:debian.")
        boolean grain;

        @Option(
                names = {"-P", "--grain-pcre"},
                description = "TARGET is grain:regex, e.g. 'os:(debian|ubuntu)$' " + "(compound P@).")
        boolean grainPcre;

        @Option(
                names = {"-S", "--ipcidr"},
                description = "TARGET is a subnet or address on the ipv4 grain, e.g. " + "10.0.0.0/8 (compound S@).")
        boolean ipcidr;

        @Option(
                names = {"-C", "--compound"},
                description = "TARGET is a compound expression, e.g. "
                        + "'G@os:debian and web* or L@db1,db2'; also P@ (grain regex), S@ (subnet) and N@ (nodegroup).")
        boolean compound;

        @Option(
                names = {"-N", "--nodegroup"},
                description = "TARGET is a nodegroup of master.yaml (compound N@).")
        boolean nodegroup;

        String type() {
            return pcre
                    ? "pcre"
                    : list
                            ? "list"
                            : grain
                                    ? "grain"
                                    : nodegroup
                                            ? Nodegroups.TYPE
                                            : compound || grainPcre || ipcidr ? "compound" : "glob";
        }

        /** The expression sent: -P and -S are compound terms on the wire. */
        String expression(String target) {
            return grainPcre ? "P@" + target : ipcidr ? "S@" + target : target;
        }
    }

    @Option(
            names = {"-t", "--timeout"},
            paramLabel = "SECONDS",
            defaultValue = "5",
            description = "Seconds to wait for returns (default: ${DEFAULT-VALUE}).")
    int timeout;

    @Option(
            names = "--job-timeout",
            paramLabel = "SECONDS",
            defaultValue = "0",
            description = "How long the function may run on each minion (default: the minion's job_timeout).")
    int jobTimeout;

    @Option(
            names = "--async",
            description = "Print the jid and return at once; see the returns with " + "'brine jobs show JID'.")
    boolean async;

    @Option(
            names = "--out",
            paramLabel = "FORMAT",
            defaultValue = "text",
            scope = ScopeType.INHERIT,
            converter = Outputs.FormatConverter.class,
            description = "text (Salt's nested), txt (Salt's: one 'id: line' per line), json or yaml (default:"
                    + " ${DEFAULT-VALUE}). json: one object mapping each minion that returned to its return value; for"
                    + " jobs, the job cache's records.")
    Outputs.Format out;

    @Option(
            names = {"-b", "--batch"},
            paramLabel = "N|N%",
            converter = Batch.SizeConverter.class,
            description = "Salt's batch mode: run on N minions (or N %% of them) at a time, among those that answer "
                    + "test.ping; each batch is a job of its own.")
    BatchSize batch;

    @Option(names = "--show-jid", description = "Print the job's jid first (text: on stdout; json, yaml: on stderr).")
    boolean showJid;

    @Option(
            names = {"-v", "--verbose"},
            description = "Say which job runs (on stderr), as Salt's -v.")
    boolean verbose;

    // Optional to picocli and checked in call(): picocli checks a parent's required parameters before it runs a
    // subcommand, so required ones here made 'brine jobs list' fail with "Missing required parameters".
    @Parameters(index = "0", arity = "0..1", paramLabel = "TARGET", description = "Which minions.")
    String target;

    @Parameters(
            index = "1",
            arity = "0..1",
            paramLabel = "FUNCTION",
            description = "What to run, e.g. test.ping, cmd.run.")
    String function;

    @Parameters(index = "2..*", paramLabel = "ARG", description = "Arguments; key=value for keyword arguments.")
    List<String> arguments = new ArrayList<>();

    public static void main(String[] args) {
        if (System.getProperty("logback.configurationFile") == null) {
            // The master's logback.xml was on brine's class path until the client module; this is the same.
            System.setProperty("logback.configurationFile", "io/brine/client/cli/logback-brine.xml");
        }
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the CLI with these streams; returns the exit code. */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cli = new CommandLine(new BrineCli()).setCaseInsensitiveEnumValuesAllowed(true);
        cli.setOut(out);
        cli.setErr(err);
        cli.setParameterExceptionHandler((e, a) -> {
            err.println("brine: " + e.getMessage());
            err.println("Try 'brine --help' for more information.");
            return 2;
        });
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            err.println("brine: " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
            return 2;
        });
        int exit = cli.execute(args);
        // main() exits right after: what was print()ed (auto-flush is for println only) must be out by then.
        out.flush();
        err.flush();
        return exit;
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (target == null || function == null) {
            err.println("brine: missing " + (target == null ? "TARGET and FUNCTION" : "FUNCTION"));
            err.println("Try 'brine --help' for more information.");
            return 2;
        }
        String type = targetType.type();
        String expression = targetType.expression(target);
        // The syntax only: nodegroups are the master's, which expands them and names an unknown one.
        Optional<String> badTarget = Nodegroups.syntaxProblem(type, expression);
        if (badTarget.isPresent()) {
            err.println("brine: bad target: " + badTarget.get());
            return 2;
        }
        List<Object> args = new ArrayList<>();
        Map<String, Object> kwargs = new LinkedHashMap<>();
        for (String argument : arguments) {
            var kwarg = KWARG.matcher(argument);
            if (kwarg.matches()) {
                kwargs.put(kwarg.group(1), typed(kwarg.group(2)));
            } else {
                args.add(typed(argument));
            }
        }
        try (BrineClient client = connection.connect(err)) {
            if (client == null) {
                return 2;
            }
            BrineClient.Job job = new BrineClient.Job(type, expression, function, args, kwargs, jobTimeout);
            BrineClient.Published published;
            try {
                if (batch != null) {
                    return Batch.run(client, job, batch, Duration.ofSeconds(timeout), this.out, out, err);
                }
                published = client.publish(job);
            } catch (ClientException.Refused e) {
                err.println("brine: the master refused the job: " + e.getMessage());
                return 2;
            } catch (ClientException e) {
                err.println("brine: " + e.getMessage());
                return UNKNOWN_OUTCOME;
            }
            // Listed ids the master did not target are not accepted minions: say so, and count them as missing.
            TreeSet<String> notAccepted = new TreeSet<>();
            if (targetType.list) {
                notAccepted.addAll(List.of(target.split(",")));
                notAccepted.removeIf(String::isEmpty);
                notAccepted.removeAll(published.minions());
                if (!notAccepted.isEmpty()) {
                    err.println("not accepted minions: " + String.join(", ", notAccepted));
                }
            }
            if (published.minions().isEmpty()) {
                err.println("No minions matched the target. No command was sent (jid " + published.jid() + ").");
                return 1;
            }
            if (verbose) {
                err.println("Executing job with jid " + published.jid());
                err.println("-------------------------------------------");
            }
            if (showJid && !async) {
                (this.out.streams() ? out : err).println("jid: " + published.jid());
            }
            if (async) {
                out.println(
                        this.out.streams()
                                ? published.jid()
                                : Outputs.structured(
                                                this.out,
                                                Map.of("jid", published.jid(), "minions", published.minions()))
                                        .strip());
                return 0;
            }
            Map<String, Object> values = new LinkedHashMap<>();
            Map<String, Map<String, Object>> returnedLate = new LinkedHashMap<>();
            // Minions the publication could not be queued for cannot return: do not wait the timeout for them.
            List<String> reached = new ArrayList<>(published.minions());
            reached.removeAll(published.unreachable());
            Map<String, SessionMessage.ReturnEvent> returns =
                    client.awaitReturns(published.jid(), reached, Duration.ofSeconds(timeout), event -> {
                        values.put(event.minionId(), event.returnValue());
                        if (this.out.streams()) {
                            out.print(Outputs.one(this.out, event.minionId(), event.returnValue()));
                            out.flush();
                        }
                    });
            TreeSet<String> missing = new TreeSet<>(published.minions());
            missing.removeAll(returns.keySet());
            Map<String, Object> status = missing.isEmpty() ? Map.of() : status(client, published.jid());
            // Returns that came after the wait, or through a master whose report was late, are shown too.
            for (Map.Entry<String, Map<String, Object>> late :
                    lateReturns(status, missing).entrySet()) {
                missing.remove(late.getKey());
                returnedLate.put(late.getKey(), late.getValue());
                values.put(late.getKey(), late.getValue().get("return"));
                if (this.out.streams()) {
                    out.print(
                            Outputs.one(this.out, late.getKey(), late.getValue().get("return")));
                }
            }
            if (!this.out.streams()) {
                out.println(Outputs.structured(this.out, values).strip());
            }
            long failed = returns.values().stream().filter(r -> !r.success()).count()
                    + returnedLate.values().stream()
                            .filter(r -> !Boolean.TRUE.equals(r.get("success")))
                            .count();
            StringBuilder summary = new StringBuilder("returned ")
                    .append(returns.size() + returnedLate.size())
                    .append(" of ")
                    .append(published.minions().size() + notAccepted.size())
                    .append(" targeted (jid ")
                    .append(published.jid())
                    .append(")");
            if (failed > 0) {
                summary.append("; ").append(failed).append(" failed");
            }
            err.println(summary);
            if (!missing.isEmpty()) {
                // The master's view after the wait (jobs show); without it, what the publish answer said.
                TreeSet<String> unreachable = new TreeSet<>(listed(status, "unreachable", published.unreachable()));
                TreeSet<String> unconfirmed = new TreeSet<>(listed(status, "not_confirmed", List.of()));
                unreachable.retainAll(missing);
                unconfirmed.retainAll(missing);
                unconfirmed.removeAll(unreachable);
                TreeSet<String> silent = new TreeSet<>(missing);
                silent.removeAll(unreachable);
                silent.removeAll(unconfirmed);
                if (!silent.isEmpty()) {
                    err.println("did not answer: " + String.join(", ", silent));
                }
                if (!unconfirmed.isEmpty()) {
                    err.println("not confirmed: " + String.join(", ", unconfirmed)
                            + " (their master has not said whether it delivered the job; 'brine jobs show "
                            + published.jid() + "' shows their returns if they come)");
                }
                if (!unreachable.isEmpty()) {
                    err.println("not connected: " + String.join(", ", unreachable));
                }
            }
            return missing.isEmpty() && notAccepted.isEmpty() && failed == 0 ? 0 : 1;
        } catch (ClientException e) {
            err.println("brine: " + e.getMessage());
            return 2;
        }
    }

    /** Exit code when the publish got no answer: the job may or may not have been published. */
    static final int UNKNOWN_OUTCOME = 3;

    /** The job as the master shows it now ({@code brine jobs show}); empty if it cannot say. */
    private static Map<String, Object> status(BrineClient client, String jid) {
        try {
            return client.job(jid);
        } catch (ClientException e) {
            return Map.of();
        }
    }

    /** The returns in {@code status} of minions in {@code missing}. */
    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> lateReturns(Map<String, Object> status, Set<String> missing) {
        Map<String, Map<String, Object>> late = new LinkedHashMap<>();
        if (status.get("returns") instanceof Map<?, ?> returns) {
            returns.forEach((id, ret) -> {
                if (missing.contains(id) && ret instanceof Map<?, ?> entry) {
                    late.put((String) id, (Map<String, Object>) entry);
                }
            });
        }
        return late;
    }

    @SuppressWarnings("unchecked")
    private static List<String> listed(Map<String, Object> status, String key, List<String> otherwise) {
        return status.get(key) instanceof List<?> list ? (List<String>) list : otherwise;
    }

    static Object typed(String value) {
        if (value.equals("true") || value.equals("false")) {
            return Boolean.parseBoolean(value);
        }
        if (INTEGER.matcher(value).matches()) {
            return Long.parseLong(value);
        }
        return value;
    }

    /** How to reach the master: by default as the local administrator, from master.yaml. */
    static final class Connection {
        @Option(
                names = {"-c", "--config-dir"},
                paramLabel = "DIR",
                scope = ScopeType.INHERIT,
                defaultValue = "/etc/brine",
                description = "Directory holding master.yaml (default: ${DEFAULT-VALUE}).")
        Path configDir;

        @Option(
                names = "--master",
                scope = ScopeType.INHERIT,
                paramLabel = "HOST",
                description = "A remote master; requires --name, --key and --master-pub.")
        String master;

        @Option(
                names = "--port",
                scope = ScopeType.INHERIT,
                paramLabel = "PORT",
                description = "The master's ret_port (or tcp_port), when " + "not master.yaml's.")
        Integer port;

        @Option(names = "--transport", scope = ScopeType.INHERIT, paramLabel = "KIND", description = "zeromq or tcp.")
        TransportKind transport;

        @Option(
                names = "--name",
                scope = ScopeType.INHERIT,
                paramLabel = "NAME",
                description = "Publisher name registered on the master.")
        String name;

        @Option(
                names = "--key",
                scope = ScopeType.INHERIT,
                paramLabel = "FILE",
                description = "The publisher's private key (PEM).")
        Path key;

        @Option(
                names = "--master-pub",
                scope = ScopeType.INHERIT,
                paramLabel = "FILE",
                description = "The master's public key (PEM).")
        Path masterPub;

        @Option(
                names = "--connect-timeout",
                scope = ScopeType.INHERIT,
                paramLabel = "SECONDS",
                defaultValue = "10",
                description = "How long to wait for the master's answers (default: ${DEFAULT-VALUE}; for a publish at"
                        + " least 15, longer than the master may take to decide).")
        int connectTimeout;

        /** Connects; prints why and returns null when the configuration is wrong. */
        BrineClient connect(PrintWriter err) throws ClientException {
            Duration wait = Duration.ofSeconds(connectTimeout);
            if (master == null) {
                MasterConfig config;
                try {
                    config = MasterConfig.load(configDir);
                } catch (ConfigException e) {
                    err.println(e.getMessage());
                    return null;
                }
                if (name == null && key == null) {
                    if (port == null && transport == null) {
                        return BrineClient.connectLocal(config, wait);
                    }
                    // The local publisher on another port or transport than master.yaml's (e.g. ports 0).
                    name = RootPublisher.NAME;
                    key = config.cachedir().resolve(RootPublisher.KEY_FILE);
                }
                master = BrineClient.localHost(config.interfaceAddress());
                transport = transport != null ? transport : BrineClient.localTransport(config);
                port = port != null ? port : transport == TransportKind.TCP ? config.tcpPort() : config.retPort();
                masterPub = masterPub != null ? masterPub : config.pkiDir().resolve("master.pub");
            }
            if (name == null || key == null || masterPub == null) {
                err.println("brine: a remote master needs --name, --key and --master-pub");
                return null;
            }
            KeyPair pair = BrineClient.readPrivate(key, "the publisher key");
            RSAPublicKey masterKey = BrineClient.readPublic(masterPub, "the master's public key");
            TransportKind kind = transport != null ? transport : TransportKind.ZEROMQ;
            int target = port != null ? port : kind == TransportKind.TCP ? 4507 : 4506;
            return BrineClient.connect(kind, master, target, name, pair, masterKey, wait);
        }
    }
}
