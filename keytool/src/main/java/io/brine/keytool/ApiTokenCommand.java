package io.brine.keytool;

import io.brine.daemon.config.ValueCheck;
import io.brine.protocol.MinionIds;
import io.brine.protocol.targeting.Glob;
import io.brine.store.api.ApiTokens;
import io.brine.store.audit.AuditEvent;
import io.brine.store.audit.AuditLog;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code brine-key api-token}: the HTTP API's bearer tokens (create, revoke, list), stored hashed in
 * {@code pki_dir/api_tokens.json} ({@link ApiTokens}); each change is audited with the admin's name.
 */
@Command(
        name = "api-token",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        header = "Create, revoke and list the HTTP API's bearer tokens.",
        description = {
            "Tokens are stored hashed in pki_dir/" + ApiTokens.FILE_NAME + "; the token itself is printed"
                    + " once, by create. A running master sees a change at its next request."
        },
        subcommands = {ApiTokenCommand.Create.class, ApiTokenCommand.Revoke.class, ApiTokenCommand.ListTokens.class})
final class ApiTokenCommand implements Callable<Integer> {

    @ParentCommand
    BrineKey root;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        throw UserError.usage("api-token: name a command: create, revoke or list");
    }

    private static final Pattern DURATION = Pattern.compile("([1-9][0-9]{0,6})([smhdw]?)");
    /** The longest --expires: a year. */
    static final Duration MAX_EXPIRY = Duration.ofDays(366);

    /** {@code 90d}, {@code 12h}, {@code 30m}, {@code 3600} (seconds), {@code 2w}. */
    static Duration duration(String text) {
        Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw UserError.usage("--expires " + MinionIds.printable(text) + ": expected a duration such as 90d, 12h,"
                    + " 30m or 3600 (seconds), up to 366d");
        }
        long n = Long.parseLong(m.group(1));
        Duration d = switch (m.group(2)) {
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            case "d" -> Duration.ofDays(n);
            case "w" -> Duration.ofDays(7 * n);
            default -> Duration.ofSeconds(n);
        };
        if (d.compareTo(MAX_EXPIRY) > 0) {
            throw UserError.usage("--expires " + text + ": at most 366d; make a new token when it expires");
        }
        return d;
    }

    /** Comma-separated globs; on minion ids ({@code ids}: checked as strictly as a target) or on functions. */
    static List<String> globs(String option, List<String> values, boolean ids) {
        List<String> globs = values.stream()
                .flatMap(v -> Arrays.stream(v.split(",")))
                .map(String::trim)
                .filter(g -> !g.isEmpty())
                .toList();
        for (String glob : globs) {
            ValueCheck.glob().problem(glob).ifPresent(problem -> {
                throw UserError.usage(option + " " + MinionIds.printable(glob) + ": " + problem);
            });
            if (ids) {
                try {
                    Glob.compileIds(glob);
                } catch (IllegalArgumentException e) {
                    throw UserError.usage(option + ": " + e.getMessage());
                }
            }
        }
        return globs;
    }

    static String name(String name) {
        MinionIds.problem(name).ifPresent(problem -> {
            throw UserError.usage("NAME " + MinionIds.printable(name) + ": " + problem);
        });
        return name;
    }

    static UserError cannotWrite(KeytoolConfig config, IOException e) {
        return new UserError(
                UserError.REFUSED, "cannot write " + ApiTokens.file(config.pkiDir()) + ": " + BrineKey.describe(e));
    }

    void audit(KeytoolConfig config, String event, String name, String reason) {
        try (AuditLog audit = root.openAudit(config)) {
            audit.record(AuditEvent.builder(event, root.actor())
                    .id(name)
                    .reason(reason)
                    .build());
        }
    }

    @Command(
            name = "create",
            mixinStandardHelpOptions = true,
            usageHelpAutoWidth = true,
            header = "Make a token and print it, once.",
            description = {
                "The token may publish the functions --functions allows to the minions --acl allows, and"
                        + " see their events and jobs; --key-admin lets it accept, reject and delete keys too. Without"
                        + " --acl and --key-admin it may only read keys and minions."
            })
    static final class Create implements Callable<Integer> {
        @ParentCommand
        ApiTokenCommand parent;

        @Parameters(
                index = "0",
                paramLabel = "NAME",
                description =
                        "The token's name (an id: [a-z0-9._-]); audit" + " lines of its changes name it as api:NAME.")
        String name;

        @Option(
                names = "--acl",
                paramLabel = "GLOBS",
                description = "Minion ids it may target (comma-separated" + " globs, repeatable).")
        List<String> acl = List.of();

        @Option(
                names = "--functions",
                paramLabel = "GLOBS",
                description = "Functions it may publish"
                        + " (comma-separated globs, repeatable; default: none, or test.* with --acl).")
        List<String> functions;

        @Option(names = "--key-admin", description = "It may accept, reject and delete keys.")
        boolean keyAdmin;

        @Option(
                names = "--expires",
                required = true,
                paramLabel = "DURATION",
                description = "How long it works: 90d, 12h, 30m, 3600 (seconds); at most 366d.")
        String expires;

        @Override
        public Integer call() {
            ApiTokenCommand.name(name);
            Duration lifetime = duration(expires);
            List<String> targets = globs("--acl", acl, true);
            List<String> funs = functions != null
                    ? globs("--functions", functions, false)
                    : targets.isEmpty() ? List.of() : List.of("test.*");
            KeytoolConfig config = parent.root.config();
            ApiTokens.Created created;
            try {
                created = ApiTokens.create(config.pkiDir(), name, targets, funs, keyAdmin, lifetime, Clock.systemUTC());
            } catch (IllegalArgumentException e) {
                throw new UserError(UserError.REFUSED, name + ": " + e.getMessage());
            } catch (IOException e) {
                throw cannotWrite(config, e);
            }
            parent.audit(
                    config,
                    "api-token-created",
                    name,
                    "acl " + targets + ", functions " + funs
                            + (keyAdmin ? ", key admin" : "") + ", expires "
                            + Instant.ofEpochMilli(created.entry().expiresMs()));
            PrintWriter out = parent.spec.commandLine().getOut();
            out.println(created.token());
            out.flush();
            PrintWriter err = parent.spec.commandLine().getErr();
            err.println("brine-key: token " + name + " created, expires "
                    + Instant.ofEpochMilli(created.entry().expiresMs()) + "; it is shown only now."
                    + " Send it as: Authorization: Bearer TOKEN");
            err.flush();
            return 0;
        }
    }

    @Command(
            name = "revoke",
            mixinStandardHelpOptions = true,
            usageHelpAutoWidth = true,
            header = "Remove a token: the master refuses it from its next request.")
    static final class Revoke implements Callable<Integer> {
        @ParentCommand
        ApiTokenCommand parent;

        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            ApiTokenCommand.name(name);
            KeytoolConfig config = parent.root.config();
            boolean removed;
            try {
                removed = ApiTokens.revoke(config.pkiDir(), name);
            } catch (IOException e) {
                throw cannotWrite(config, e);
            }
            if (!removed) {
                throw new UserError(UserError.REFUSED, "no token named " + name + "; nothing changed");
            }
            parent.audit(config, "api-token-revoked", name, "revoked");
            parent.spec.commandLine().getOut().println("Token " + name + " revoked.");
            parent.spec.commandLine().getOut().flush();
            return 0;
        }
    }

    @Command(
            name = "list",
            mixinStandardHelpOptions = true,
            usageHelpAutoWidth = true,
            header = "List the tokens (names, ACLs, expiry; never the tokens).")
    static final class ListTokens implements Callable<Integer> {
        @ParentCommand
        ApiTokenCommand parent;

        @Override
        public Integer call() {
            Path file = ApiTokens.file(parent.root.config().pkiDir());
            List<ApiTokens.Entry> entries;
            try {
                entries = ApiTokens.read(file);
            } catch (IOException e) {
                throw new UserError(UserError.REFUSED, "cannot read " + file + ": " + BrineKey.describe(e));
            }
            PrintWriter out = parent.spec.commandLine().getOut();
            long now = System.currentTimeMillis();
            for (ApiTokens.Entry e : entries) {
                out.println(e.name() + "  acl=" + String.join(",", e.targets()) + "  functions="
                        + String.join(",", e.functions()) + (e.keyAdmin() ? "  key-admin" : "") + "  expires="
                        + (e.expiresMs() == 0 ? "never" : Instant.ofEpochMilli(e.expiresMs()))
                        + (e.expired(now) ? "  (expired)" : ""));
            }
            out.flush();
            return 0;
        }
    }
}
