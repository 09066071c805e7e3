package io.brine.keytool;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import io.brine.daemon.BrineVersion;
import io.brine.daemon.config.MasterConfig;
import io.brine.protocol.InvalidIdException;
import io.brine.protocol.targeting.Glob;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyProblem;
import io.brine.store.keys.KeyScan;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/** {@code brine-key}: the admin CLI over the key store, with salt-key's options. */
@Command(
        name = "brine-key",
        mixinStandardHelpOptions = true,
        versionProvider = BrineVersion.class,
        sortOptions = false,
        usageHelpAutoWidth = true,
        subcommands = {
            PolicyCommand.class,
            GrantCommand.class,
            TokenHashCommand.class,
            ApiTokenCommand.class,
            ClusterCommand.class
        },
        commandListHeading = "%nCommands (-c, --pki-dir, --cachedir and -q go before or after them):%n",
        headerHeading = "",
        header = "Manage the minion keys of a brine master.",
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
            "",
            "With a cluster: section in master.yaml, the keys are the cluster's, in ZooKeeper: run brine-key on any"
                    + " master host and every master sees the change within a second (the audit event also goes to"
                    + " the cluster's one trail). While ZooKeeper has no quorum, or this host's session has expired,"
                    + " changes are refused and nothing changes. \"brine-key cluster import PKI_DIR\" copies a"
                    + " filesystem pki dir (brine's or Salt's) into the cluster.",
        },
        optionListHeading = "%nOptions:%n",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:done; policy check: the key would be accepted",
            "1:nothing matched, or a key was refused (fingerprint mismatch, no confirmation, ...); policy check:"
                    + " the key would stay pending",
            "2:usage or configuration error",
            "3:policy check: the key would be rejected (or denied)",
            "4:cluster unavailable: the ZooKeeper ensemble of cluster: cannot be reached or has no quorum;"
                    + " nothing changed, try again when a majority of its servers run",
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
            "  brine-key --clean                move aside what is not a key file (asks)",
            "  brine-key --rotate-keys 'web*'   ask web1, web2, ... to rotate keys",
            "  brine-key --rotate-master-key    new master key; minions follow it",
            "  brine-key --rotate-master-key --prepare",
            "                                   pending new key; master_sign.request to sign",
            "  brine-key --sign-master-key master_sign.request --master-sign-key sign.pem",
            "                                   (where the signing key is) writes the .sig",
            "  brine-key --rotate-master-key --signature master_sign.request.sig",
            "                                   put the prepared key in force",
            "  brine-key --master-pubkey-signature --prepare",
            "                                   request to sign the key in force",
            "  brine-key --master-pubkey-signature --signature FILE.sig",
            "                                   install its Salt pub_sig",
            "  brine-key --gen-keys web1 --gen-keys-dir DIR",
            "                                   write DIR/web1.pem and DIR/web1.pub",
            "  brine-key policy check web1.example.com --pub web1.pub --addr 10.0.0.5",
            "                                   which policy decides on this key, and why",
            "  brine-key grant --provisioner-key cloud.pem --id web1 --pub web1.pub \\",
            "      --ttl 3600 --class role=web",
            "                                   a signed grant for web1's key, on stdout",
            "  brine-key cluster import /etc/salt/pki/master",
            "                                   copy its keys into master.yaml's cluster",
            "  brine-key token-hash --match 'web*' < token.txt",
            "                                   an autosign_tokens entry for master.yaml",
        })
public final class BrineKey implements Callable<Integer> {

    @Option(
            names = {"-L", "--list-all"},
            description = "List all keys.")
    boolean listAll;

    @Option(
            names = "--long",
            description = "With -L or -l: each key's fingerprint, when it was filed in its state"
                    + " (an accepted key: accepted or last rotated) and its age, and when its id last rotated its key. Not"
                    + " with cluster: times unknown.")
    boolean longListing;

