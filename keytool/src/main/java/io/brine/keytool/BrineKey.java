package io.brine.keytool;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyPairFiles;
import io.brine.store.keys.KeyProblem;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.StoredKey;
import io.brine.protocol.InvalidIdException;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code brine-key}: the admin CLI over the key store, with salt-key's options. */
@Command(name = "brine-key", mixinStandardHelpOptions = true, versionProvider = BrineKey.Version.class,
        sortOptions = false, usageHelpAutoWidth = true,
        subcommands = {PolicyCommand.class, GrantCommand.class, TokenHashCommand.class},
        commandListHeading = "%nCommands (after the options above that they use, such as -c):%n",
        headerHeading = "", header = "Manage the minion keys of a brine master.",
        synopsisHeading = "%nUsage: ",
        descriptionHeading = "%nDescription:%n",
        description = {
            "Lists, accepts, rejects, deletes, prints and fingerprints the minion keys in the master's pki dir,"
                    + " with salt-key's options. A key is unaccepted (minions_pre/), accepted (minions/),"
                    + " rejected (minions_rejected/), or denied (minions_denied/: a different key offered under an"
                    + " id that already has one).",
            "",
            "GLOB is a shell-style glob on ids (*, ?, [a-z], [!a-z]); several may be given separated by commas."
                    + " Accept and reject ask for confirmation (default yes), delete too (default no), unless -y is"
                    + " given; without a terminal and without -y nothing changes. Without an action, all keys are"
                    + " listed. Every change is written to the audit log, cachedir/audit.log.",
        },
        optionListHeading = "%nOptions:%n",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:done; policy check: the key would be accepted",
            "1:nothing matched, or a key was refused (fingerprint mismatch, no confirmation, ...); policy check:"
                    + " the key would stay pending",
            "2:usage or configuration error",
            "3:policy check: the key would be rejected (or denied)",
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  brine-key -L                     list all keys",
            "  brine-key -f web1                print web1's fingerprint",
            "  brine-key -a web1 --finger FP    accept web1 if its key has fingerprint FP",
            "  brine-key -a 'web*,db1' -y       accept web1, web2, ... and db1 without asking",
            "  brine-key -d web1                delete web1's keys (asks first)",
            "  brine-key -L --out json          list all keys as JSON",
            "  brine-key --rotate               rotate the publish key now",
            "  brine-key --gen-keys web1 --gen-keys-dir DIR",
            "                                   write DIR/web1.pem and DIR/web1.pub",
            "  brine-key -c /etc/brine policy check web1.example.com --pub web1.pub --addr 10.0.0.5",
            "                                   which acceptance policy decides about this key, and why",
            "  brine-key grant --provisioner-key cloud.pem --id web1 --pub web1.pub --ttl 3600 --class role=web",
            "                                   a signed provisioning grant for web1's key, on stdout",
            "  brine-key token-hash --match 'web*' < token.txt",
            "                                   an autosign_tokens entry for master.yaml",
        })
public final class BrineKey implements Callable<Integer> {

    /** What the listings are called in text output, in salt-key's order. */
    private static final Map<KeyState, String> TEXT_HEADINGS = headings();
    /** Order of the groups in structured output. */
    private static final List<KeyState> STRUCTURED_ORDER = List.of(KeyState.ACCEPTED, KeyState.PENDING,
            KeyState.REJECTED, KeyState.DENIED);
    private static final Map<KeyState, String> COLOURS = Map.of(KeyState.ACCEPTED, "\u001b[0;32m",
            KeyState.DENIED, "\u001b[0;35m", KeyState.PENDING, "\u001b[0;31m", KeyState.REJECTED, "\u001b[0;34m");
    private static final String RESET = "\u001b[0m";

    enum Out { text, json, yaml }

    private enum Kind { LIST, ACCEPT, REJECT, DELETE, PRINT, FINGER, GEN_KEYS, ROTATE }

