package io.brine.keytool;

import io.brine.cluster.ZkKeyStore;
import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.daemon.config.MasterConfig;
import io.brine.protocol.MinionIds;
import io.brine.protocol.ReservedIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.targeting.Glob;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.BulkDelete;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.IncompleteBatchException;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyScan;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.MasterKeyRotation;
import io.brine.store.keys.MasterKeys;
import io.brine.store.keys.OutcomeUnknownException;
import io.brine.store.keys.PendingRotations;
import io.brine.store.keys.StoredKey;
import io.brine.store.policy.Classifications;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * brine-key's changing actions: accept, reject and delete (shown, confirmed, then applied key by key, each bound to
 * the fingerprint shown), and {@code --rotate}. Every change is audited with the admin's name.
 */
final class ChangeKeys {

    /** What an accept, reject or delete does. */
    enum Change {
        ACCEPT("accepted"),
        REJECT("rejected"),
        DELETE("deleted");

        final String verb;

        Change(String verb) {
            this.verb = verb;
        }
    }

    private final BrineKey command;
    private final Output output;
    private final Terminal terminal;
    private Path classesDir;
    private Path auditFile;

    ChangeKeys(BrineKey command, Output output, Terminal terminal) {
        this.command = command;
        this.output = output;
        this.terminal = terminal;
    }

    /** The keys a confirmed change applies to (no parsed keys: id, state, fingerprint); else its exit code. */
    record Plan(Integer exit, List<StoredKey> keys) {}

    /**
     * Selects the keys matching {@code globs} (all when {@code all}) in the states the change starts from, shows
     * them and asks for confirmation; {@code bound} is the fingerprint {@code --finger} binds it to, or null.
     */
    Plan plan(
            KeyScan.Result scan,
            Change change,
            String argument,
            List<Glob> globs,
            boolean all,
            String bound,
            ReservedIds reservedIds) {
        KeyListing listing = scan.listing();
        Set<KeyState> from = switch (change) {
            case ACCEPT ->
                states(
                        KeyState.PENDING,
                        command.includeRejected || command.includeAll ? KeyState.REJECTED : null,
                        command.includeDenied || command.includeAll ? KeyState.DENIED : null);
            case REJECT ->
                states(
                        KeyState.PENDING,
                        command.includeAccepted || command.includeAll ? KeyState.ACCEPTED : null,
                        command.includeDenied || command.includeAll ? KeyState.DENIED : null);
            case DELETE -> EnumSet.allOf(KeyState.class);
        };
        Map<KeyState, List<StoredKey>> selected = ShowKeys.select(listing, from, globs, all);
        if (selected.isEmpty()) {
            String states = describeStates(from);
            output.err()
                    .println("brine-key: the key glob " + MinionIds.printable(argument) + " does not match any "
                            + (states.isEmpty() ? "" : states + " ") + "key");
            return new Plan(UserError.REFUSED, null);
        }
        List<StoredKey> keys = selected.values().stream()
                .flatMap(List::stream)
                .map(key -> new StoredKey(key.id(), key.state(), null, key.fingerprint()))
                .toList();
        if (bound != null) {
            for (StoredKey key : keys) {
                if (!key.fingerprint().equals(bound)) {
                    output.err()
                            .println("brine-key: " + key.id() + ": the "
                                    + key.state().label() + " key has fingerprint " + key.fingerprint() + ", not "
                                    + bound + "; nothing changed");
                    return new Plan(UserError.REFUSED, null);
                }
            }
        }
        if (change == Change.ACCEPT) {
            for (StoredKey key : keys) {
                Optional<String> reserved = reservedIds.problem(key.id());
                if (reserved.isPresent()) {
                    output.err()
                            .println("brine-key: " + key.id() + ": " + reserved.get() + "; its minion would be"
                                    + " refused at auth. Nothing changed; delete the key with brine-key -d "
                                    + key.id());
                    return new Plan(UserError.REFUSED, null);
                }
            }
        }
        if (change == Change.ACCEPT && !command.allowSharedKey) {
            for (StoredKey key : keys) {
                Optional<String> shared = scan.shared().sameKeyAs(key.fingerprint(), key.id());
                if (shared.isPresent()) {
                    output.err()
                            .println("brine-key: " + key.id() + ": " + shared.get()
                                    + " (one key, one id); nothing changed. To accept it anyway: --allow-shared-key");
                    return new Plan(UserError.REFUSED, null);
                }
            }
        }
        PrintWriter info = output.text() ? output.out() : output.err();
        if (!command.quiet()) {
            info.println("The following keys are going to be " + change.verb + ":");
            for (KeyState state : Output.TEXT_HEADINGS.keySet()) {
                if (selected.containsKey(state)) {
                    info.println(output.colour(state, Output.TEXT_HEADINGS.get(state)));
                    for (StoredKey key : selected.get(state)) {
                        info.println(output.colour(state, key.id()) + "  " + key.fingerprint());
                    }
                }
            }
            info.flush();
        }
        if (!command.yes && !confirm(change != Change.DELETE, change.verb)) {
            return new Plan(UserError.REFUSED, null);
        }
        return new Plan(null, keys);
    }

