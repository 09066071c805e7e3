package io.brine.keytool;

import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.targeting.Glob;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyScan;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.MasterKeys;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.RotationAsks;
import io.brine.store.keys.SaltMarks;
import io.brine.store.keys.SharedKeys;
import io.brine.store.keys.StoredKey;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** brine-key's reading actions: {@code -L}/{@code -l} (ids per state), {@code -p}/{@code -P} and {@code -f}/{@code -F}. */
final class ShowKeys {

    private final Output output;

    ShowKeys(Output output) {
        this.output = output;
    }

    /** "  (same key as web1)" for a key also stored under other ids, else "". */
    static String sameKeyMark(SharedKeys shared, StoredKey key) {
        return shared.sameKeyAs(key.fingerprint(), key.id())
                .map(mark -> "  (" + mark + ")")
                .orElse("");
    }

    /** The master's public key as salt-key names it among its local keys. */
    static final String MASTER_PUB = "master.pub";

    /** How a key rotation waiting for an admin is marked under the unaccepted keys, before the new key's fingerprint. */
    static final String ROTATION_MARK = "  (rotation of its accepted key, new key ";

    /** The structured listing's name for the rotations waiting for an admin (id to the new key's fingerprint). */
    static final String ROTATIONS = "minions_rotating";

    /** The structured listing's name for the key rotations admins asked for (brine-key --rotate-keys). */
    static final String ASKS = "minions_rotation_asked";

    /**
     * How an accepted key an admin asked to rotate is marked: asked while it is still the key asked about, rotated once
     * its minion replaced it (the key listed is then the new one).
     */
    static String askMark(RotationAsks.Ask ask, StoredKey key) {
        if (ask == null) {
            return "";
        }
        String asked = ask.askedAt().truncatedTo(ChronoUnit.SECONDS).toString();
        return ask.outstandingFor(key.fingerprint())
                ? "  (rotation asked " + asked + ", not yet rotated)"
                : "  (rotated, asked " + asked + ")";
    }

    /** How a stock Salt minion's id is marked in the text listing (issue 15). */
    static final String SALT_MARK = "  (salt)";

    /**
     * The ids in {@code states}, in salt-key's layout (a key also stored under other ids marked, and a Salt minion's:
     * its {@linkplain StoredKey#kind() kind}, as the store holds it); structured, the Salt minions listed also under
     * {@code salt_minions}.
     */
    int list(KeyScan.Result scan, Set<KeyState> states, Map<String, String> rotations, Optional<KeyTimes> times) {
        return list(scan, states, rotations, Map.of(), times);
    }

    /**
     * {@link #list(KeyScan.Result, Set, Map, Optional)} with the key rotations admins asked for ({@code brine-key
     * --rotate-keys}): each accepted key asked marked {@code (rotation asked TIME)} until its minion rotates it, then
     * {@code (rotated, asked TIME)}; structured, under {@value #ASKS} while there are any.
     */
    int list(
            KeyScan.Result scan,
            Set<KeyState> states,
            Map<String, String> rotations,
            Map<String, RotationAsks.Ask> asks,
            Optional<KeyTimes> times) {
        KeyListing listing = scan.listing();
        if (output.text()) {
            PrintWriter writer = output.out();
            for (KeyState state : Output.TEXT_HEADINGS.keySet()) {
                if (states.contains(state)) {
                    writer.println(output.colour(state, Output.TEXT_HEADINGS.get(state)));
                    for (StoredKey key : listing.keys(state)) {
                        writer.println(output.colour(state, key.id())
                                + sameKeyMark(scan.shared(), key)
                                + (key.kind() == MinionKind.SALT ? SALT_MARK : "")
                                + (state == KeyState.ACCEPTED ? askMark(asks.get(key.id()), key) : "")
                                + times.map(t -> "  " + key.fingerprint() + "  " + t.describe(key))
                                        .orElse(""));
                    }
                    if (state == KeyState.PENDING) {
                        rotations.forEach((id, fingerprint) ->
                                writer.println(output.colour(state, id) + ROTATION_MARK + fingerprint + ")"));
                    }
                }
            }
            writer.flush();
            return 0;
        }
        Map<String, Object> document = new LinkedHashMap<>();
        List<String> salt = new ArrayList<>();
        for (KeyState state : Output.STRUCTURED_ORDER) {
            if (states.contains(state)) {
                document.put(
                        state.dirName(),
                        times.isEmpty()
                                ? listing.ids(state)
                                : listing.keys(state).stream()
                                        .map(key -> times.get().document(key))
                                        .toList());
                listing.keys(state).stream()
                        .filter(key -> key.kind() == MinionKind.SALT)
                        .map(StoredKey::id)
                        .forEach(salt::add);
            }
        }
        if (states.contains(KeyState.PENDING) && !rotations.isEmpty()) { // only while some wait: the shape is kept
            document.put(ROTATIONS, rotations);
        }
        if (states.contains(KeyState.ACCEPTED)) {
            Map<String, Object> asked = new LinkedHashMap<>();
            for (StoredKey key : listing.keys(KeyState.ACCEPTED)) {
                RotationAsks.Ask ask = asks.get(key.id());
                if (ask != null) {
                    Map<String, Object> entry = new LinkedHashMap<>();
                    entry.put("status", ask.outstandingFor(key.fingerprint()) ? "asked" : "rotated");
                    entry.put(
                            "asked",
                            ask.askedAt().truncatedTo(ChronoUnit.SECONDS).toString());
                    entry.put("asked_fingerprint", ask.fingerprint());
                    entry.put("fingerprint", key.fingerprint());
                    asked.put(key.id(), entry);
                }
            }
            if (!asked.isEmpty()) { // only while some were asked: the shape is kept
                document.put(ASKS, asked);
            }
        }
        if (!salt.isEmpty()) { // only for a fleet with Salt minions: brine's own listing keeps its shape
            document.put(SaltMarks.DIRECTORY, salt.stream().distinct().sorted().toList());
        }
        return output.printStructured(document);
    }