    private record Action(Kind kind, String option, String argument, Set<KeyState> states, boolean all) {
    }

    @Option(names = {"-L", "--list-all"}, description = "List all keys.")
    boolean listAll;

    @Option(names = {"-l", "--list"}, paramLabel = "STATE",
            description = "List the keys in one state: pre, un, unaccepted, acc, accepted, rej, rejected, den,"
                    + " denied, or all.")
    String list;

    @Option(names = {"-a", "--accept"}, paramLabel = "GLOB", description = "Accept the matching unaccepted keys.")
    String accept;

    @Option(names = {"-A", "--accept-all"}, description = "Accept all unaccepted keys.")
    boolean acceptAll;

    @Option(names = {"-r", "--reject"}, paramLabel = "GLOB", description = "Reject the matching unaccepted keys.")
    String reject;

    @Option(names = {"-R", "--reject-all"}, description = "Reject all unaccepted keys.")
    boolean rejectAll;

    @Option(names = {"-d", "--delete"}, paramLabel = "GLOB", description = "Delete the matching keys, in any state.")
    String delete;

    @Option(names = {"-D", "--delete-all"}, description = "Delete all keys.")
    boolean deleteAll;

    @Option(names = {"-p", "--print"}, paramLabel = "GLOB", description = "Print the matching public keys.")
    String print;

    @Option(names = {"-P", "--print-all"}, description = "Print all public keys.")
    boolean printAll;

    @Option(names = {"-f", "--finger"}, paramLabel = "GLOB|FP",
            description = "Print the fingerprints of the matching keys. With -a, -r or -d and a single id: act only"
                    + " if that id's key has fingerprint FP.")
    String finger;

    @Option(names = {"-F", "--finger-all"}, description = "Print the fingerprints of all keys and of master.pub.")
    boolean fingerAll;

    @Option(names = "--include-rejected", description = "Accept matching rejected keys too.")
    boolean includeRejected;

    @Option(names = "--include-accepted", description = "Reject matching accepted keys too.")
    boolean includeAccepted;

    @Option(names = "--include-denied",
            description = "Accept or reject matching denied keys too (only for ids that hold no other key).")
    boolean includeDenied;

    @Option(names = {"-y", "--yes"}, description = "Answer yes to every confirmation.")
    boolean yes;

    @Option(names = {"-q", "--quiet"}, description = "Print only requested data, warnings and errors.")
    boolean quiet;

    @Option(names = "--rotate",
            description = "Ask the master to rotate the publish key now, as it does when a key is removed: minions"
                    + " get the new key, and nothing published from then on can be read with an older one. A"
                    + " running master does it within a second.")
    boolean rotate;

    @Option(names = "--gen-keys", paramLabel = "NAME",
            description = "Generate a key pair: NAME.pem (private, 0400) and NAME.pub (public).")
    String genKeys;

    @Option(names = "--gen-keys-dir", paramLabel = "DIR", description = "Where --gen-keys writes (default: .).")
    Path genKeysDir;

    @Option(names = "--keysize", paramLabel = "BITS", defaultValue = "2048",
            description = "Key size for --gen-keys (default: ${DEFAULT-VALUE}; 2048 to 8192).")
    int keysize;

    @Option(names = "--out", paramLabel = "FORMAT", defaultValue = "text",
            description = "Output format: text, json or yaml (default: ${DEFAULT-VALUE}).")
    Out out;

    @Option(names = "--no-color", description = "No colour, even on a terminal (also: NO_COLOR=1).")
    boolean noColour;

    @Option(names = {"-c", "--config-dir"}, paramLabel = "DIR",
            description = "Directory of master.yaml, read for pki_dir and cachedir (default: /etc/brine).")
    Path configDir;

    @Option(names = "--pki-dir", paramLabel = "DIR",
            description = "The master's pki dir (default: pki_dir of master.yaml, else /etc/brine/pki/master).")
    Path pkiDir;