    /** The key rotations waiting for an admin: id to the new key's fingerprint (none with a cluster). */
    static Map<String, String> waitingRotations(KeytoolConfig config, KeyListing listing) {
        if (config.cluster().isPresent()) {
            return Map.of();
        }
        Map<String, String> accepted = new LinkedHashMap<>();
        for (StoredKey key : listing.keys(KeyState.ACCEPTED)) {
            accepted.put(key.id(), key.fingerprint());
        }
        try {
            return PendingRotations.list(config.pkiDir(), accepted);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot list " + config.pkiDir().resolve("minions_rotating") + ": " + e.getMessage(), e);
        }
    }

    /**
     * {@code -a ID} or {@code -r ID} on an id whose key rotation waits for an admin (PROTOCOL.md 6.3): done only
     * when bound to the new key's fingerprint ({@code -f FP}), which an admin has seen in {@code -L}. Null when no
     * rotation of {@code argument} waits (the ordinary accept or reject goes on); else the exit code.
     */
    Integer onWaitingRotation(KeytoolConfig config, Change change, String argument, String bound) {
        if (config.cluster().isPresent()
                || !MinionIds.isValid(argument)
                || !Files.exists(
                        config.pkiDir().resolve("minions_rotating").resolve(argument), LinkOption.NOFOLLOW_LINKS)) {
            return null; // no rotation waits: no scan of every key for it
        }
        String waiting = waitingRotations(config, config.scan().listing()).get(argument);
        if (waiting == null) {
            return null;
        }
        if (bound == null) {
            output.err()
                    .println("brine-key: " + argument + ": a key rotation waits with the new key " + waiting
                            + "; accept or reject it bound to that fingerprint: brine-key "
                            + (change == Change.ACCEPT ? "-a" : "-r") + " " + argument + " -f " + waiting
                            + ". Nothing changed");
            return UserError.REFUSED;
        }
        PrintWriter info = output.text() ? output.out() : output.err();
        if (!command.quiet()) {
            info.println("The key rotation of " + argument + " to the new key " + waiting + " is going to be "
                    + change.verb + ".");
            info.flush();
        }
        if (!command.yes && !confirm(true, change.verb)) {
            return UserError.REFUSED;
        }
        AuditLog audit = command.openAudit(config);
        try (KeyStore store = command.openStore(config, audit)) {
            AdminResult result = change == Change.ACCEPT
                    ? store.acceptRotation(argument, bound, command.actor())
                    : store.rejectRotation(argument, bound, command.actor());
            if (!result.done() && result.status() != AdminResult.Status.UNCHANGED) {
                output.err().println("brine-key: " + result.message());
                return UserError.REFUSED;
            }
            if (!command.quiet()) {
                info.println(result.message() + ".");
                info.flush();
            }
            List<String> unaudited = store.unauditedChanges();
            if (!unaudited.isEmpty()) {
                output.err()
                        .println("brine-key: the change of " + String.join(", ", unaudited) + " is made but not"
                                + " in the audit log");
                return UserError.REFUSED;
            }
            return 0;
        } finally {
            audit.close();
        }
    }

