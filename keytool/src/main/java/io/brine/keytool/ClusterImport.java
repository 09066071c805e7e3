package io.brine.keytool;

import io.brine.cluster.ZkKeyStore;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.MinionKind;
import io.brine.store.keys.SaltMarks;
import io.brine.store.keys.StoredKey;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code brine-key cluster import PKI_DIR}: copies the keys of a filesystem pki dir (brine's, or Salt's: the same
 * layout, SPKI or PKCS#1 PEM) into the cluster, in their states. Only reads the pki dir. Idempotent: a key the
 * cluster already holds in that state is left alone. All or nothing: when any id conflicts (the cluster holds another
 * key or another state for it), a key is held by two ids (here, or here and in the cluster: one key, one id) or any
 * file cannot be read as a key, nothing is imported and every one is listed.
 */
@Command(
        name = "import",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        sortOptions = false,
        header = "Copy the keys of a filesystem pki dir (brine's or Salt's) into the cluster.",
        description = {
            "Reads PKI_DIR's minions/, minions_pre/, minions_rejected/ and minions_denied/ (never writes there) and"
                    + " stores every key in the cluster in the same state, audited with your name. Running it again"
                    + " changes nothing. When an id conflicts with the cluster (another key, or another state), one"
                    + " key is held by two ids (here, or here and in the cluster) or a file is not a usable key,"
                    + " nothing is imported and each is listed: decide with -a/-r/-d on"
                    + " either side, then run it again. Minions keep their keys: copy the master key pair"
                    + " (master.pem, master.pub) of PKI_DIR to every master so that they keep trusting it.",
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:imported, or already there",
            "1:conflicts or unusable files: nothing imported",
            "2:usage or configuration error (no cluster: in master.yaml, ...)",
            "4:cluster unavailable: the ZooKeeper ensemble cannot be reached or has no quorum; nothing imported"
        })
final class ClusterImport implements Callable<Integer> {

    private static final int MAX_KEY_BYTES = 16 * 1024;
    private static final List<KeyState> ORDER =
            List.of(KeyState.ACCEPTED, KeyState.PENDING, KeyState.REJECTED, KeyState.DENIED);

    @ParentCommand
    ClusterCommand cluster;

    @Parameters(paramLabel = "PKI_DIR", description = "The pki dir to import (e.g. /etc/salt/pki/master).")
    Path from;

    @Option(names = "--dry-run", description = "Say what would be imported and what conflicts; change nothing.")
    boolean dryRun;

    /** A key found in the pki dir. */
    record Found(String id, KeyState state, RSAPublicKey key, MinionKind kind) {
        String fingerprint() {
            return Fingerprints.of(key);
        }
    }

    @Override
    public Integer call() {
        BrineKey root = cluster.root;
        KeytoolConfig config = root.config();
        if (config.cluster().isEmpty()) {
            throw UserError.usage("master.yaml has no cluster: section: there is no cluster to import into");
        }
        KeytoolConfig.requireLooksLikePkiDir(from);
        PrintWriter out = cluster.spec.commandLine().getOut();
        PrintWriter err = cluster.spec.commandLine().getErr();
        List<String> problems = new ArrayList<>();
        List<Found> found = read(from.toAbsolutePath().normalize(), problems);

        AuditLog audit = dryRun ? AuditLog.none() : root.openAudit(config);
        problems.addAll(sharedHere(found));
        try (ZkKeyStore store = config.openCluster(audit)) {
            KeyListing listing = store.list();
            Map<String, List<StoredKey>> inCluster = byFingerprint(listing);
            List<Found> toAdd = new ArrayList<>();
            int already = 0;
            for (Found key : found) {
                Optional<String> conflict = conflict(listing, key).or(() -> sharedWithCluster(inCluster, key));
                if (conflict.isPresent()) {
                    problems.add(key.id() + ": " + conflict.get());
                } else if (listing.find(key.id(), key.state()).isPresent()) {
                    already++;
                } else {
                    toAdd.add(key);
                }
            }
            if (!problems.isEmpty()) {
                err.println("brine-key: cluster import refused, nothing imported: " + problems.size()
                        + (problems.size() == 1 ? " problem" : " problems") + " in " + from + ":");
                problems.forEach(p -> err.println("  " + p));
                err.flush();
                return UserError.REFUSED;
            }
            if (dryRun) {
                out.println(toAdd.size() + (toAdd.size() == 1 ? " key" : " keys") + " would be imported, " + already
                        + " already in the cluster; nothing changed (--dry-run).");
                toAdd.forEach(k -> out.println("  " + k.id() + "  " + k.state().label() + "  " + k.fingerprint()));
                out.flush();
                return 0;
            }
            String reason = "imported from " + from.toAbsolutePath().normalize();
            int added = 0;
            List<String> raced = new ArrayList<>();
            for (Found key : toAdd) {
                switch (store.importKey(key.id(), key.state(), key.key(), key.kind(), root.actor(), reason)) {
                    case ADDED -> added++;
                    case UNCHANGED -> already++;
                    case CONFLICT -> raced.add(key.id() + ": changed in the cluster meanwhile; not imported");
                }
            }
            if (!root.quiet()) {
                out.println("Imported " + added + (added == 1 ? " key" : " keys") + " into the cluster (" + already
                        + " already there).");
            }
            raced.forEach(line -> err.println("brine-key: " + line));
            out.flush();
            err.flush();
            return raced.isEmpty() ? 0 : UserError.REFUSED;
        } catch (IOException e) {
            throw new UncheckedIOException("cluster import: " + e.getMessage(), e);
        } finally {
            audit.close();
        }
    }

    /** Why {@code key} cannot go into the cluster as it is, if it cannot. */
    private static Optional<String> conflict(KeyListing listing, Found key) {
        if (key.state() == KeyState.DENIED) {
            return listing.find(key.id(), KeyState.DENIED)
                    .filter(d -> !d.fingerprint().equals(key.fingerprint()))
                    .map(d -> "denied key " + key.fingerprint() + " here, another denied key " + d.fingerprint()
                            + " in the cluster");
        }
        for (KeyState state : List.of(KeyState.ACCEPTED, KeyState.PENDING, KeyState.REJECTED)) {
            Optional<StoredKey> there = listing.find(key.id(), state);
            if (there.isPresent()
                    && (state != key.state() || !there.get().fingerprint().equals(key.fingerprint()))) {
                return Optional.of(key.state().label() + " here (" + key.fingerprint() + "), " + state.label()
                        + " in the cluster (" + there.get().fingerprint() + ")");
            }
        }
        return Optional.empty();
    }

    /** One key, one id: a key the pki dir holds under several ids, one line per key naming them all. */
    static List<String> sharedHere(List<Found> found) {
        Map<String, Map<String, String>> where = new TreeMap<>();
        for (Found key : found) {
            if (key.state() == KeyState.DENIED) {
                continue; // a denied key holds no id (the cluster itself makes {keys/B, denied/A} for one key)
            }
            where.computeIfAbsent(key.fingerprint(), f -> new TreeMap<>())
                    .merge(key.id(), key.state().dirName() + "/" + key.id(), (a, b) -> a + ", " + b);
        }
        List<String> problems = new ArrayList<>();
        where.forEach((fingerprint, ids) -> {
            if (ids.size() > 1) {
                problems.add(String.join(", ", ids.keySet()) + ": the same key (" + fingerprint + ") under "
                        + ids.size() + " ids here (" + String.join(", ", ids.values()) + "); one key, one id: keep"
                        + " it under one id");
            }
        });
        return problems;
    }

    private static Map<String, List<StoredKey>> byFingerprint(KeyListing listing) {
        Map<String, List<StoredKey>> all = new HashMap<>();
        listing.keys()
                .values()
                .forEach(list -> list.forEach(key -> all.computeIfAbsent(key.fingerprint(), f -> new ArrayList<>())
                        .add(key)));
        return all;
    }

    /** One key, one id: {@code key} is in the cluster under another id. */
    private static Optional<String> sharedWithCluster(Map<String, List<StoredKey>> inCluster, Found key) {
        if (key.state() == KeyState.DENIED) {
            return Optional.empty(); // a denied key holds no id
        }
        List<String> others = inCluster.getOrDefault(key.fingerprint(), List.of()).stream()
                .filter(k -> !k.id().equals(key.id()) && k.state() != KeyState.DENIED)
                .map(k -> k.id() + " (" + k.state().label() + ")")
                .distinct()
                .sorted()
                .toList();
        return others.isEmpty()
                ? Optional.empty()
                : Optional.of(key.state().label() + " here ("
                        + key.fingerprint() + "), the same key is in the cluster under " + String.join(", ", others)
                        + "; one key, one id");
    }

    /** The valid keys of {@code pkiDir}; everything else goes to {@code problems}, one line each. */
    static List<Found> read(Path pkiDir, List<String> problems) {
        Map<String, Found> main = new TreeMap<>();
        List<Found> denied = new ArrayList<>();
        for (KeyState state : ORDER) {
            Path dir = pkiDir.resolve(state.dirName());
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            List<Path> files = new ArrayList<>();
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
                entries.forEach(files::add);
            } catch (IOException e) {
                problems.add(dir + ": cannot be read: " + e.getMessage());
                continue;
            }
            files.sort(null);
            for (Path file : files) {
                String id = file.getFileName().toString();
                if (id.startsWith(".")) {
                    continue; // temp files of a writer (brine's .tmp-*, editors')
                }
                Optional<String> idProblem = MinionIds.problem(id);
                String where = state.dirName() + "/" + (idProblem.isPresent() ? MinionIds.printable(id) : id);
                if (idProblem.isPresent()) {
                    problems.add(where + ": not a valid minion id (" + idProblem.get() + ")");
                    continue;
                }
                try {
                    BasicFileAttributes attributes =
                            Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                    if (!attributes.isRegularFile()) {
                        problems.add(where + ": not a regular file" + (attributes.isSymbolicLink() ? " (a link)" : ""));
                        continue;
                    }
                    RSAPublicKey key = Pem.readPublicKey(
                            new String(AtomicFiles.readSmall(file, MAX_KEY_BYTES), StandardCharsets.US_ASCII));
                    RsaKeys.checkSize(key);
                    Found key1 = new Found(
                            id,
                            state,
                            key,
                            state != KeyState.DENIED && new SaltMarks(pkiDir).isMarked(id)
                                    ? MinionKind.SALT
                                    : MinionKind.BRINE);
                    if (state == KeyState.DENIED) {
                        denied.add(key1);
                    } else if (main.containsKey(id)) {
                        problems.add(
                                where + ": the id is " + main.get(id).state().label() + " too");
                    } else {
                        main.put(id, key1);
                    }
                } catch (IOException | KeyFormatException e) {
                    problems.add(where + ": " + e.getMessage());
                }
            }
        }
        List<Found> all = new ArrayList<>(main.values());
        all.addAll(denied);
        return all;
    }
}
