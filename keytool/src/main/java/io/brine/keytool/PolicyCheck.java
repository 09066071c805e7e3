package io.brine.keytool;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.daemon.config.MasterConfig;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyLookup;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.KeyTransitions;
import io.brine.store.keys.PolicyVerdict;
import io.brine.store.keys.StoredKey;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.store.policy.AuthAttempt;
import io.brine.store.policy.PolicyDecision;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.grant.Grants;
import io.brine.daemon.files.AtomicFiles;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
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
@Command(name = "check", mixinStandardHelpOptions = true, usageHelpAutoWidth = true, sortOptions = false,
        header = "Print which acceptance policy decides about a key, and why (a dry run).",
        description = {
            "Reads master.yaml (-c DIR before 'policy'), builds the acceptance policies the master builds from it"
                    + " and asks them about ID, as the master would for an auth request now: autoreject_file first,"
                    + " then auto_accept, autosign_file, grants, autosign_tokens, autosign_claims, inventory_file"
                    + " and autosign_policy (which runs, and may take up to its timeout). Nothing is changed: no"
                    + " grant or token is spent, no key is stored. Policy files with problems are reported on"
                    + " stderr.",
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

    @Option(names = "--pub", paramLabel = "FILE",
            description = "The minion's public key (PEM). Default: the key stored for ID in the pki dir.")
    Path pub;

    @Option(names = "--claims", paramLabel = "JSON",
            description = "The claims (grains) the minion sends, as a JSON object, e.g."
                    + " '{\"role\":\"web\",\"ipv4\":[\"10.0.0.5\"]}'. Default: none.")
    String claims;

    @Option(names = "--grant", paramLabel = "FILE", description = "The provisioning grant the minion presents.")
    Path grant;

    @Option(names = "--addr", paramLabel = "IP",
            description = "The address the request comes from (inventory_file). Default: unknown.")
    String address;

    @Override
    public Integer call() {
        BrineKey root = policy.root;
        MinionIds.problem(id).ifPresent(problem -> {
            throw UserError.usage(MinionIds.printable(id) + ": " + problem);
        });
        MasterConfig config = KeytoolConfig.master(root.configDirOrDefault().resolve(MasterConfig.FILE_NAME));
        KeytoolConfig.requireLooksLikePkiDir(config.pkiDir());
        try (KeyStore store = FileKeyStore.open(KeyStoreOptions.builder(config.pkiDir()).masterKey(false)
                .createPkiDir(false).pollInterval(Duration.ZERO).build())) {
            KeyListing listing = store.list();
            RSAPublicKey key = key(listing);
            String fingerprint = Fingerprints.of(key);
            AuthAttempt attempt = new AuthAttempt(id, key, fingerprint, claims(), grant(), null,
                    address != null ? address : "unknown", Clock.systemUTC().instant());
            KeyLookup lookup = store.lookup(id, key);
            PrintWriter out = spec.commandLine().getOut();
            out.println(id + " (key " + fingerprint + ")");
            PolicyVerdict verdict = PolicyVerdict.NONE;
            if (lookup == KeyLookup.UNKNOWN || lookup == KeyLookup.PENDING_SAME) {
                try (AcceptancePolicies policies = AcceptancePolicies.fromConfig(config, store, Clock.systemUTC(),
                        null)) {
                    AcceptancePolicies.Explanation explanation = policies.explain(attempt);
                    out.println("Policies asked, in order:");
                    for (PolicyDecision step : explanation.steps()) {
                        out.println("  " + mark(step.verdict()) + " " + step.rule() + ": " + step.reason());
                    }
                    PolicyDecision decision = explanation.decision();
                    verdict = decision.verdict();
                    out.println(verdict == PolicyVerdict.NONE ? "No policy decides: the key waits for an admin."
                            : "Decided by " + decision.rule() + ": " + decision.reason());
                }
            } else {
                out.println("The key store holds this id as " + describe(lookup) + ": policies are not asked.");
            }
            KeyTransitions.Outcome outcome = KeyTransitions.decide(lookup, verdict, new KeyTransitions.Limits(
                    listing.ids(KeyState.PENDING).size(), config.maxPending(), listing.ids(KeyState.ACCEPTED).size(),
                    config.maxMinions(), listing.ids(KeyState.REJECTED).size(),
                    KeyStoreOptions.DEFAULT_MAX_REJECTED));
            out.println("The master would answer " + outcome.answer() + " (" + outcome.reason() + ").");
            out.flush();
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

    private RSAPublicKey key(KeyListing listing) {
        if (pub != null) {
            try {
                return RsaKeys.checkSize(Pem.readPublicKey(new String(AtomicFiles.readSmall(pub, Pem.MAX_PEM_CHARS),
                        StandardCharsets.US_ASCII)));
            } catch (IOException e) {
                throw UserError.usage("--pub " + pub + ": " + BrineKey.describe(e));
            } catch (KeyFormatException e) {
                throw UserError.usage("--pub " + pub + ": " + e.getMessage());
            }
        }
        for (KeyState state : new KeyState[] {KeyState.PENDING, KeyState.ACCEPTED, KeyState.REJECTED,
                KeyState.DENIED}) {
            Optional<StoredKey> stored = listing.keys(state).stream().filter(k -> k.id().equals(id)).findFirst();
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
            return new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION).readValue(claims,
                    new TypeReference<Map<String, Object>>() { });
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