    /**
     * {@code --long}: when each key was filed in its state (its file's modification time: written when the key was
     * filed, accepted or rotated, and moved with it) and when its id last rotated its key ({@code
     * minions_retired/ID}'s, written at each rotation), as of {@code now}; null {@code pkiDir}: unknown (a cluster).
     */
    record KeyTimes(Path pkiDir, Instant now) {

        Optional<Instant> since(StoredKey key) {
            return modified(pkiDir == null ? null : pkiDir.resolve(key.state().dirName()), key.id());
        }

        Optional<Instant> lastRotation(StoredKey key) {
            return modified(pkiDir == null ? null : pkiDir.resolve("minions_retired"), key.id());
        }

        private static Optional<Instant> modified(Path dir, String id) {
            if (dir == null) {
                return Optional.empty();
            }
            try {
                return Optional.of(
                        Files.getLastModifiedTime(MinionIds.resolveInside(dir, id), LinkOption.NOFOLLOW_LINKS)
                                .toInstant()
                                .truncatedTo(ChronoUnit.SECONDS));
            } catch (IOException e) {
                return Optional.empty();
            }
        }

        /** "since 2026-11-28T22:00:00Z (3d 4h)  last rotation never". */
        String describe(StoredKey key) {
            return "since "
                    + since(key)
                            .map(t -> t + " (" + age(Duration.between(t, now)) + ")")
                            .orElse("unknown")
                    + "  last rotation "
                    + lastRotation(key).map(Instant::toString).orElse(pkiDir == null ? "unknown" : "never");
        }

        Map<String, Object> document(StoredKey key) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("id", key.id());
            entry.put("fingerprint", key.fingerprint());
            Optional<Instant> since = since(key);
            entry.put("since", since.map(Instant::toString).orElse(null));
            entry.put(
                    "age_seconds",
                    since.map(t -> Math.max(0, Duration.between(t, now).toSeconds()))
                            .orElse(null));
            entry.put("last_rotation", lastRotation(key).map(Instant::toString).orElse(null));
            return entry;
        }

