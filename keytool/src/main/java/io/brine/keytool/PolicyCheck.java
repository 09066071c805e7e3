package io.brine.keytool;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.grant.Grants;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.KeyTransitions;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.StoredKey;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.store.policy.AuthAttempt;
import io.brine.store.policy.PolicyDecision;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code brine-key policy check ID}: what the master would answer this key now, which rule decides, and why. Builds
 * the very policies the master builds from master.yaml (AcceptancePolicies.fromConfig) and asks them without side
 * effects: nothing is spent, stored or promoted. An autosign_policy executable does run, synchronously.
 */
@Command(
        name = "check",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        sortOptions = false,
        header = "Print which acceptance policy decides about a key, and why (a dry run).",
        description = {
            "Reads master.yaml (-c DIR), builds the acceptance policies the master builds from it"
                    + " and asks them about ID, as the master would for an auth request now: autoreject_file first,"
                    + " then auto_accept, autosign_file, grants, autosign_tokens, autosign_claims, inventory_file"
                    + " and autosign_policy (which runs, and may take up to its timeout). Nothing is changed: no"
                    + " grant or token is spent, no key is stored. Policy files with problems are reported on"
                    + " stderr. Works before the master's first start too (its pki_dir does not exist yet): then"
                    + " no key is stored, and --pub is needed.",
            "Exit status: 0 the key would be accepted, 1 it would stay pending (or be refused for a limit), 3 it"
                    + " would be rejected (or denied: another key is stored for the id), 2 usage error.",
        })
final class PolicyCheck implements Callable<Integer> {

    static final int ACCEPTED = 0;
    static final int PENDING = 1;
    static final int REJECTED = 3;