    /** Applies a confirmed plan with the audited store. */
    int apply(KeytoolConfig config, Change change, List<StoredKey> keys, String bound) {
        // Only now, with something to change, is the audit log opened (and cachedir created).
        AuditLog audit = command.openAudit(config);
        classesDir = config.cachedir().resolve(Classifications.DIR_NAME);
        auditFile = config.auditLog();
        try {
            if (change == Change.DELETE && config.cluster().isEmpty()) {
                // Under the lock throughout, without the store's snapshot of every key: a running master sees
                // the whole deletion at once and rotates the publish key once.
                try (BulkDelete bulk = config.openBulkDelete(audit)) {
                    return apply(keys, change, bound, new Changer() {
                        @Override
                        public AdminResult change(StoredKey key, String expected, String actor) {
                            return bulk.delete(key.id(), key.state(), expected, actor);
                        }

                        @Override
                        public List<String> finish() {
                            bulk.close(); // forces the last batch and its audit lines to disk
                            return bulk.unaudited();
                        }
                    });
                }
            }
            try (KeyStore store = command.openStore(config, audit)) {
                return apply(keys, change, bound, new Changer() {
                    @Override
                    public AdminResult change(StoredKey key, String expected, String actor) {
                        return switch (change) {
                            case ACCEPT -> store.accept(key.id(), key.state(), expected, actor);
                            case REJECT -> store.reject(key.id(), key.state(), expected, actor);
                            case DELETE -> store.delete(key.id(), key.state(), expected, actor); // a cluster's
                        };
                    }

                    @Override
                    public List<String> finish() {
                        return store.unauditedChanges();
                    }
                });
            }
        } finally {
            audit.close();
        }
    }

    /** Makes one change to one key, with the store or with a bulk delete. */
    private interface Changer {
        AdminResult change(StoredKey key, String expected, String actor);

        /** Ends the changes; the ids changed but not (surely) audited. */
        List<String> finish();
    }

    private int apply(List<StoredKey> keys, Change change, String bound, Changer changer) {
        String actor = command.actor();
        List<String> done = new ArrayList<>();
        Map<String, String> refused = new LinkedHashMap<>();
        // On a terminal, a long run shows a counter on stderr instead of a line per key (the keys were listed
        // before the confirmation); on a pipe every key keeps its line, for scripts.
        Progress progress = terminal.interactive() && keys.size() >= Progress.MIN_KEYS
                ? new Progress(output.err(), keys.size())
                : null;
        boolean eachLine = !command.quiet() && output.text() && progress == null;
        for (StoredKey key : keys) {
            String expected = bound != null ? bound : key.fingerprint();
            AdminResult result = changer.change(key, expected, actor);
            switch (result.status()) {
                case DONE -> {
                    done.add(key.id());
                    if (change != Change.ACCEPT && key.state() == KeyState.ACCEPTED) {
                        Classifications.remove(classesDir, key.id(), key.fingerprint());
                    }
                    if (eachLine) {
                        output.out()
                                .println("Key for minion " + key.id() + " " + change.verb
                                        + (key.state() == KeyState.DENIED ? " (its denied key)" : "") + ".");
                    }
                }
                case UNCHANGED -> {
                    if (eachLine) {
                        output.out().println(result.message() + ".");
                    }
                }
                case NOT_FOUND, REFUSED -> {
                    refused.put(key.id(), result.message());
                    if (progress != null) {
                        progress.clear();
                    }
                    output.err().println("brine-key: " + result.message());
                }
            }
            if (progress != null) {
                progress.step();
            }
        }
        if (progress != null) {
            progress.finish();
            if (!command.quiet() && output.text()) {
                output.out()
                        .println(Progress.count(done.size()) + (done.size() == 1 ? " key " : " keys ") + change.verb
                                + ".");
            }
        }
        List<String> unaudited = changer.finish();
        if (!unaudited.isEmpty()) {
            output.err()
                    .println("brine-key: " + change.verb + " but NOT written to the audit log " + auditFile + ": "
                            + String.join(", ", unaudited));
        }
        output.out().flush();
        output.err().flush();
        if (!output.text()) {
            Map<String, Object> document = new LinkedHashMap<>();
            document.put(change.verb, done);
            document.put("refused", refused);
            if (!unaudited.isEmpty()) {
                document.put("unaudited", unaudited);
            }
            output.printStructured(document);
        }
        return refused.isEmpty() && unaudited.isEmpty() ? 0 : UserError.REFUSED;
    }