    @Option(
            names = {"-l", "--list"},
            paramLabel = "STATE",
            description = "List the keys in one state: pre, un, unaccepted, acc, accepted, rej, rejected, den,"
                    + " denied, or all.")
    String list;

    @Option(
            names = {"-a", "--accept"},
            paramLabel = "GLOB",
            description = "Accept the matching unaccepted keys.")
    String accept;

    @Option(
            names = {"-A", "--accept-all"},
            description = "Accept all unaccepted keys.")
    boolean acceptAll;

    @Option(
            names = {"-r", "--reject"},
            paramLabel = "GLOB",
            description = "Reject the matching unaccepted keys.")
    String reject;

    @Option(
            names = {"-R", "--reject-all"},
            description = "Reject all unaccepted keys.")
    boolean rejectAll;

    @Option(
            names = {"-d", "--delete"},
            paramLabel = "GLOB",
            description = "Delete the matching keys, in any state.")
    String delete;

    @Option(
            names = {"-D", "--delete-all"},
            description = "Delete all keys.")
    boolean deleteAll;

    @Option(
            names = {"-p", "--print"},
            paramLabel = "GLOB",
            description = "Print the matching public keys.")
    String print;

    @Option(
            names = {"-P", "--print-all"},
            description = "Print all public keys.")
    boolean printAll;

    @Option(
            names = {"-f", "--finger"},
            paramLabel = "GLOB|FP",
            description = "Print the fingerprints of the matching keys. With -a, -r or -d and a single id: act only"
                    + " if that id's key has fingerprint FP. With -a or -r on an id whose key rotation waits for an"
                    + " admin (key_rotation: pending): FP is the new key's, and required.")
    String finger;

    @Option(
            names = {"-F", "--finger-all"},
            description = "Print the fingerprints of all keys and of master.pub.")
    boolean fingerAll;

    @Option(names = "--include-rejected", description = "Accept matching rejected keys too.")
    boolean includeRejected;

    @Option(names = "--include-accepted", description = "Reject matching accepted keys too.")
    boolean includeAccepted;

    @Option(names = "--include-all", description = "All three --include-* options at once (salt-key's).")
    boolean includeAll;

    @Option(
            names = "--include-denied",
            description = "Accept or reject matching denied keys too (only for ids that hold no other key).")
    boolean includeDenied;

    @Option(
            names = "--allow-shared-key",
            description = "Accept a key even when the same key is stored under another id (one key, one id: -L marks"
                    + " such keys \"same key as ID\"; without this flag they are not accepted).")
    boolean allowSharedKey;

    @Option(
            names = {"-y", "--yes"},
            description = "Answer yes to every confirmation.")
    boolean yes;

    @Option(
            names = {"-q", "--quiet"},
            scope = ScopeType.INHERIT,
            description = "Print only requested data, warnings and errors.")
    boolean quiet;

    @Option(
            names = {"-v", "--verbose"},
            scope = ScopeType.INHERIT,
            description = "Also log, on stderr, what brine and its ZooKeeper client do (DEBUG); silent otherwise.")
    boolean verbose;

    @Option(
            names = "--rotate",
            description = "Ask the master to rotate the publish key now, as it does when a key is removed: minions"
                    + " get the new key, and nothing published from then on can be read with an older one. A"
                    + " running master does it within a second.")
    boolean rotate;

    @Option(
            names = "--rotate-keys",
            paramLabel = "GLOB",
            description = "Ask the matching accepted brine minions to rotate their keys: the master asks each at its"
                    + " next heartbeat, the minion makes a new key pair and rotates it over its session as"
                    + " brine-minion --rotate-key does (key_rotation of master.yaml applies). Asking again is"
                    + " harmless; a minion that never answers keeps its key; deleting or rejecting the key drops the"
                    + " ask. -L --long shows each ask: asked (since), rotated (when). Refused for a glob that matches"
                    + " nothing, a key that is not accepted, a Salt minion's key, and key_rotation: deny. With cluster:"
                    + " in master.yaml (read also with --pki-dir and --cachedir), the asks go to ZooKeeper and every"
                    + " master asks its minions; a lost connection while asking: exit 1, said may or may not be"
                    + " recorded (-L shows). A write that fails part way (full disk) stops at that id: the asks"
                    + " before it are kept and audited, the rest named NOT asked, exit 1.")
    String rotateKeys;