        static String age(Duration age) {
            long seconds = Math.max(0, age.toSeconds());
            long days = seconds / 86_400;
            long hours = seconds % 86_400 / 3_600;
            long minutes = seconds % 3_600 / 60;
            return days > 0 ? days + "d " + hours + "h" : hours > 0 ? hours + "h " + minutes + "m" : minutes + "m";
        }
    }

    /**
     * The total of a listing of {@code states}, for standard error when the listing goes to a pipe (where nobody
     * counts lines by eye): "6 keys: 1 accepted, 1 denied, 3 unaccepted, 1 rejected", in the listing's order.
     */
    static String total(KeyListing listing, Set<KeyState> states) {
        List<String> parts = new ArrayList<>();
        int total = 0;
        for (Map.Entry<KeyState, String> heading : Output.TEXT_HEADINGS.entrySet()) {
            if (states.contains(heading.getKey())) {
                int count = listing.keys(heading.getKey()).size();
                total += count;
                parts.add(count + " " + heading.getValue().split(" ")[0].toLowerCase(Locale.ROOT));
            }
        }
        return "brine-key: " + total + (total == 1 ? " key: " : " keys: ") + String.join(", ", parts);
    }

    /**
     * The public keys ({@code fingerprints} false) or fingerprints of the keys matching {@code globs} (all when
     * {@code all}); fingerprints of all keys, or of globs matching {@code master.pub} (salt-key's "Local Keys":
     * {@code -f master.pub}), also master.pub's.
     */
    int show(
            KeytoolConfig config,
            KeyScan.Result scan,
            boolean fingerprints,
            String argument,
            List<Glob> globs,
            boolean all) {
        KeyListing listing = scan.listing();
        Map<KeyState, List<StoredKey>> matched = select(listing, EnumSet.allOf(KeyState.class), globs, all);
        Map<String, String> local = new LinkedHashMap<>();
        if (fingerprints && (all || globs.stream().anyMatch(glob -> glob.matches(MASTER_PUB)))) {
            masterPublicKey(config).ifPresent(fp -> local.put(MASTER_PUB, fp));
        }
        if (matched.isEmpty() && local.isEmpty()) {
            output.err()
                    .println("brine-key: the key glob " + MinionIds.printable(argument) + " does not match any key");
            return UserError.REFUSED;
        }
        if (output.text()) {
            PrintWriter writer = output.out();
            SharedKeys shared = scan.shared();
            if (!local.isEmpty()) {
                writer.println("Local Keys:");
                local.forEach((name, fp) -> writer.println(name + ":  " + fp));
            }
            for (KeyState state : Output.TEXT_HEADINGS.keySet()) {
                List<StoredKey> keys = matched.get(state);
                if (keys == null) {
                    continue;
                }
                writer.println(output.colour(state, Output.TEXT_HEADINGS.get(state)));
                for (StoredKey key : keys) {
                    String value =
                            fingerprints ? key.fingerprint() : pem(config, key).stripTrailing();
                    writer.println(output.colour(state, key.id()) + ":  " + value + sameKeyMark(shared, key));
                }
            }
            writer.flush();
            return 0;
        }
        Map<String, Object> document = new LinkedHashMap<>();
        if (!local.isEmpty()) {
            document.put("local", local);
        }
        for (KeyState state : Output.STRUCTURED_ORDER) {
            List<StoredKey> keys = matched.get(state);
            if (keys != null) {
                Map<String, String> values = new LinkedHashMap<>();
                for (StoredKey key : keys) {
                    values.put(key.id(), fingerprints ? key.fingerprint() : pem(config, key));
                }
                document.put(state.dirName(), values);
            }
        }
        return output.printStructured(document);
    }

    /**
     * The PEM of {@code key}: a scan of a pki dir holds no parsed key, so its file is read now (the key printed is
     * the one it holds now; "(no longer a valid key)" when it changed since the scan).
     */
    private static String pem(KeytoolConfig config, StoredKey key) {
        if (key.key() != null) {
            return Pem.publicKeySpki(key.key());
        }
        try {
            return KeyScan.readKey(config.pkiDir(), key)
                    .map(Pem::publicKeySpki)
                    .orElse("(gone or no longer a valid key since it was listed)\n");
        } catch (IOException e) {
            return "(cannot be read: " + BrineKey.describe(e) + ")\n";
        }
    }

    /** master.pub's fingerprint: a cluster's through its key store, a pki dir's from the file (no store opened). */
    private Optional<String> masterPublicKey(KeytoolConfig config) {
        try {
            if (config.cluster().isEmpty()) {
                return MasterKeys.readPublicIn(config.pkiDir()).map(Fingerprints::of);
            }
            try (KeyStore store = config.openStore(AuditLog.none())) {
                return store.masterPublicKey().map(Fingerprints::of);
            }
        } catch (IOException | KeyStoreException e) {
            output.err().println("brine-key: warning: cannot read master.pub: " + e.getMessage());
            return Optional.empty();
        }
    }

    /** The keys in {@code states} whose id matches one of {@code globs} (every key when {@code all}), by state. */
    static Map<KeyState, List<StoredKey>> select(
            KeyListing listing, Set<KeyState> states, List<Glob> globs, boolean all) {
        Map<KeyState, List<StoredKey>> selected = new LinkedHashMap<>();
        for (KeyState state : states) {
            for (StoredKey key : listing.keys(state)) {
                if (all || globs.stream().anyMatch(glob -> glob.matches(key.id()))) {
                    selected.computeIfAbsent(state, s -> new ArrayList<>()).add(key);
                }
            }
        }
        return selected;
    }
}