    /**
     * {@code --rotate-keys GLOB} (PROTOCOL.md 6.3): an ask for each matching accepted brine minion, recorded in the
     * store; the master, in whatever process, asks each at its next heartbeat. Refused: {@code key_rotation: deny}, a
     * glob that matches no key, and per id a key that is not accepted or is a Salt minion's (named on stderr; the
     * others are still asked).
     */
    int askRotation(KeytoolConfig config, MasterConfig settings, String argument, List<Glob> globs) {
        if (settings.keyRotation() == KeyRotationPolicy.DENY) {
            throw new UserError(
                    UserError.REFUSED,
                    "--rotate-keys: master.yaml sets key_rotation: deny, so the master"
                            + " refuses every key rotation; nothing was asked. Set key_rotation: allow (or pending) first");
        }
        KeyScan.Result scan = config.scan();
        Map<KeyState, List<StoredKey>> selected =
                ShowKeys.select(scan.listing(), EnumSet.allOf(KeyState.class), globs, false);
        if (selected.isEmpty()) {
            output.err()
                    .println("brine-key: the key glob " + MinionIds.printable(argument) + " does not match any"
                            + " key");
            output.err().flush();
            return UserError.REFUSED;
        }
        List<String> ids = selected.values().stream()
                .flatMap(List::stream)
                .map(StoredKey::id)
                .distinct()
                .sorted()
                .toList();
        AuditLog audit = command.openAudit(config);
        List<AdminResult> results;
        List<String> unaudited;
        IncompleteBatchException incomplete = null;
        try (KeyStore store = command.openStore(config, audit)) {
            try {
                results = store.askRotation(ids, command.actor());
            } catch (UncheckedIOException e) {
                if (!(e.getCause() instanceof IncompleteBatchException stopped)) {
                    throw e;
                }
                incomplete = stopped;
                results = stopped.results();
            }
            unaudited = store.unauditedChanges();
        } catch (UncheckedIOException e) {
            if (e.getCause() instanceof OutcomeUnknownException unknown) {
                throw new UserError(
                        UserError.REFUSED,
                        "--rotate-keys: the ask may or may not have been recorded: " + unknown.getMessage()
                                + "; brine-key -L shows which minions are asked (asking again is harmless)");
            }
            throw e;
        } finally {
            audit.close();
        }
        List<String> asked = new ArrayList<>();
        List<String> already = new ArrayList<>();
        Map<String, String> refused = new LinkedHashMap<>();
        for (AdminResult result : results) {
            switch (result.status()) {
                case DONE -> asked.add(result.id());
                case UNCHANGED -> already.add(result.id());
                case NOT_FOUND, REFUSED -> refused.put(result.id(), result.message());
            }
        }
        List<String> unknown = incomplete == null ? List.of() : incomplete.unknown();
        List<String> notAsked = incomplete == null ? List.of() : incomplete.notAsked();
        refused.values().forEach(message -> output.err().println("brine-key: " + message));
        unaudited.forEach(id -> output.err().println("brine-key: " + id + ": asked, but not written to the audit log"));
        if (incomplete != null) {
            output.err().println("brine-key: --rotate-keys " + incomplete.getMessage());
            if (!unknown.isEmpty()) {
                output.err()
                        .println("brine-key: may or may not have been asked (brine-key -L shows which were; asking"
                                + " again is harmless): " + String.join(", ", unknown));
            }
            if (!notAsked.isEmpty()) {
                output.err()
                        .println("brine-key: NOT asked (ask them again once the cause is fixed): "
                                + String.join(", ", notAsked));
            }
        }
        output.err().flush();
        if (output.text()) {
            if (!command.quiet()) {
                for (AdminResult result : results) {
                    if (result.status() == AdminResult.Status.DONE || result.status() == AdminResult.Status.UNCHANGED) {
                        output.out().println(result.message());
                    }
                }
                output.out()
                        .println(asked.size() + " asked, " + already.size() + " already asked, " + refused.size()
                                + " refused"
                                + (incomplete == null
                                        ? ""
                                        : ", " + unknown.size() + " may or may not be asked, " + notAsked.size()
                                                + " not asked")
                                + "; "
                                + (config.cluster().isPresent()
                                        ? "each master of the cluster asks its minions"
                                        : "a running master asks each minion")
                                + " at its next heartbeat (brine-key -L --long shows the progress)");
                output.out().flush();
            }
        } else {
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("asked", asked);
            document.put("already_asked", already);
            document.put("refused", refused);
            if (incomplete != null) {
                document.put("unknown", unknown);
                document.put("not_asked", notAsked);
                document.put("stopped", incomplete.getMessage());
            }
            if (!unaudited.isEmpty()) {
                document.put("unaudited", unaudited);
            }
            output.printStructured(document);
        }
        return refused.isEmpty() && unaudited.isEmpty() && incomplete == null ? 0 : UserError.REFUSED;
    }