    @Option(names = "--cachedir", paramLabel = "DIR",
            description = "Where audit.log is written (default: audit_log of master.yaml, else audit.log in its"
                    + " cachedir, else in /var/cache/brine/master).")
    Path cachedir;

    @Spec
    CommandSpec spec;

    private final Terminal terminal;
    private final Map<String, String> environment;
    private final KeytoolConfig.Defaults defaults;
    private final InputStream stdin;

    /** The command as the launcher runs it. */
    public BrineKey() {
        this(Terminal.system(), System.getenv(), KeytoolConfig.Defaults.SYSTEM, System.in);
    }

    /** A command with an injected terminal, environment and defaults (tests). */
    BrineKey(Terminal terminal, Map<String, String> environment, KeytoolConfig.Defaults defaults) {
        this(terminal, environment, defaults, System.in);
    }

    /** A command with an injected terminal, environment, defaults and standard input (tests). */
    BrineKey(Terminal terminal, Map<String, String> environment, KeytoolConfig.Defaults defaults,
            InputStream stdin) {
        this.terminal = terminal;
        this.environment = Map.copyOf(environment);
        this.defaults = defaults;
        this.stdin = stdin;
    }

    /** The directory of master.yaml: {@code -c}, else the default (/etc/brine). */
    Path configDirOrDefault() {
        return configDir != null ? configDir : defaults.configDir();
    }

    InputStream stdin() {
        return stdin;
    }

    boolean quiet() {
        return quiet;
    }

    public static void main(String[] args) {
        if (System.getProperty("logback.configurationFile") == null) {
            // Our own name: the master's logback.xml may also be on the class path.
            System.setProperty("logback.configurationFile", "io/brine/keytool/logback-brine-key.xml");
        }
        CommandLine commandLine = commandLine(new BrineKey());
        System.exit(commandLine.execute(args));
    }

    /** The picocli command line with brine-key's error handling: user errors are one line and exit 1 or 2. */
    public static CommandLine commandLine(BrineKey command) {
        CommandLine commandLine = new CommandLine(command);
        commandLine.setCaseInsensitiveEnumValuesAllowed(true);
        commandLine.setParameterExceptionHandler((e, args) -> {
            PrintWriter err = e.getCommandLine().getErr();
            err.println("brine-key: " + e.getMessage());
            err.println("Try 'brine-key --help' for more information.");
            return UserError.USAGE;
        });
        commandLine.setExecutionExceptionHandler((e, cl, parseResult) -> {
            PrintWriter err = cl.getErr();
            if (e instanceof UserError user) {
                err.println("brine-key: " + user.getMessage());
                return user.exitCode();
            }
            if (e instanceof InvalidIdException) {
                err.println("brine-key: " + e.getMessage());
                return UserError.USAGE;
            }
            if (e instanceof UncheckedIOException io) {
                err.println("brine-key: " + describe(io.getCause()));
                return UserError.REFUSED;
            }
            err.println("brine-key: internal error (please report it): " + e);
            e.printStackTrace(err);
            return UserError.REFUSED;
        });
        return commandLine;
    }

    @Override
    public Integer call() {
        Action action = action();
        if (action.kind() == Kind.GEN_KEYS) {
            return generateKeys(action.argument());
        }
        if (action.kind() == Kind.ROTATE) {
            return requestRotation(KeytoolConfig.resolve(configDir, defaults, pkiDir, cachedir));
        }
        List<IdGlob> globs = action.all() ? List.of() : IdGlob.parseList(action.argument());
        String boundFingerprint = boundFingerprint(action);
        KeytoolConfig config = KeytoolConfig.resolve(configDir, defaults, pkiDir, cachedir);
        try (KeyStore store = openStore(config, null)) {
            KeyListing listing = store.list();
            warnAboutProblems(store, listing.problems());
            return switch (action.kind()) {
                case LIST -> list(listing, action.states());
                case PRINT, FINGER -> show(store, listing, action, globs);
                case ACCEPT, REJECT, DELETE -> change(config, listing, action, globs, boundFingerprint);
                case GEN_KEYS, ROTATE -> throw new IllegalStateException();
            };
        }
    }