    @Option(
            names = "--clean",
            description = "Move the entries of the state directories that are not key files (a name that is not a"
                    + " valid id, a symbolic link, a directory, content that is not a public key) to"
                    + " pki_dir/invalid/STAMP/, after listing them with the reason and asking (default no; -y: do"
                    + " not ask). Valid keys, unreadable files and temp files are never moved. Audited; under the"
                    + " store lock. Not with cluster:.")
    boolean clean;

    @Option(
            names = "--rotate-master-key",
            description = "Replace the master key pair by a new one (keysize of master.yaml), with a succession"
                    + " record signed by the old key, kept in pki_dir/master_chain (master_key_chain records). A"
                    + " running master takes it within a second and sends it to its minions, which pin the new key;"
                    + " a minion that was away is shown the chain at its next auth. The old key still signs"
                    + " publications for master_key_grace (7 days). With cluster: in master.yaml (read also with"
                    + " --pki-dir and --cachedir), the cluster's key is rotated in ZooKeeper, signed from this host's"
                    + " master.pem, and every master switches within a second; so are --prepare, --signature and"
                    + " --cancel.")
    boolean rotateMasterKey;

    @Option(
            names = "--master-sign-key",
            paramLabel = "FILE",
            description = "With --rotate-master-key: also sign the succession record with this offline master"
                    + " signing key (a private key PEM, mode 0400, outside pki_dir; never copied), so that minions"
                    + " with verify_master_pubkey_sign follow the new key, and write Salt's pub_sig of the new key"
                    + " for Salt minions (pki_dir/master_pubkey_signature; a cluster's: in ZooKeeper, sent by every"
                    + " master). Required when master.yaml sets"
                    + " master_sign_pubkey (or sign in two steps: --prepare), and then must match"
                    + " pki_dir/master_sign.pub. With --sign-master-key: the key that signs the request.")
    Path masterSignKey;

    @Option(
            names = "--prepare",
            description = "With --rotate-master-key: the first of the two steps of a rotation signed where the master"
                    + " signing key is kept (it never comes to this machine): make the new key pair, kept pending in"
                    + " pki_dir/master.pem.pending and not in force, and write the request to sign,"
                    + " pki_dir/master_sign.request. Needs master_sign_pubkey. With cluster: on a master host; the"
                    + " pending key (sealed for the key in force) and the request are kept in ZooKeeper, where"
                    + " --signature or --cancel on any master host finds them, and the request is written here"
                    + " too. One at a time: a second, or a one-step rotation, is refused while one waits (--cancel"
                    + " drops it). With --master-pubkey-signature: write the request to sign the key in force,"
                    + " pki_dir/master_pubkey_signature.request.")
    boolean prepare;

    @Option(
            names = "--signature",
            paramLabel = "FILE",
            description = "With --rotate-master-key: the last step; check FILE (written by --sign-master-key) against"
                    + " pki_dir/master_sign.pub and the prepared key, then put that key in force as --rotate-master-key"
                    + " does, with Salt's pub_sig of it. Refused, nothing changed, for another key or request, a"
                    + " request made before another rotation or whose master_key_grace is over, or another signing"
                    + " key. With --master-pubkey-signature: check FILE against master_sign.pub and the key in"
                    + " force, and install its pub_sig. With --sign-master-key: where to write the signature"
                    + " (default: REQUEST.sig; never overwritten).")
    Path signature;