    /** Bumps the rotation request counter in the pki dir; the master, in whatever process, acts on it. */
    int requestRotation(KeytoolConfig config) {
        AuditLog audit = command.openAudit(config);
        try (KeyStore store = command.openStore(config, audit)) {
            long request = store.requestRotation(command.actor());
            if (output.text()) {
                if (!command.quiet()) {
                    output.out()
                            .println("Publish key rotation requested (request " + request + "); a running"
                                    + " master rotates within a second.");
                    output.out().flush();
                }
                return 0;
            }
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("rotation_requested", request);
            return output.printStructured(document);
        } finally {
            audit.close();
        }
    }

    /**
     * {@code --rotate-master-key} (PROTOCOL.md 6.4): a new master key pair and its succession record, under the store
     * lock; for a master of a cluster, in ZooKeeper, starting from this host's {@code master.pem}, where every master
     * switches at once.
     */
    int rotateMasterKey(KeytoolConfig config, MasterConfig settings, Path masterSignKey) {
        // master_sign_key_name in the pki dir brine-key works on (--pki-dir may name another than master.yaml's).
        Optional<Path> signPub =
                settings.masterSignPub().map(pub -> config.pkiDir().resolve(pub.getFileName()));
        if (masterSignKey == null && signPub.isPresent()) {
            throw UserError.usage("--rotate-master-key: master_sign_pubkey is on (" + signPub.get()
                    + "): give the offline signing key with --master-sign-key FILE, or sign the rotation where that key"
                    + " is kept in two steps (--rotate-master-key --prepare, then --signature FILE), or minions that"
                    + " verify it would refuse the new key; nothing changed");
        }
        Optional<PrivateKey> signingKey;
        try {
            signingKey = masterSignKey == null
                    ? Optional.empty()
                    : Optional.of(MasterKeyRotation.readSigningKey(masterSignKey, config.pkiDir(), signPub));
        } catch (KeyStoreException e) {
            throw UserError.usage("--master-sign-key: " + e.getMessage() + "; nothing changed");
        } catch (IOException e) {
            throw UserError.usage("--master-sign-key: cannot read " + masterSignKey + ": " + BrineKey.describe(e)
                    + "; nothing changed");
        }
        KeyPair installed = null;
        if (config.cluster().isPresent()) {
            try {
                installed = MasterKeys.loadInstalled(config.pkiDir());
            } catch (KeyStoreException e) {
                throw UserError.usage("--rotate-master-key: " + e.getMessage() + "; nothing changed");
            } catch (IOException e) {
                throw UserError.usage("--rotate-master-key: cannot read this master's key in " + config.pkiDir()
                        + " (" + BrineKey.describe(e) + "): the rotation is signed with it; run brine-key as the"
                        + " master's user; nothing changed");
            }
        }
        AuditLog audit = command.openAudit(config);
        try (KeyStore store = command.openStore(config, audit)) {
            MasterKeyRotation.Rotated rotated = store instanceof ZkKeyStore cluster
                    ? cluster.rotateMasterKey(
                            installed,
                            settings.keysize(),
                            settings.masterKeyGrace(),
                            settings.masterKeyChain(),
                            signingKey,
                            command.actor(),
                            Clock.systemUTC())
                    : ((FileKeyStore) store)
                            .rotateMasterKey(
                                    settings.keysize(),
                                    settings.masterKeyGrace(),
                                    settings.masterKeyChain(),
                                    signingKey,
                                    Clock.systemUTC());
            return printRotated(output, command.quiet(), rotated, signingKey.isPresent(), installed != null);
        } catch (KeyStoreException e) {
            throw UserError.usage(e.getMessage() + (installed != null ? "; nothing changed" : ""));
        } catch (OutcomeUnknownException e) {
            throw rotationOutcomeUnknown(e);
        } catch (IOException e) {
            throw new UserError(
                    UserError.REFUSED,
                    "cannot rotate the master key in " + (installed != null ? "the cluster" : config.pkiDir()) + ": "
                            + BrineKey.describe(e) + "; the previous key stays in"
                            + " force");
        } finally {
            audit.close();
        }
    }

