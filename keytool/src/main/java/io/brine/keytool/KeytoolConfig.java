package io.brine.keytool;

import io.brine.cluster.ClusterStores;
import io.brine.cluster.ClusterUnavailableException;
import io.brine.cluster.ZkKeyStore;
import io.brine.daemon.config.ClusterConfig;
import io.brine.daemon.config.ConfigException;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.files.WritableFile;
import io.brine.protocol.ReservedIds;
import io.brine.store.audit.AuditLog;
import io.brine.store.keys.BulkDelete;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyScan;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.KeyStoreOptions;
import io.brine.store.keys.RotationAsks;
import io.brine.store.keys.SharedKeys;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.zookeeper.KeeperException;

/**
 * Where brine-key works: {@code pki_dir}, {@code cachedir} and {@code audit_log} of the master's {@code master.yaml},
 * read with the master's own strict reader (an unknown key or a bad value is the error {@code brine-master
 * --check-config} reports), unless {@code --pki-dir} and {@code --cachedir} say it all.
 *
 * @param pkiDir            the pki dir
 * @param cachedir          where the audit log goes
 * @param cachedirFromUser  true when the cachedir or audit log was given (option or file) rather than defaulted:
 *                          then an audit log that cannot be written is an error, not a warning
 * @param auditLog          the audit log: {@code audit_log} of the file, else {@code audit.log} in the cachedir
 * @param cluster           the master.yaml when it has a {@code cluster:} section: the keys are the cluster's, in
 *                          ZooKeeper (the pki dir keeps {@code master.pub})
 * @param reserved          {@code reserved_ids} of the master.yaml (its default without one): listed with a warning,
 *                          never accepted
 */