    @ParentCommand
    PolicyCommand policy;

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "ID", description = "The minion id to ask about.")
    String id;

    @Option(
            names = "--pub",
            paramLabel = "FILE",
            description = "The minion's public key (PEM). Default: the key stored for ID in the pki dir.")
    Path pub;

    @Option(
            names = "--claims",
            paramLabel = "JSON",
            description = "The claims (grains) the minion sends, as a JSON object, e.g."
                    + " '{\"role\":\"web\",\"ipv4\":[\"10.0.0.5\"]}'. Default: none.")
    String claims;

    @Option(names = "--grant", paramLabel = "FILE", description = "The provisioning grant the minion presents.")
    Path grant;

    @Option(
            names = "--addr",
            paramLabel = "IP",
            description = "The address the request comes from (inventory_file). Default: unknown.")
    String address;

    @Option(
            names = "--out",
            paramLabel = "FORMAT",
            description = "text, nested, txt, json or yaml (default: brine-key's --out, else text).")
    Output.Format out;

    @Override
    public Integer call() {
        BrineKey root = policy.root;
        Output.Format format = out != null ? out : root.outFormat();
        MinionIds.problem(id).ifPresent(problem -> {
            throw UserError.usage(MinionIds.printable(id) + ": " + problem);
        });
        MasterConfig config = KeytoolConfig.master(root.configDirOrDefault().resolve(MasterConfig.FILE_NAME));
        Path pkiDir = config.pkiDir();
        if (config.cluster().isPresent()) {
            return check(config, null, false, format); // the keys are the cluster's
        }
        Path scratch = null;
        try {
            if (!Files.exists(pkiDir, LinkOption.NOFOLLOW_LINKS)) {
                // A dry run of a new config: no key is stored yet, so ask as the master's first start would.
                spec.commandLine()
                        .getErr()
                        .println("brine-key: the pki dir " + pkiDir + " does not exist yet (the"
                                + " master creates it): asking as if no key were stored");
                scratch = Files.createTempDirectory(
                        "brine-key-policy-",
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                pkiDir = scratch.resolve("pki");
            } else {
                KeytoolConfig.requireLooksLikePkiDir(pkiDir);
            }
            return check(config, pkiDir, scratch != null, format);
        } catch (IOException e) {
            throw UserError.usage("cannot create a scratch pki dir: " + BrineKey.describe(e));
        } finally {
            if (scratch != null) {
                deleteTree(scratch);
            }
        }
    }

    /** The cluster's key store, with no audit: a dry run changes nothing. */
    private static KeyStore openCluster(MasterConfig config) {
        return new KeytoolConfig(
                        config.pkiDir(),
                        config.cachedir(),
                        false,
                        config.auditLog(),
                        Optional.of(config),
                        config.acceptance().reserved())
                .openCluster(AuditLog.none());
    }

    /** {@code pkiDir} null: the cluster's keys (cluster: in master.yaml). */
    private int check(MasterConfig config, Path pkiDir, boolean scratch, Output.Format format) {
        try (KeyStore store = pkiDir == null
                ? openCluster(config)
                : FileKeyStore.open(KeyStoreOptions.builder(pkiDir)
                        .masterKey(false)
                        .createPkiDir(scratch)
                        .pollInterval(Duration.ZERO)
                        .build())) {
            KeyListing listing = store.list();
            RSAPublicKey key = key(listing);
            String fingerprint = Fingerprints.of(key);
            AuthAttempt attempt = new AuthAttempt(
                    id,
                    key,
                    fingerprint,
                    claims(),
                    grant(),
                    null,
                    address != null ? address : "unknown",
                    Clock.systemUTC().instant());
            KeyLookup lookup = store.lookup(id, key);
            StringWriter text = new StringWriter();
            PrintWriter out = new PrintWriter(text);
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("id", id);
            document.put("fingerprint", fingerprint);
            PrintWriter err = spec.commandLine().getErr();
            for (String problem : AcceptancePolicies.untrustedInputs(config, config.pkiDir())) {
                err.println("ERROR " + problem);
            }
            err.flush();
            out.println(id + " (key " + fingerprint + ")");
            Optional<String> reserved = config.acceptance().reserved().problem(id);
            if (reserved.isPresent()) {
                // Refused before the key store and the policies (reserved_ids): nothing else is asked.
                out.println("The master would answer REFUSED (" + reserved.get() + "); no policy is asked.");
                out.flush();
                document.put("answer", "REFUSED");
                document.put("reason", reserved.get());
                PrintWriter stdout = spec.commandLine().getOut();
                stdout.print(
                        format == null || format == Output.Format.text
                                ? text.toString()
                                : Output.structured(format, document));
                stdout.flush();
                return REJECTED;
            }
            PolicyVerdict verdict = PolicyVerdict.NONE;
            if (lookup == KeyLookup.UNKNOWN || lookup == KeyLookup.PENDING_SAME || lookup == KeyLookup.PENDING_OTHER) {
                try (AcceptancePolicies policies =
                        AcceptancePolicies.fromConfig(config, store, Clock.systemUTC(), AuditLog.none())) {
                    // Over another pending key only grants and tokens are asked (they may displace it).
                    AcceptancePolicies.Explanation explanation = lookup == KeyLookup.PENDING_OTHER
                            ? policies.explainCredentials(attempt)
                            : policies.explain(attempt);
                    if (lookup == KeyLookup.PENDING_OTHER) {
                        out.println("Another key is pending for this id: only a grant or token can displace it.");
                    }
                    out.println("Policies asked, in order:");
                    List<Map<String, Object>> steps = new ArrayList<>();
                    for (PolicyDecision step : explanation.steps()) {
                        out.println("  " + mark(step.verdict()) + " " + step.rule() + ": " + step.reason());
                        Map<String, Object> entry = new LinkedHashMap<>();
                        entry.put("verdict", step.verdict().name().toLowerCase(Locale.ROOT));
                        entry.put("rule", step.rule());
                        entry.put("reason", step.reason());
                        steps.add(entry);
                    }
                    document.put("steps", steps);
                    PolicyDecision decision = explanation.decision();
                    verdict = decision.verdict();
                    out.println(
                            verdict == PolicyVerdict.NONE
                                    ? "No policy decides: the key waits for an admin."
                                    : "Decided by " + decision.rule() + ": " + decision.reason());
                    document.put("decided_by", verdict == PolicyVerdict.NONE ? null : decision.rule());
                }
            } else {
                out.println("The key store holds this id as " + describe(lookup) + ": policies are not asked.");
                document.put("stored", describe(lookup));
            }
            // The master's one decision (KeyTransitions.plan), with what it reads where it commits: the id's key and
            // kind (an offer from the minion holding it), and the other ids holding the same key (one key, one id).
            MinionKind kind = store.kind(id);
            KeyTransitions.Current current = KeyTransitions.Current.of(lookup, kind);
            List<String> sharing =
                    KeyTransitions.readsSharing(current, kind) ? otherIds(listing, fingerprint) : List.of();
            KeyTransitions.Outcome outcome = KeyTransitions.plan(
                            current,
                            kind,
                            verdict,
                            lookup,
                            sharing,
                            new KeyTransitions.Limits(
                                    listing.ids(KeyState.PENDING).size(),
                                    config.maxPending(),
                                    listing.ids(KeyState.ACCEPTED).size(),
                                    config.maxMinions(),
                                    listing.ids(KeyState.REJECTED).size(),
                                    KeyStoreOptions.DEFAULT_MAX_REJECTED))
                    .outcome();
            out.println("The master would answer " + outcome.answer() + " (" + outcome.reason() + ").");
            out.flush();
            document.put("answer", outcome.answer().name());
            document.put("reason", outcome.reason());
            PrintWriter stdout = spec.commandLine().getOut();
            stdout.print(
                    format == null || format == Output.Format.text
                            ? text.toString()
                            : Output.structured(format, document));
            stdout.flush();
            return switch (outcome.answer()) {
                case ACCEPTED -> ACCEPTED;
                case PENDING, FULL -> PENDING;
                case REJECTED, DENIED -> REJECTED;
            };
        } catch (KeyStoreException e) {
            throw UserError.usage(e.getMessage());
        } catch (IOException e) {
            throw UserError.usage("cannot open the pki dir " + config.pkiDir() + ": " + BrineKey.describe(e));
        }
    }

    /** The ids other than this one whose key (pending, accepted, rejected or denied) has {@code fingerprint}. */
    private List<String> otherIds(KeyListing listing, String fingerprint) {
        TreeSet<String> ids = new TreeSet<>();
        for (KeyState state : KeyState.values()) {
            listing.keys(state).stream()
                    .filter(key ->
                            key.fingerprint().equals(fingerprint) && !key.id().equals(id))
                    .forEach(key -> ids.add(key.id()));
        }
        return List.copyOf(ids);
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder())
                    .forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // A scratch dir in the temp dir: left for the system to clean.
        }
    }

    private RSAPublicKey key(KeyListing listing) {
        if (pub != null) {
            try {
                return RsaKeys.checkSize(Pem.readPublicKey(
                        new String(AtomicFiles.readSmall(pub, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII)));
            } catch (IOException e) {
                throw UserError.usage("--pub " + pub + ": " + BrineKey.describe(e));
            } catch (KeyFormatException e) {
                throw UserError.usage("--pub " + pub + ": " + e.getMessage());
            }
        }
        for (KeyState state :
                new KeyState[] {KeyState.PENDING, KeyState.ACCEPTED, KeyState.REJECTED, KeyState.DENIED}) {
            Optional<StoredKey> stored =
                    listing.keys(state).stream().filter(k -> k.id().equals(id)).findFirst();
            if (stored.isPresent()) {
                return stored.get().key();
            }
        }
        throw UserError.usage(id + ": no key stored for this id; give the minion's public key with --pub FILE");
    }

    private Map<String, Object> claims() {
        if (claims == null) {
            return Map.of();
        }
        try {
            return new ObjectMapper()
                    .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
                    .readValue(claims, new TypeReference<Map<String, Object>>() {});
        } catch (JacksonException e) {
            throw UserError.usage("--claims: expected a JSON object (" + e.getOriginalMessage() + ")");
        }
    }

    private byte[] grant() {
        if (grant == null) {
            return null;
        }
        try {
            return AtomicFiles.readSmall(grant, Grants.MAX_BYTES);
        } catch (IOException e) {
            throw UserError.usage("--grant " + grant + ": " + BrineKey.describe(e));
        }
    }

    private static String mark(PolicyVerdict verdict) {
        return switch (verdict) {
            case ACCEPT -> "accept";
            case REJECT -> "reject";
            case NONE -> "  --  ";
        };
    }

    private static String describe(KeyLookup lookup) {
        return switch (lookup) {
            case ACCEPTED_SAME -> "accepted with this key";
            case ACCEPTED_OTHER -> "accepted with another key";
            case PENDING_OTHER -> "pending with another key";
            case REJECTED -> "rejected";
            case UNKNOWN, PENDING_SAME -> "unknown or pending";
        };
    }
}