    @Option(
            names = "--cancel",
            description = "With --rotate-master-key: drop the prepared rotation (the pending key"
                    + " and its request); the key in force is unchanged.")
    boolean cancel;

    @Option(
            names = "--master-pubkey-signature",
            description = "Sign the master key in force without rotating it, for Salt minions with"
                    + " verify_master_pubkey_sign (a key never rotated has no pub_sig, e.g. when master_sign_pubkey is"
                    + " switched on): --prepare writes the request, pki_dir/master_pubkey_signature.request;"
                    + " --sign-master-key signs it where the signing key is kept; --signature FILE checks it against"
                    + " master_sign.pub and the key in force and installs Salt's pub_sig"
                    + " (pki_dir/master_pubkey_signature, read by a running master within a second; with cluster: in"
                    + " ZooKeeper, sent by every master that verifies it with its own master_sign.pub). Needs"
                    + " master_sign_pubkey. Refused, nothing changed, for another key (one rotated meanwhile) or"
                    + " another signing key.")
    boolean masterPubkeySignature;

    @Option(
            names = "--sign-master-key",
            paramLabel = "REQUEST",
            description = "On the machine that holds the master signing key (no master.yaml or pki_dir needed):"
                    + " sign the rotation in REQUEST (pki_dir/master_sign.request, copied from the master) with"
                    + " --master-sign-key FILE: brine's signature of the succession record and Salt's pub_sig of the"
                    + " new key, written to REQUEST.sig (or --signature FILE). Shows both keys' fingerprints. A"
                    + " request of --master-pubkey-signature (master_pubkey_signature.request) gets Salt's pub_sig of"
                    + " the key in force.")
    Path signMasterKey;

    @Option(
            names = "--gen-keys",
            paramLabel = "NAME",
            description = "Generate a key pair: NAME.pem (private, 0400) and NAME.pub (public).")
    String genKeys;

    @Option(names = "--gen-keys-dir", paramLabel = "DIR", description = "Where --gen-keys writes (default: .).")
    Path genKeysDir;

    @Option(
            names = "--keysize",
            paramLabel = "BITS",
            defaultValue = "2048",
            description = "Key size for --gen-keys (default: ${DEFAULT-VALUE}; 2048 to 8192).")
    int keysize;

    @Option(
            names = "--out",
            paramLabel = "FORMAT",
            defaultValue = "text",
            description = "Output format: text (salt-key's layout), nested or txt (Salt's outputters of the"
                    + " document json shows), json or yaml (default: ${DEFAULT-VALUE}).")
    Output.Format out;

    @Option(names = "--no-color", description = "No colour, even on a terminal (also: NO_COLOR=1).")
    boolean noColour;

    @Option(
            names = {"-c", "--config-dir"},
            paramLabel = "DIR",
            scope = ScopeType.INHERIT,
            description = "Directory of master.yaml, read for pki_dir and cachedir (default: /etc/brine).")
    Path configDir;

    @Option(
            names = "--pki-dir",
            paramLabel = "DIR",
            scope = ScopeType.INHERIT,
            description = "The master's pki dir (default: pki_dir of master.yaml, else /etc/brine/pki/master).")
    Path pkiDir;