record KeytoolConfig(
        Path pkiDir,
        Path cachedir,
        boolean cachedirFromUser,
        Path auditLog,
        Optional<MasterConfig> cluster,
        ReservedIds reserved) {

    /** Where brine-key looks when not told: the config dir, and the defaults of pki_dir and cachedir. */
    record Defaults(Path configDir, Path pkiDir, Path cachedir) {
        static final Defaults SYSTEM = new Defaults(
                Path.of("/etc/brine"), Path.of("/etc/brine/pki/master"), Path.of("/var/cache/brine/master"));
    }

    /**
     * @param configDir        {@code -c DIR}, or null for the default (where a missing file is not an error)
     * @param pkiDirOption     {@code --pki-dir}, or null
     * @param cachedirOption   {@code --cachedir}, or null
     * @throws UserError (exit 2) naming every problem of the file, with its line, when it is refused
     */
    static KeytoolConfig resolve(Path configDir, Defaults defaults, Path pkiDirOption, Path cachedirOption) {
        return resolve(configDir, defaults, pkiDirOption, cachedirOption, false);
    }

    /**
     * As {@link #resolve}, but the master.yaml ({@code -c DIR}'s, else the default one when it exists) is read even
     * when {@code --pki-dir} and {@code --cachedir} say where to work: a rotation of the master key must know
     * whether the master is one of a cluster's (then the key is rotated in ZooKeeper, not in the pki dir) and what
     * the master requires of it ({@code master_sign_pubkey}).
     */
    static KeytoolConfig resolveWithMasterConfig(
            Path configDir, Defaults defaults, Path pkiDirOption, Path cachedirOption) {
        return resolve(configDir, defaults, pkiDirOption, cachedirOption, true);
    }

    private static KeytoolConfig resolve(
            Path configDir, Defaults defaults, Path pkiDirOption, Path cachedirOption, boolean alwaysRead) {
        boolean explicit = configDir != null;
        Path file = (explicit ? configDir : defaults.configDir()).resolve(MasterConfig.FILE_NAME);
        Optional<MasterConfig> master =
                !alwaysRead && pkiDirOption != null && cachedirOption != null ? Optional.empty() : read(file, explicit);
        Path pkiDir = pkiDirOption != null
                ? pkiDirOption
                : master.map(MasterConfig::pkiDir).orElse(defaults.pkiDir());
        if (cachedirOption != null) {
            Path cachedir = cachedirOption.toAbsolutePath().normalize();
            return new KeytoolConfig(
                    pkiDir.toAbsolutePath().normalize(),
                    cachedir,
                    true,
                    cachedir.resolve(AuditLog.FILE_NAME),
                    master.filter(m -> m.cluster().isPresent()),
                    reserved(master));
        }
        Path cachedir = master.map(MasterConfig::cachedir)
                .orElse(defaults.cachedir())
                .toAbsolutePath()
                .normalize();
        Path auditLog = master.map(MasterConfig::auditLog)
                .orElse(cachedir.resolve(AuditLog.FILE_NAME))
                .toAbsolutePath()
                .normalize();
        return new KeytoolConfig(
                pkiDir.toAbsolutePath().normalize(),
                cachedir,
                master.filter(KeytoolConfig::namesItsCachedirOrAuditLog).isPresent(),
                auditLog,
                master.filter(m -> m.cluster().isPresent()),
                reserved(master));
    }

    /** The master.yaml's settings brine-key --rotate-master-key uses (keysize, grace, chain), or the defaults. */
    static MasterConfig settings(Path configDir, Defaults defaults) {
        boolean explicit = configDir != null;
        return read((explicit ? configDir : defaults.configDir()).resolve(MasterConfig.FILE_NAME), explicit)
                .orElseGet(() -> MasterConfig.builder().build());
    }

    private static ReservedIds reserved(Optional<MasterConfig> master) {
        return master.map(m -> m.acceptance().reserved()).orElse(ReservedIds.DEFAULT);
    }

    private static Optional<MasterConfig> read(Path file, boolean required) {
        if (!Files.exists(file)) {
            if (required) {
                throw UserError.usage(file + " does not exist");
            }
            return Optional.empty();
        }
        return Optional.of(master(file));
    }

    /**
     * The whole of {@code file} (a master.yaml), as the master reads it.
     *
     * @throws UserError (exit 2) with the report {@code brine-master --check-config} prints: every problem, each
     *                   with its file and line
     */
    static MasterConfig master(Path file) {
        try {
            return MasterConfig.loadFile(file);
        } catch (ConfigException e) {
            throw UserError.usage(e.getMessage());
        }
    }

    /** Whether the file sets cachedir or audit_log (the reader fills in the master's defaults otherwise). */
    private static boolean namesItsCachedirOrAuditLog(MasterConfig config) {
        Path defaultCachedir = MasterConfig.builder().build().cachedir();
        return !config.cachedir().equals(defaultCachedir)
                || !config.auditLog().equals(config.cachedir().resolve(AuditLog.FILE_NAME));
    }

    /**
     * The keys of {@link #pkiDir} as brine-key lists them: ids, states and fingerprints, without the parsed keys
     * (lean at any size); never creates anything. A cluster's keys come from its key store.
     */
    KeyScan.Result scan() {
        if (cluster.isPresent()) {
            try (KeyStore store = openCluster(AuditLog.none())) {
                KeyListing listing = store.list();
                return new KeyScan.Result(listing, SharedKeys.of(listing));
            }
        }
        requireLooksLikePkiDir(pkiDir);
        try {
            return KeyScan.scan(pkiDir);
        } catch (KeyStoreException e) {
            throw UserError.usage(e.getMessage());
        } catch (IOException e) {
            throw UserError.usage("cannot read the pki dir " + pkiDir + ": " + BrineKey.describe(e));
        }
    }

    /** The keys as {@link #scan} lists them, with the key rotations admins asked for ({@code --rotate-keys}), by id. */
    record Listed(KeyScan.Result scan, Map<String, RotationAsks.Ask> asks) {}

    /** {@link #scan} and the asks, from one read of the store (a cluster's: one connection). */
    Listed scanWithAsks() {
        if (cluster.isPresent()) {
            try (KeyStore store = openCluster(AuditLog.none())) {
                KeyListing listing = store.list();
                return new Listed(new KeyScan.Result(listing, SharedKeys.of(listing)), store.rotationAsks());
            }
        }
        KeyScan.Result scan = scan();
        try {
            return new Listed(scan, RotationAsks.read(pkiDir));
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot list " + pkiDir.resolve(RotationAsks.DIRECTORY) + ": " + e.getMessage(), e);
        }
    }

    /** Deletes keys of {@link #pkiDir} under the store lock, held until closed; audits to {@code audit}. */
    BulkDelete openBulkDelete(AuditLog audit) {
        requireLooksLikePkiDir(pkiDir);
        try {
            return BulkDelete.open(pkiDir, audit);
        } catch (KeyStoreException e) {
            throw UserError.usage(e.getMessage());
        } catch (IOException e) {
            throw UserError.usage("cannot open the pki dir " + pkiDir + ": " + BrineKey.describe(e));
        }
    }

    /**
     * The key store of {@link #pkiDir}, or the cluster's when master.yaml has {@code cluster:}, auditing to
     * {@code audit}; never creates a pki dir.
     */
    KeyStore openStore(AuditLog audit) {
        if (cluster.isPresent()) {
            return openCluster(audit);
        }
        requireLooksLikePkiDir(pkiDir);
        try {
            return FileKeyStore.open(KeyStoreOptions.builder(pkiDir)
                    .auditLog(audit)
                    .masterKey(false)
                    .createPkiDir(false)
                    .pollInterval(Duration.ZERO)
                    .build());
        } catch (KeyStoreException e) {
            throw UserError.usage(e.getMessage());
        } catch (IOException e) {
            throw UserError.usage("cannot open the pki dir " + pkiDir + ": " + BrineKey.describe(e));
        }
    }

    /** The cluster's key store (brine-key on a master host of a cluster). */
    ZkKeyStore openCluster(AuditLog audit) {
        MasterConfig master = cluster.orElseThrow(() -> UserError.usage("master.yaml has no cluster: section"));
        ClusterConfig ensemble = master.cluster().orElseThrow();
        try {
            return ClusterStores.openKeyStore(master, audit, Clock.systemUTC());
        } catch (ClusterUnavailableException e) {
            throw unavailable(ensemble, e.getMessage());
        } catch (KeyStoreException e) {
            if (lostTheEnsemble(e)) {
                throw unavailable(
                        ensemble,
                        "lost the ZooKeeper ensemble " + ensemble.connect() + " while reading"
                                + " its keys (no quorum, or no server reachable)");
            }
            throw UserError.usage(e.getMessage());
        } catch (IOException | RuntimeException e) {
            if (lostTheEnsemble(e)) {
                throw unavailable(
                        ensemble,
                        "lost the ZooKeeper ensemble " + ensemble.connect() + " while reading"
                                + " its keys (no quorum, or no server reachable)");
            }
            throw UserError.usage(
                    "cannot open the cluster's keys (" + ensemble.connect() + ensemble.root() + "): " + e.getMessage());
        }
    }

    /** Exit 4: one line naming the ensemble, what was tried and the fix; a retry later may work. */
    private static UserError unavailable(ClusterConfig ensemble, String what) {
        return new UserError(
                UserError.UNAVAILABLE,
                "cluster unavailable: " + what + "; tried each server of"
                        + " cluster.connect for root " + ensemble.root()
                        + "; nothing changed. Start the stopped ZooKeeper"
                        + " servers (a majority of the ensemble must run) or fix cluster.connect in master.yaml, then try"
                        + " again");
    }

    /** Whether {@code e} comes from a connection to the ensemble lost (no quorum, or no server left). */
    private static boolean lostTheEnsemble(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof ClusterUnavailableException
                    || cause instanceof KeeperException.ConnectionLossException
                    || cause instanceof KeeperException.SessionExpiredException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The store creates missing state directories; brine-key lets it only in a directory that already is a pki dir,
     * so a mistyped {@code --pki-dir /} or {@code --pki-dir ~} stays untouched.
     */
    static void requireLooksLikePkiDir(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw UserError.usage("pki dir " + dir + (Files.exists(dir) ? " is not a directory" : " does not exist"));
        }
        WritableFile.unreadableDirectory(dir).ifPresent(problem -> {
            throw UserError.usage("pki dir " + problem + ". Fix: run brine-key as the master's user (sudo -u "
                    + "USER brine-key ...) or as root, or give --pki-dir a pki dir you can read");
        });
        for (String entry :
                List.of("master.pub", "master.pem", "minions", "minions_pre", "minions_rejected", "minions_denied")) {
            if (Files.exists(dir.resolve(entry), LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
        }
        throw UserError.usage(dir + " does not look like a pki dir (no master.pub, minions/ or minions_pre/);"
                + " give the master's pki_dir");
    }

    /**
     * The audit log; a configured cachedir that does not work is an error, while a defaulted one (brine-key run on
     * a pki dir of its own, as a user who cannot write /var/cache) only costs a warning on {@code err}.
     */
    AuditLog openAudit(PrintWriter err) {
        try {
            return AuditLog.openFile(auditLog, Clock.systemUTC());
        } catch (IOException e) {
            String problem = "cannot write the audit log " + auditLog + ": " + BrineKey.describe(e);
            if (cachedirFromUser) {
                throw UserError.usage(problem);
            }
            err.println("brine-key: warning: " + problem + "; this change is not audited (use --cachedir DIR)");
            return AuditLog.none();
        }
    }
}