    // ------------------------------------------------------------ choosing the action

    private Action action() {
        List<Action> actions = new ArrayList<>();
        Set<KeyState> all = EnumSet.allOf(KeyState.class);
        if (listAll) {
            actions.add(new Action(Kind.LIST, "-L", null, all, true));
        }
        if (list != null) {
            actions.add(new Action(Kind.LIST, "-l", list, listStates(list), true));
        }
        addIfSet(actions, accept, acceptAll, Kind.ACCEPT, "-a", "-A");
        addIfSet(actions, reject, rejectAll, Kind.REJECT, "-r", "-R");
        addIfSet(actions, delete, deleteAll, Kind.DELETE, "-d", "-D");
        addIfSet(actions, print, printAll, Kind.PRINT, "-p", "-P");
        boolean fingerBinds = finger != null && (accept != null || reject != null || delete != null);
        addIfSet(actions, fingerBinds ? null : finger, fingerAll, Kind.FINGER, "-f", "-F");
        if (genKeys != null) {
            actions.add(new Action(Kind.GEN_KEYS, "--gen-keys", genKeys, all, false));
        }
        if (rotate) {
            actions.add(new Action(Kind.ROTATE, "--rotate", null, all, true));
        }
        if (actions.size() > 1) {
            throw UserError.usage("choose one action; got " + String.join(" and ",
                    actions.stream().map(Action::option).toList()));
        }
        return actions.isEmpty() ? new Action(Kind.LIST, "-L", null, all, true) : actions.get(0);
    }

    private static void addIfSet(List<Action> actions, String glob, boolean all, Kind kind, String option,
            String allOption) {
        if (glob != null) {
            actions.add(new Action(kind, option, glob, EnumSet.allOf(KeyState.class), false));
        }
        if (all) {
            actions.add(new Action(kind, allOption, "*", EnumSet.allOf(KeyState.class), true));
        }
    }

