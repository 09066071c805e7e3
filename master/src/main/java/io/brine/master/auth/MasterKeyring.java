package io.brine.master.auth;

import io.brine.cluster.ZkMasterKeys;
import io.brine.daemon.WarnInterval;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.salt.SaltPubkeySignature;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.MasterKeyRotation;
import io.brine.store.keys.MasterKeyRotation.MasterKeySet;
import io.brine.store.keys.MasterKeys;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's keys in force (PROTOCOL.md 6.4): the current pair signs auth replies (which carry the chain of
 * succession records), the previous one, while its grace lasts, signs what a connected minion checks against the key
 * it pinned before the rotation reached it (publications, SessionUnknown, KeyRotateReply). A rotation by {@code
 * brine-key --rotate-master-key} in another process is picked up by the timer ({@link #reloadIfRotated}): from {@code
 * master_chain} in {@code pki_dir} for a master alone, from ZooKeeper's {@code /master_key} for a master of a
 * cluster, where every master switches at its watch.
 */
public final class MasterKeyring {

    private static final Logger LOG = LoggerFactory.getLogger(MasterKeyring.class);

    /** Where a rotation made by another process comes from. */
    interface Source {
        /** The keys after a rotation made since the last look, given the keys in force; empty when none. */
        Optional<MasterKeySet> rotated(MasterKeySet now);

        /** Removes the previous private key where this source keeps one, once its grace is over. */
        void retire() throws IOException;

        /**
         * Salt's {@code pub_sig} as this source keeps it, unchecked: {@code pki_dir/master_pubkey_signature} for a
         * master alone, the one {@code /master_key} held at the last read for a cluster's; empty when none.
         *
         * @throws KeyStoreException when what is kept is not one (malformed, over its bound)
         */
        Optional<SaltPubkeySignature> saltSignature() throws IOException, KeyStoreException;

        /** Whether {@link #saltSignature} may hold another since it was last read. Timer thread. */
        boolean saltSignatureChanged();

        /** Where Salt's {@code pub_sig} is kept, for the log. */
        String saltSignatureWhere();
    }

    private final Source source;
    private final Clock clock;
    /** {@code master_sign_pubkey}: {@code master_sign.pub}, which Salt's {@code pub_sig} must verify against. */
    private final Optional<Path> signPub;

    private final List<Runnable> rotationListeners = new CopyOnWriteArrayList<>();
    private final List<Runnable> saltSignatureListeners = new CopyOnWriteArrayList<>();
    private volatile MasterKeySet keys;
    private volatile Optional<SaltPubkeySignature> saltSignature;
    /**
     * What is wrong with Salt's {@code pub_sig}, at most once a minute: anyone who can write {@code /master_key}, or
     * the pki dir, could make each master log a line per write.
     */
    private final WarnInterval refusals;

    private MasterKeyring(Source source, MasterKeySet keys, Clock clock, Optional<Path> signPub) {
        this.source = source;
        this.keys = keys;
        this.clock = clock;
        this.signPub = signPub;
        this.refusals = new WarnInterval(clock, Duration.ofMinutes(1).toMillis());
        this.saltSignature = loadSaltSignature(keys.current());
    }

    /** A pair that never rotates (tests'). */
    public static MasterKeyring fixed(KeyPair pair, Clock clock) {
        return new MasterKeyring(
                new Source() {
                    @Override
                    public Optional<MasterKeySet> rotated(MasterKeySet now) {
                        return Optional.empty();
                    }

                    @Override
                    public void retire() {}

                    @Override
                    public Optional<SaltPubkeySignature> saltSignature() {
                        return Optional.empty();
                    }

                    @Override
                    public boolean saltSignatureChanged() {
                        return false;
                    }

                    @Override
                    public String saltSignatureWhere() {
                        return "nowhere";
                    }
                },
                new MasterKeySet(pair, Optional.empty(), List.of()),
                clock,
                Optional.empty());
    }

    /** The keys in {@code pkiDir} as the key store loaded {@code current}: with the chain and the previous pair. */
    public static MasterKeyring open(Path pkiDir, KeyPair current, Clock clock) throws IOException, KeyStoreException {
        return open(pkiDir, current, clock, Optional.empty());
    }

    /**
     * As {@link #open(Path, KeyPair, Clock)}, with {@code master_sign_pubkey}'s {@code master_sign.pub}: Salt's
     * {@code pub_sig} of the key in force ({@code pki_dir/master_pubkey_signature}) is then read with each key and
     * offered to Salt minions when it verifies.
     */
    public static MasterKeyring open(Path pkiDir, KeyPair current, Clock clock, Optional<Path> signPub)
            throws IOException, KeyStoreException {
        return new MasterKeyring(
                new PkiDir(pkiDir, clock), MasterKeyRotation.load(pkiDir, current, clock.millis()), clock, signPub);
    }

    /**
     * Salt's {@code pub_sig} of the key in force, made offline by the master signing key and checked against it and
     * this master's {@code master_sign.pub}; empty without {@code master_sign_pubkey}, or when none verifies (logged).
     */
    public Optional<SaltPubkeySignature> saltSignature() {
        return saltSignature;
    }

    /**
     * Runs {@code listener} (timer thread) once a rotation made by another process is in force here, whether it came
     * from {@code pki_dir} or from the cluster's ZooKeeper.
     */
    public void onRotated(Runnable listener) {
        rotationListeners.add(listener);
    }

    /**
     * Runs {@code listener} (timer thread) once Salt's {@code pub_sig} of the key in force changed without a rotation
     * (installed, replaced, or no longer verifying).
     */
    public void onSaltSignatureChanged(Runnable listener) {
        saltSignatureListeners.add(listener);
    }

    /**
     * A cluster's keys, in ZooKeeper ({@code /master_key}), as the master holding {@code installed} (its {@code
     * master.pem}) reaches them: a rotation made while it was down is in force from its start, and one made while it
     * runs from the watch's next event.
     *
     * @throws KeyStoreException when {@code installed} is not in the cluster's chain (the master must not start)
     */
    public static MasterKeyring cluster(ZkMasterKeys zk, KeyPair installed, Clock clock)
            throws IOException, KeyStoreException {
        return cluster(zk, installed, clock, Optional.empty());
    }

    /**
     * As {@link #cluster(ZkMasterKeys, KeyPair, Clock)}; with {@code master_sign_pubkey}'s {@code master_sign.pub},
     * Salt's {@code pub_sig} that {@code /master_key} keeps is read with each write and offered to Salt minions once
     * it verifies for the key in force against this master's {@code master_sign.pub}.
     */
    public static MasterKeyring cluster(ZkMasterKeys zk, KeyPair installed, Clock clock, Optional<Path> signPub)
            throws IOException, KeyStoreException {
        ZkMasterKeys.InForce inForce = zk.loadInForce(installed, clock.millis());
        InCluster source = new InCluster(zk, installed, clock, inForce.saltSignature());
        MasterKeyring ring = new MasterKeyring(source, inForce.keys(), clock, signPub);
        zk.watch(source.changes::incrementAndGet);
        return ring;
    }

    public KeyPair current() {
        return keys.current();
    }

    /** The succession records to show in auth replies, oldest first; empty before the first rotation. */
    public List<MasterSuccession> chain() {
        return keys.chain();
    }

    /** The key that signs publications, SessionUnknown and KeyRotateReply: the previous one within its grace. */
    public PrivateKey publicationKey() {
        MasterKeySet now = keys;
        if (now.previous().isPresent() && clock.millis() < now.graceUntilMs()) {
            return now.previous().get().getPrivate();
        }
        return now.current().getPrivate();
    }

    /**
     * Loads a rotation another process made since the last look, and returns the new chain; empty when there was
     * none, or when the rotation is not complete yet (looked at again on the next call). Timer thread.
     */
    public Optional<List<MasterSuccession>> reloadIfRotated() {
        Optional<MasterKeySet> loaded = source.rotated(keys);
        loaded.ifPresent(set -> {
            saltSignature = loadSaltSignature(set.current());
            keys = set;
            rotationListeners.forEach(Runnable::run);
        });
        if (loaded.isEmpty() && signPub.isPresent() && source.saltSignatureChanged()) {
            // Salt's pub_sig of the key in force, installed or replaced without a rotation.
            Optional<SaltPubkeySignature> before = saltSignature;
            saltSignature = loadSaltSignature(keys.current());
            if (saltSignature.isPresent()) {
                LOG.info(
                        "Salt's pub_sig of the master key {} {} ({}): sent to Salt minions",
                        Fingerprints.of(keys.current().getPublic()),
                        before.isPresent() ? "replaced" : "installed",
                        source.saltSignatureWhere());
            }
            if (!saltSignature.equals(before)) {
                saltSignatureListeners.forEach(Runnable::run);
            }
        }
        return loaded.map(MasterKeySet::chain);
    }

    /** When the newest rotation was made, epoch milliseconds; 0 before the first. */
    public long lastRotationMs() {
        List<MasterSuccession> chain = keys.chain();
        return chain.isEmpty() ? 0 : chain.get(chain.size() - 1).issuedMs();
    }

    /** How much longer the previous key signs publications; zero when none does. */
    public Duration graceRemaining() {
        MasterKeySet now = keys;
        return now.previous().isEmpty()
                ? Duration.ZERO
                : Duration.ofMillis(Math.max(0, now.graceUntilMs() - clock.millis()));
    }

    /**
     * Forgets the previous pair once its grace is over, and removes its file; returns its public key when it did.
     * Timer thread.
     */
    public Optional<PublicKey> retireIfDue() {
        MasterKeySet now = keys;
        if (now.previous().isEmpty() || clock.millis() < now.graceUntilMs()) {
            return Optional.empty();
        }
        keys = new MasterKeySet(now.current(), Optional.empty(), now.chain());
        try {
            source.retire();
        } catch (IOException e) {
            LOG.error("The previous master key's grace is over but its file could not be removed: {}", e.getMessage());
        }
        return Optional.of(now.previous().get().getPublic());
    }

    /**
     * A master alone: {@code brine-key --rotate-master-key} in another process writes {@code master_chain} last and
     * whole (a rotation's commit); its identity and time tell a new one.
     */
    private static final class PkiDir implements Source {
        private final Path pkiDir;
        private final Clock clock;
        /** {@code master_chain}'s identity and time when last loaded; timer thread only. */
        private Object chainStamp;
        /** {@code master_pubkey_signature}'s identity and time when last read. */
        private volatile Object signatureStamp;

        PkiDir(Path pkiDir, Clock clock) throws IOException {
            this.pkiDir = pkiDir;
            this.clock = clock;
            this.chainStamp = stamp();
        }

        @Override
        public Optional<MasterKeySet> rotated(MasterKeySet now) {
            try {
                Object stamp = stamp();
                if (Objects.equals(stamp, chainStamp)) {
                    return Optional.empty();
                }
                KeyPair current = MasterKeyRotation.readCurrent(pkiDir);
                MasterKeySet loaded = MasterKeyRotation.load(pkiDir, current, clock.millis());
                chainStamp = stamp;
                return Optional.of(loaded);
            } catch (IOException | KeyStoreException e) {
                LOG.debug("Master key rotation not loaded yet: {}", e.getMessage());
                return Optional.empty();
            }
        }

        @Override
        public void retire() throws IOException {
            MasterKeyRotation.retirePrevious(pkiDir);
        }

        @Override
        public Optional<SaltPubkeySignature> saltSignature() throws IOException, KeyStoreException {
            signatureStamp = stamp(SaltPubkeySignature.FILE);
            return MasterKeyRotation.readSaltSignature(pkiDir);
        }

        @Override
        public boolean saltSignatureChanged() {
            try {
                return !Objects.equals(stamp(SaltPubkeySignature.FILE), signatureStamp);
            } catch (IOException e) {
                LOG.debug("Salt's pub_sig not looked at: {}", e.getMessage());
                return false;
            }
        }

        @Override
        public String saltSignatureWhere() {
            return pkiDir.resolve(SaltPubkeySignature.FILE).toString();
        }

        private Object stamp() throws IOException {
            return stamp(MasterKeyRotation.CHAIN_FILE);
        }

        private Object stamp(String name) throws IOException {
            Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(pkiDir.resolve(name));
            return attributes
                    .map(a -> List.of(String.valueOf(a.fileKey()), a.lastModifiedTime(), a.size()))
                    .orElse(null);
        }
    }

    /**
     * A master of a cluster: each write to {@code /master_key} (counted by the watch) is read once, walked from the
     * installed key, and taken only when it leads on from the key in force: an older chain written back (by anyone
     * who can write the znode) never turns a master back to a key it left.
     */
    private static final class InCluster implements Source {
        private final ZkMasterKeys zk;
        private final KeyPair installed;
        private final Clock clock;
        /**
         * A record not used, at most once a minute, escaped: anyone who can write {@code /master_key} could make each
         * master log a line per write, and put what they like in it.
         */
        private final WarnInterval unused;

        final AtomicLong changes = new AtomicLong();
        /** The count of writes last read; timer thread only. */
        private long seen;
        /** Salt's pub_sig as the last read found it, and whether it differs from the one last given out. */
        private volatile Optional<String> pubSig;

        private volatile boolean pubSigChanged;

        InCluster(ZkMasterKeys zk, KeyPair installed, Clock clock, Optional<String> pubSig) {
            this.zk = zk;
            this.installed = installed;
            this.clock = clock;
            this.pubSig = pubSig;
            this.unused = new WarnInterval(clock, Duration.ofMinutes(1).toMillis());
        }

        @Override
        public Optional<MasterKeySet> rotated(MasterKeySet now) {
            long count = changes.get();
            if (count == seen) {
                return Optional.empty();
            }
            MasterKeySet loaded;
            try {
                ZkMasterKeys.InForce read = zk.loadInForce(installed, clock.millis());
                loaded = read.keys();
                if (!read.saltSignature().equals(pubSig)) {
                    pubSig = read.saltSignature();
                    pubSigChanged = true;
                }
            } catch (IOException e) {
                LOG.debug("Cluster master key record not read yet: {}", e.getMessage());
                return Optional.empty(); // read again on the next tick
            } catch (KeyStoreException e) {
                seen = count;
                unused.warn(
                        LOG,
                        "Cluster master key record not used, the key in force stays: {}",
                        MinionIds.printable(e.getMessage()));
                return Optional.empty();
            }
            seen = count;
            byte[] inForce = now.current().getPublic().getEncoded();
            if (Arrays.equals(loaded.current().getPublic().getEncoded(), inForce)) {
                return Optional.empty();
            }
            if (loaded.chain().stream().noneMatch(record -> Arrays.equals(record.previousKey(), inForce))) {
                unused.warn(
                        LOG,
                        "Cluster master key record not used, the key in force stays: its chain does not lead on"
                                + " from the key in force ({}), an older record written back?",
                        Fingerprints.of(now.current().getPublic()));
                return Optional.empty();
            }
            return Optional.of(loaded);
        }

        @Override
        public void retire() {
            // The sealed keys in ZooKeeper go with their records (master_key_chain).
        }

        @Override
        public Optional<SaltPubkeySignature> saltSignature() throws KeyStoreException {
            pubSigChanged = false;
            Optional<String> text = pubSig;
            if (text.isEmpty()) {
                return Optional.empty();
            }
            try {
                return Optional.of(SaltPubkeySignature.parse(text.get()));
            } catch (MalformedException e) {
                throw new KeyStoreException("the cluster's pub_sig in ZooKeeper /master_key: " + e.getMessage(), e);
            }
        }

        @Override
        public boolean saltSignatureChanged() {
            return pubSigChanged;
        }

        @Override
        public String saltSignatureWhere() {
            return "the cluster's, in ZooKeeper /master_key";
        }
    }

    /**
     * Reads and checks the {@code pub_sig} of {@code current} against this master's {@code master_sign.pub}; what is
     * wrong is logged (at most once a minute, escaped: it may come from anyone who can write ZooKeeper), since Salt
     * minions that verify refuse a master that sends none. A {@code pub_sig} that does not verify is never sent.
     */
    private Optional<SaltPubkeySignature> loadSaltSignature(KeyPair current) {
        if (signPub.isEmpty()) {
            return Optional.empty();
        }
        String where = source.saltSignatureWhere();
        String refused = "; Salt minions with verify_master_pubkey_sign refuse this master's key until brine-key"
                + " --master-pubkey-signature (the key in force) or a rotation signed by the master signing key"
                + " installs one";
        try {
            Optional<RSAPublicKey> signer = MasterKeys.readPublic(signPub.get());
            if (signer.isEmpty()) {
                refusals.warn(LOG, "master_sign_pubkey is on but {} is missing{}", signPub.get(), refused);
                return Optional.empty();
            }
            Optional<SaltPubkeySignature> signature = source.saltSignature();
            if (signature.isEmpty()) {
                refusals.warn(LOG, "master_sign_pubkey is on but there is no Salt pub_sig ({}){}", where, refused);
                return Optional.empty();
            }
            if (!signature.get().verifies(current.getPublic(), signer.get())) {
                refusals.warn(
                        LOG,
                        "Salt's pub_sig ({}) is not the signature of the master key in force ({}) by the master signing"
                                + " key of {}; not sent{}",
                        where,
                        Fingerprints.of(current.getPublic()),
                        signPub.get(),
                        refused);
                return Optional.empty();
            }
            return signature;
        } catch (IOException | KeyStoreException e) {
            refusals.warn(LOG, "Salt's pub_sig not loaded: {}{}", MinionIds.printable(e.getMessage()), refused);
            return Optional.empty();
        }
    }
}