    @Option(
            names = "--cachedir",
            paramLabel = "DIR",
            scope = ScopeType.INHERIT,
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
    BrineKey(Terminal terminal, Map<String, String> environment, KeytoolConfig.Defaults defaults, InputStream stdin) {
        this.terminal = terminal;
        this.environment = Map.copyOf(environment);
        this.defaults = defaults;
        this.stdin = stdin;
    }

    /** Where this run works: master.yaml of {@code -c}, {@code --pki-dir}, {@code --cachedir}. */
    KeytoolConfig config() {
        return KeytoolConfig.resolve(configDir, defaults, pkiDir, cachedir);
    }

    /** The directory of master.yaml: {@code -c}, else the default (/etc/brine). */
    Path configDirOrDefault() {
        return configDir != null ? configDir : defaults.configDir();
    }

    InputStream stdin() {
        return stdin;
    }

    boolean yes() {
        return yes;
    }

    boolean quiet() {
        return quiet;
    }

    /** The output format given before a subcommand (a subcommand's own --out wins). */
    Output.Format outFormat() {
        return out;
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
        commandLine.setExecutionStrategy(parseResult -> {
            for (ParseResult part = parseResult; part != null; part = part.subcommand()) {
                if (part.hasMatchedOption("--verbose")) {
                    verboseLogging();
                }
            }
            return new CommandLine.RunLast().execute(parseResult);
        });
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
                // The store's message names the file ("cannot write FILE: No space left on device").
                boolean named = io.getCause() instanceof AccessDeniedException
                        || io.getCause() instanceof NoSuchFileException
                        || io.getMessage() == null;
                err.println("brine-key: " + (named ? describe(io.getCause()) : io.getMessage()));
                return UserError.REFUSED;
            }
            err.println("brine-key: internal error (please report it): " + e);
            e.printStackTrace(err);
            return UserError.REFUSED;
        });
        return commandLine;
    }

    /**
     * {@code -v}: DEBUG for brine and for the ZooKeeper and Curator clients, which logback-brine-key.xml keeps off (a
     * lost ensemble would otherwise print dozens of their warnings and traces before brine-key's one line).
     */
    private static void verboseLogging() {
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
            for (String name : List.of("io.brine", "org.apache.zookeeper", "org.apache.curator")) {
                context.getLogger(name).setLevel(Level.DEBUG);
            }
        }
    }

    @Override
    public Integer call() {
        Action action = Action.of(this);
        boolean masterKey = action.kind() == Action.Kind.ROTATE_MASTER_KEY;
        boolean pubSig = action.kind() == Action.Kind.MASTER_PUBKEY_SIGNATURE;
        if (pubSig && masterSignKey != null) {
            // As salt-key --gen-signature with the signing key at hand would: say the steps, the key never comes here.
            throw UserError.usage("--master-pubkey-signature does not take --master-sign-key: the signing key never"
                    + " comes to the master; run --master-pubkey-signature --prepare here, --sign-master-key"
                    + " master_pubkey_signature.request --master-sign-key FILE where the signing key is, then"
                    + " --master-pubkey-signature --signature master_pubkey_signature.request.sig here");
        }
        if (pubSig && cancel) {
            throw UserError.usage("--master-pubkey-signature has nothing to cancel: its request changes nothing until"
                    + " its --signature is installed (delete pki_dir/master_pubkey_signature.request if unwanted)");
        }
        if (masterSignKey != null && !masterKey && action.kind() != Action.Kind.SIGN_MASTER_KEY) {
            throw UserError.usage("--master-sign-key applies to --rotate-master-key and --sign-master-key only");
        }
        if (cancel && !masterKey) {
            throw UserError.usage("--cancel applies to --rotate-master-key only");
        }
        if (prepare && !masterKey && !pubSig) {
            throw UserError.usage("--prepare applies to --rotate-master-key and --master-pubkey-signature only");
        }
        if (signature != null && !masterKey && !pubSig && action.kind() != Action.Kind.SIGN_MASTER_KEY) {
            throw UserError.usage("--signature applies to --rotate-master-key, --master-pubkey-signature and"
                    + " --sign-master-key only");
        }
        if (pubSig && prepare == (signature != null)) {
            throw UserError.usage("--master-pubkey-signature: choose one of --prepare and --signature FILE");
        }
        if (masterKey
                && (prepare ? 1 : 0) + (cancel ? 1 : 0) + (signature != null ? 1 : 0) + (masterSignKey != null ? 1 : 0)
                        > 1) {
            throw UserError.usage(
                    "--rotate-master-key: choose one of --master-sign-key, --prepare, --signature and" + " --cancel");
        }
        if (action.kind() == Action.Kind.SIGN_MASTER_KEY && masterSignKey == null) {
            throw UserError.usage("--sign-master-key needs the signing key: --master-sign-key FILE");
        }
        Output output =
                new Output(out(), err(), out, !noColour && terminal.colour() && !environment.containsKey("NO_COLOR"));
        ChangeKeys changes = new ChangeKeys(this, output, terminal);
        if (action.kind() == Action.Kind.GEN_KEYS) {
            return GenerateKeys.run(action.argument(), keysize, genKeysDir, output, quiet);
        }
        if (action.kind() == Action.Kind.ROTATE) {
            return changes.requestRotation(KeytoolConfig.resolve(configDir, defaults, pkiDir, cachedir));
        }
        if (action.kind() == Action.Kind.ROTATE_KEYS) {
            // master.yaml read also with --pki-dir and --cachedir: on a cluster host the asks go to ZooKeeper.
            return changes.askRotation(
                    KeytoolConfig.resolveWithMasterConfig(configDir, defaults, pkiDir, cachedir),
                    KeytoolConfig.settings(configDir, defaults),
                    action.argument(),
                    Action.globs(action.argument()));
        }
        if (action.kind() == Action.Kind.CLEAN) {
            return new CleanCommand(this, output, changes)
                    .run(KeytoolConfig.resolve(configDir, defaults, pkiDir, cachedir));
        }
        if (action.kind() == Action.Kind.SIGN_MASTER_KEY) {
            return new MasterKeySigning(this, output).sign(signMasterKey, masterSignKey, signature);
        }
        if (pubSig) {
            MasterKeySigning signing = new MasterKeySigning(this, output);
            KeytoolConfig config = KeytoolConfig.resolveWithMasterConfig(configDir, defaults, pkiDir, cachedir);
            MasterConfig settings = KeytoolConfig.settings(configDir, defaults);
            return prepare
                    ? signing.prepareKeySignature(config, settings)
                    : signing.installKeySignature(config, settings, signature);
        }
        if (masterKey && (prepare || cancel || signature != null)) {
            MasterKeySigning signing = new MasterKeySigning(this, output);
            // master.yaml read also with --pki-dir and --cachedir, as for a one-step rotation: a cluster host's is.
            KeytoolConfig config = KeytoolConfig.resolveWithMasterConfig(configDir, defaults, pkiDir, cachedir);
            if (cancel) {
                return signing.cancel(config);
            }
            MasterConfig settings = KeytoolConfig.settings(configDir, defaults);
            return prepare ? signing.prepare(config, settings) : signing.complete(config, settings, signature);
        }
        if (action.kind() == Action.Kind.ROTATE_MASTER_KEY) {
            return changes.rotateMasterKey(
                    KeytoolConfig.resolveWithMasterConfig(configDir, defaults, pkiDir, cachedir),
                    KeytoolConfig.settings(configDir, defaults),
                    masterSignKey);
        }
        List<Glob> globs = action.all() ? List.of() : Action.globs(action.argument());
        String boundFingerprint = action.boundFingerprint(finger);
        KeytoolConfig config = KeytoolConfig.resolve(configDir, defaults, pkiDir, cachedir);
        ChangeKeys.Change change = switch (action.kind()) {
            case ACCEPT -> ChangeKeys.Change.ACCEPT;
            case REJECT -> ChangeKeys.Change.REJECT;
            case DELETE -> ChangeKeys.Change.DELETE;
            default -> null;
        };
        if ((change == ChangeKeys.Change.ACCEPT || change == ChangeKeys.Change.REJECT) && !action.all()) {
            Integer rotation = changes.onWaitingRotation(config, change, action.argument(), boundFingerprint);
            if (rotation != null) {
                return rotation;
            }
        }
        if (change != null) {
            // Lists, selects, shows and confirms from a scan (ids, states, fingerprints: no parsed keys), then
            // changes each key as its file is under the lock.
            KeyScan.Result scan = config.scan();
            warnAboutProblems(config.pkiDir(), scan.listing().problems());
            ChangeKeys.Plan plan = changes.plan(
                    scan, change, action.argument(), globs, action.all(), boundFingerprint, config.reserved());
            return plan.exit() != null ? plan.exit() : changes.apply(config, change, plan.keys(), boundFingerprint);
        }
        ShowKeys show = new ShowKeys(output);
        if (action.kind() == Action.Kind.LIST) {
            KeytoolConfig.Listed listed = config.scanWithAsks();
            KeyScan.Result scan = listed.scan();
            warnAboutProblems(config.pkiDir(), scan.listing().problems());
            int exit = show.list(
                    scan,
                    action.states(),
                    ChangeKeys.waitingRotations(config, scan.listing()),
                    listed.asks(),
                    longListing
                            ? Optional.of(new ShowKeys.KeyTimes(
                                    config.cluster().isPresent() ? null : config.pkiDir(), Instant.now()))
                            : Optional.empty());
            if (output.text() && !terminal.interactive()) {
                output.err().println(ShowKeys.total(scan.listing(), action.states()));
                output.err().flush();
            }
            warnAboutReserved(config, scan.listing());
            return exit;
        }
        // -p/-P/-f/-F: from a scan too (ids, states, fingerprints), each printed key read from its file.
        KeyScan.Result scan = config.scan();
        warnAboutProblems(config.pkiDir(), scan.listing().problems());
        return switch (action.kind()) {
            case PRINT, FINGER ->
                show.show(config, scan, action.kind() == Action.Kind.FINGER, action.argument(), globs, action.all());
            case LIST,
                    ACCEPT,
                    REJECT,
                    DELETE,
                    GEN_KEYS,
                    ROTATE,
                    CLEAN,
                    ROTATE_MASTER_KEY,
                    ROTATE_KEYS,
                    SIGN_MASTER_KEY,
                    MASTER_PUBKEY_SIGNATURE -> throw new IllegalStateException();
        };
    }

    // ------------------------------------------------------------ store, audit, output

    KeyStore openStore(KeytoolConfig config, AuditLog audit) {
        return config.openStore(audit);
    }

    AuditLog openAudit(KeytoolConfig config) {
        return config.openAudit(err());
    }

    String actor() {
        String user = System.getProperty("user.name", "unknown");
        String sudoUser = environment.get("SUDO_USER");
        return "brine-key:" + user + (sudoUser != null && !sudoUser.equals(user) ? " (sudo by " + sudoUser + ")" : "");
    }

    /**
     * Keys filed under an id that {@code reserved_ids} now reserves (before the upgrade that added it): kept, never
     * deleted by brine-key on its own, and named on stderr so that an admin deletes them.
     */
    private void warnAboutReserved(KeytoolConfig config, KeyListing listing) {
        PrintWriter err = err();
        for (KeyState state : KeyState.values()) {
            for (String id : listing.ids(state)) {
                config.reserved()
                        .problem(id)
                        .ifPresent(problem -> err.println("brine-key: warning: " + id + " ("
                                + state.label() + "): " + problem
                                + "; its minion is refused at auth. The key is kept: delete"
                                + " it with brine-key -d " + id));
            }
        }
        err.flush();
    }

    private void warnAboutProblems(Path pkiDir, List<KeyProblem> problems) {
        if (problems.isEmpty()) {
            return;
        }
        PrintWriter err = err();
        err.println("brine-key: warning: " + problems.size() + (problems.size() == 1 ? " file" : " files") + " in "
                + pkiDir + " " + (problems.size() == 1 ? "is" : "are")
                + " not a usable key and will not be acted on (brine-key --clean moves aside those that are not key"
                + " files):");
        for (KeyProblem problem : problems) {
            err.println("  " + problem.file() + ": " + problem.reason());
        }
        err.flush();
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
}