    private static Set<KeyState> listStates(String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "pre", "un", "unaccepted" -> EnumSet.of(KeyState.PENDING);
            case "acc", "accepted" -> EnumSet.of(KeyState.ACCEPTED);
            case "rej", "rejected" -> EnumSet.of(KeyState.REJECTED);
            case "den", "denied" -> EnumSet.of(KeyState.DENIED);
            case "all" -> EnumSet.allOf(KeyState.class);
            default -> throw UserError.usage("-l " + MinionIds.printable(value) + ": expected one of pre, un,"
                    + " unaccepted, acc, accepted, rej, rejected, den, denied, all");
        };
    }

    /** The fingerprint {@code --finger} binds an accept, reject or delete to; null when not bound. */
    private String boundFingerprint(Action action) {
        boolean changes = action.kind() == Kind.ACCEPT || action.kind() == Kind.REJECT
                || action.kind() == Kind.DELETE;
        if (finger == null || !changes) {
            return null;
        }
        if (action.all() || action.argument().contains(",") || IdGlob.hasWildcard(action.argument())) {
            throw UserError.usage("--finger FP binds " + action.option() + " to one key: give a single id, not "
                    + (action.all() ? "all keys" : "a glob or list"));
        }
        String normalized = Fingerprints.normalize(finger);
        if (normalized == null) {
            throw UserError.usage("--finger " + MinionIds.printable(finger) + " is not a fingerprint (expected 32"
                    + " colon-separated hex bytes, as brine-key -f prints)");
        }
        return normalized;
    }

    // ------------------------------------------------------------ store and audit

    private KeyStore openStore(KeytoolConfig config, AuditLog audit) {
        requireLooksLikePkiDir(config.pkiDir());
        try {
            return FileKeyStore.open(KeyStoreOptions.builder(config.pkiDir()).auditLog(audit).masterKey(false)
                    .createPkiDir(false).pollInterval(Duration.ZERO).build());
        } catch (KeyStoreException e) {
            throw UserError.usage(e.getMessage());
        } catch (IOException e) {
            throw UserError.usage("cannot open the pki dir " + config.pkiDir() + ": " + describe(e));
        }
    }

    /**
     * The store creates missing state directories; brine-key lets it only in a directory that already is a pki dir,
     * so a mistyped {@code --pki-dir /} or {@code --pki-dir ~} stays untouched.
     */
    static void requireLooksLikePkiDir(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw UserError.usage("pki dir " + dir + (Files.exists(dir) ? " is not a directory" : " does not exist"));
        }
        for (String entry : List.of("master.pub", "master.pem", "minions", "minions_pre", "minions_rejected",
                "minions_denied")) {
            if (Files.exists(dir.resolve(entry), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
        }
        throw UserError.usage(dir + " does not look like a pki dir (no master.pub, minions/ or minions_pre/);"
                + " give the master's pki_dir");
    }

    /**
     * The audit log; a configured cachedir that does not work is an error, while a defaulted one (brine-key run on
     * a pki dir of its own, as a user who cannot write /var/cache) only costs a warning.
     */
    private AuditLog openAudit(KeytoolConfig config) {
        try {
            return AuditLog.openFile(config.auditLog(), Clock.systemUTC());
        } catch (IOException e) {
            String problem = "cannot write the audit log " + config.auditLog() + ": " + describe(e);
            if (config.cachedirFromUser()) {
                throw UserError.usage(problem);
            }
            err().println("brine-key: warning: " + problem + "; this change is not audited (use --cachedir DIR)");
            return null;
        }
    }

    private String actor() {
        String user = System.getProperty("user.name", "unknown");
        String sudoUser = environment.get("SUDO_USER");
        return "brine-key:" + user + (sudoUser != null && !sudoUser.equals(user) ? " (sudo by " + sudoUser + ")"
                : "");
    }

    private void warnAboutProblems(KeyStore store, List<KeyProblem> problems) {
        if (problems.isEmpty()) {
            return;
        }
        PrintWriter err = err();
        err.println("brine-key: warning: " + problems.size() + (problems.size() == 1 ? " file" : " files") + " in "
                + store.pkiDir() + " " + (problems.size() == 1 ? "is" : "are")
                + " not a usable key and will not be acted on:");
        for (KeyProblem problem : problems) {
            err.println("  " + problem.file() + ": " + problem.reason());
        }
        err.flush();
    }

    // ------------------------------------------------------------ list, print, finger

    private int list(KeyListing listing, Set<KeyState> states) {
        if (out == Out.text) {
            PrintWriter writer = out();
            for (KeyState state : TEXT_HEADINGS.keySet()) {
                if (states.contains(state)) {
                    writer.println(colour(state, TEXT_HEADINGS.get(state)));
                    for (String id : listing.ids(state)) {
                        writer.println(colour(state, id));
                    }
                }
            }
            writer.flush();
            return 0;
        }
        Map<String, Object> document = new LinkedHashMap<>();
        for (KeyState state : STRUCTURED_ORDER) {
            if (states.contains(state)) {
                document.put(state.dirName(), listing.ids(state));
            }
        }
        return printStructured(document);
    }

    private int show(KeyStore store, KeyListing listing, Action action, List<IdGlob> globs) {
        boolean fingerprints = action.kind() == Kind.FINGER;
        Map<KeyState, List<StoredKey>> matched = select(listing, EnumSet.allOf(KeyState.class), globs,
                action.all());
        Map<String, String> local = new LinkedHashMap<>();
        if (fingerprints && action.all()) {
            masterPublicKey(store).ifPresent(fp -> local.put("master.pub", fp));
        }
        if (matched.isEmpty() && local.isEmpty()) {
            err().println("brine-key: the key glob " + MinionIds.printable(action.argument())
                    + " does not match any key");
            return UserError.REFUSED;
        }
        if (out == Out.text) {
            PrintWriter writer = out();
            if (!local.isEmpty()) {
                writer.println("Local Keys:");
                local.forEach((name, fp) -> writer.println(name + ":  " + fp));
            }
            for (KeyState state : TEXT_HEADINGS.keySet()) {
                List<StoredKey> keys = matched.get(state);
                if (keys == null) {
                    continue;
                }
                writer.println(colour(state, TEXT_HEADINGS.get(state)));
                for (StoredKey key : keys) {
                    String value = fingerprints ? key.fingerprint() : Pem.publicKeySpki(key.key()).stripTrailing();
                    writer.println(colour(state, key.id()) + ":  " + value);
                }
            }
            writer.flush();
            return 0;
        }
        Map<String, Object> document = new LinkedHashMap<>();
        if (!local.isEmpty()) {
            document.put("local", local);
        }
        for (KeyState state : STRUCTURED_ORDER) {
            List<StoredKey> keys = matched.get(state);
            if (keys != null) {
                Map<String, String> values = new LinkedHashMap<>();
                for (StoredKey key : keys) {
                    values.put(key.id(), fingerprints ? key.fingerprint() : Pem.publicKeySpki(key.key()));
                }
                document.put(state.dirName(), values);
            }
        }
        return printStructured(document);
    }

    private Optional<String> masterPublicKey(KeyStore store) {
        try {
            return store.masterPublicKey().map(Fingerprints::of);
        } catch (IOException | KeyStoreException e) {
            err().println("brine-key: warning: cannot read master.pub: " + e.getMessage());
            return Optional.empty();
        }
    }

    private static Map<KeyState, List<StoredKey>> select(KeyListing listing, Set<KeyState> states,
            List<IdGlob> globs, boolean all) {
        Map<KeyState, List<StoredKey>> selected = new LinkedHashMap<>();
        for (KeyState state : states) {
            for (StoredKey key : listing.keys(state)) {
                if (all || IdGlob.anyMatches(globs, key.id())) {
                    selected.computeIfAbsent(state, s -> new ArrayList<>()).add(key);
                }
            }
        }
        return selected;
    }

    // ------------------------------------------------------------ accept, reject, delete

    private int change(KeytoolConfig config, KeyListing listing, Action action, List<IdGlob> globs,
            String bound) {
        Set<KeyState> from = switch (action.kind()) {
            case ACCEPT -> states(KeyState.PENDING, includeRejected ? KeyState.REJECTED : null,
                    includeDenied ? KeyState.DENIED : null);
            case REJECT -> states(KeyState.PENDING, includeAccepted ? KeyState.ACCEPTED : null,
                    includeDenied ? KeyState.DENIED : null);
            default -> EnumSet.allOf(KeyState.class);
        };
        String verb = switch (action.kind()) {
            case ACCEPT -> "accepted";
            case REJECT -> "rejected";
            default -> "deleted";
        };
        Map<KeyState, List<StoredKey>> selected = select(listing, from, globs, action.all());
        if (selected.isEmpty()) {
            String states = describeStates(from);
            err().println("brine-key: the key glob " + MinionIds.printable(action.argument()) + " does not match any "
                    + (states.isEmpty() ? "" : states + " ") + "key");
            return UserError.REFUSED;
        }
        List<StoredKey> keys = selected.values().stream().flatMap(List::stream).toList();
        if (bound != null) {
            for (StoredKey key : keys) {
                if (!key.fingerprint().equals(bound)) {
                    err().println("brine-key: " + key.id() + ": the " + key.state().label() + " key has fingerprint "
                            + key.fingerprint() + ", not " + bound + "; nothing changed");
                    return UserError.REFUSED;
                }
            }
        }
        PrintWriter info = out == Out.text ? out() : err();
        if (!quiet) {
            info.println("The following keys are going to be " + verb + ":");
            for (KeyState state : TEXT_HEADINGS.keySet()) {
                if (selected.containsKey(state)) {
                    info.println(colour(state, TEXT_HEADINGS.get(state)));
                    for (StoredKey key : selected.get(state)) {
                        info.println(colour(state, key.id()) + "  " + key.fingerprint());
                    }
                }
            }
            info.flush();
        }
        if (!yes && !confirm(action.kind() != Kind.DELETE, verb)) {
            return UserError.REFUSED;
        }
        // Only now, with something to change, is the audit log opened (and cachedir created).
        AuditLog audit = openAudit(config);
        try (KeyStore store = openStore(config, audit)) {
            return apply(store, action, keys, bound, verb);
        } finally {
            if (audit != null) {
                audit.close();
            }
        }
    }

    private int apply(KeyStore store, Action action, List<StoredKey> keys, String bound, String verb) {
        String actor = actor();
        List<String> done = new ArrayList<>();
        Map<String, String> refused = new LinkedHashMap<>();
        for (StoredKey key : keys) {
            String expected = bound != null ? bound : key.fingerprint();
            AdminResult result = switch (action.kind()) {
                case ACCEPT -> store.accept(key.id(), key.state(), expected, actor);
                case REJECT -> store.reject(key.id(), key.state(), expected, actor);
                default -> store.delete(key.id(), key.state(), expected, actor);
            };
            switch (result.status()) {
                case DONE -> {
                    done.add(key.id());
                    if (!quiet && out == Out.text) {
                        out().println("Key for minion " + key.id() + " " + verb
                                + (key.state() == KeyState.DENIED ? " (its denied key)" : "") + ".");
                    }
                }
                case UNCHANGED -> {
                    if (!quiet && out == Out.text) {
                        out().println(result.message() + ".");
                    }
                }
                case NOT_FOUND, REFUSED -> {
                    refused.put(key.id(), result.message());
                    err().println("brine-key: " + result.message());
                }
            }
        }
        out().flush();
        err().flush();
        if (out != Out.text) {
            Map<String, Object> document = new LinkedHashMap<>();
            document.put(verb, done);
            document.put("refused", refused);
            printStructured(document);
        }
        return refused.isEmpty() ? 0 : UserError.REFUSED;
    }

    private boolean confirm(boolean defaultYes, String verb) {
        if (!terminal.interactive()) {
            err().println("brine-key: no terminal to confirm on and no -y: nothing " + verb + ", nothing changed");
            return false;
        }
        String answer = terminal.readLine(defaultYes ? "Proceed? [n/Y] " : "Proceed? [N/y] ");
        boolean proceed = answer != null && (answer.isBlank() ? defaultYes
                : answer.strip().toLowerCase(Locale.ROOT).startsWith("y"));
        if (!proceed) {
            err().println("brine-key: nothing changed");
        }
        return proceed;
    }

    private static Set<KeyState> states(KeyState... states) {
        Set<KeyState> set = EnumSet.noneOf(KeyState.class);
        for (KeyState state : states) {
            if (state != null) {
                set.add(state);
            }
        }
        return set;
    }

    private static String describeStates(Set<KeyState> states) {
        if (states.containsAll(EnumSet.allOf(KeyState.class))) {
            return "";
        }
        List<String> words = new ArrayList<>();
        for (KeyState state : states) {
            words.add(state == KeyState.PENDING ? "unaccepted" : state.label());
        }
        return words.size() == 1 ? words.get(0) : String.join(", ", words.subList(0, words.size() - 1)) + " or "
                + words.get(words.size() - 1);
    }

    // ------------------------------------------------------------ --rotate

    /** Bumps the rotation request counter in the pki dir; the master, in whatever process, acts on it. */
    private int requestRotation(KeytoolConfig config) {
        AuditLog audit = openAudit(config);
        try (KeyStore store = openStore(config, audit)) {
            long request = store.requestRotation(actor());
            if (out == Out.text) {
                if (!quiet) {
                    out().println("Publish key rotation requested (request " + request + "); a running master"
                            + " rotates within a second.");
                    out().flush();
                }
                return 0;
            }
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("rotation_requested", request);
            return printStructured(document);
        } finally {
            if (audit != null) {
                audit.close();
            }
        }
    }

    // ------------------------------------------------------------ --gen-keys

    private int generateKeys(String name) {
        MinionIds.problem(name).ifPresent(problem -> {
            throw UserError.usage("--gen-keys " + MinionIds.printable(name) + ": " + problem);
        });
        try {
            RsaKeys.checkGenerateSize(keysize);
        } catch (IllegalArgumentException e) {
            throw UserError.usage("--keysize: " + e.getMessage());
        }
        Path dir = (genKeysDir != null ? genKeysDir : Path.of(".")).toAbsolutePath().normalize();
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rwx------")));
            }
            for (String file : List.of(name + ".pem", name + ".pub")) {
                if (Files.exists(dir.resolve(file), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    throw new UserError(UserError.REFUSED, dir.resolve(file) + " already exists; not overwritten");
                }
            }
            KeyPair pair = RsaKeys.generate(keysize);
            KeyPairFiles.writeNew(dir, name, pair);
            String fingerprint = Fingerprints.of(pair.getPublic());
            if (out == Out.text) {
                if (!quiet) {
                    out().println("Wrote " + dir.resolve(name + ".pem") + " (private key, mode 0400) and "
                            + dir.resolve(name + ".pub") + " (public key)");
                    out().println("Fingerprint: " + fingerprint);
                    out().flush();
                }
                return 0;
            }
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("private", dir.resolve(name + ".pem").toString());
            document.put("public", dir.resolve(name + ".pub").toString());
            document.put("fingerprint", fingerprint);
            return printStructured(document);
        } catch (FileAlreadyExistsException e) {
            throw new UserError(UserError.REFUSED, e.getFile() + " already exists; not overwritten");
        } catch (IOException e) {
            throw new UserError(UserError.REFUSED, "cannot write the key pair in " + dir + ": " + describe(e));
        }
    }

    // ------------------------------------------------------------ output

    private int printStructured(Map<String, Object> document) {
        try {
            String text = out == Out.json
                    ? new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(document) + "\n"
                    : YAMLMapper.builder().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES).build().writeValueAsString(document);
            out().print(text);
            out().flush();
            return 0;
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode output", e);
        }
    }

    private String colour(KeyState state, String text) {
        boolean enabled = out == Out.text && !noColour && terminal.colour() && !environment.containsKey("NO_COLOR");
        return enabled ? COLOURS.get(state) + text + RESET : text;
    }

    private PrintWriter out() {
        return spec.commandLine().getOut();
    }

    private PrintWriter err() {
        return spec.commandLine().getErr();
    }

    static String describe(Throwable e) {
        if (e instanceof AccessDeniedException denied) {
            return "permission denied: " + denied.getFile();
        }
        if (e instanceof NoSuchFileException missing) {
            return "no such file or directory: " + missing.getFile();
        }
        return e.getMessage() != null ? e.getMessage() : e.toString();
    }

    private static Map<KeyState, String> headings() {
        Map<KeyState, String> headings = new LinkedHashMap<>();
        headings.put(KeyState.ACCEPTED, "Accepted Keys:");
        headings.put(KeyState.DENIED, "Denied Keys:");
        headings.put(KeyState.PENDING, "Unaccepted Keys:");
        headings.put(KeyState.REJECTED, "Rejected Keys:");
        return headings;
    }

    /** The version from the build. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties properties = new Properties();
            try (InputStream in = BrineKey.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    properties.load(in);
                }
            }
            return new String[] {"brine-key " + properties.getProperty("version", "unknown")};
        }
    }
}