    /** A master key rotation whose commit ZooKeeper may or may not have made: what the admin reads, and how to tell. */
    static UserError rotationOutcomeUnknown(OutcomeUnknownException e) {
        return new UserError(
                UserError.REFUSED,
                "the master key rotation may or may not have been made: " + e.getMessage()
                        + "; brine-key -F shows the master key in force (the new one, if it was)");
    }

    /**
     * What a rotation did, for the admin: a line, or {@code --out json|yaml}; {@code inCluster}: written to ZooKeeper.
     */
    static int printRotated(
            Output output, boolean quiet, MasterKeyRotation.Rotated rotated, boolean signed, boolean inCluster) {
        String previous = Fingerprints.of(rotated.previous());
        String next = Fingerprints.of(rotated.next());
        Instant graceUntil = Instant.ofEpochMilli(rotated.record().graceUntilMs());
        if (output.text()) {
            if (!quiet) {
                output.out()
                        .println("Master key rotated: " + previous + " -> " + next
                                + (!signed
                                        ? ""
                                        : inCluster
                                                ? ", signed by the master signing key too (and Salt's pub_sig of the new key kept"
                                                        + " in ZooKeeper for every master)"
                                                : ", signed by the master signing key too (and Salt's pub_sig of the new key written)")
                                + "."
                                + (inCluster
                                        ? " Every running master of the cluster takes it within a second"
                                        : " A running master takes it within a second")
                                + " and sends it to its minions; the"
                                + " previous key signs publications until " + graceUntil + " (master_key_grace).");
                output.out().flush();
            }
            return 0;
        }
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("previous", previous);
        document.put("next", next);
        document.put("grace_until", graceUntil.toString());
        document.put("signing_key_signed", signed);
        return output.printStructured(document);
    }

    /** Asks on the terminal (false without one, said on stderr); {@code verb}: what nothing was ("moved"). */
    boolean confirm(boolean defaultYes, String verb) {
        if (!terminal.interactive()) {
            output.err()
                    .println("brine-key: no terminal to confirm on and no -y: nothing " + verb + ", nothing changed");
            return false;
        }
        String answer = terminal.readLine(defaultYes ? "Proceed? [n/Y] " : "Proceed? [N/y] ");
        boolean proceed = answer != null
                && (answer.isBlank()
                        ? defaultYes
                        : answer.strip().toLowerCase(Locale.ROOT).startsWith("y"));
        if (!proceed) {
            output.err().println("brine-key: nothing changed");
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
        return words.size() == 1
                ? words.get(0)
                : String.join(", ", words.subList(0, words.size() - 1)) + " or " + words.get(words.size() - 1);
    }
}
