package io.brine.master.auth;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.message.MasterSuccession;
import io.brine.store.keys.KeyStoreException;
import io.brine.store.keys.MasterKeyRotation;
import io.brine.store.keys.MasterKeyRotation.MasterKeySet;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's keys in force (PROTOCOL.md 6.4): the current pair signs auth replies (which carry the chain of
 * succession records), the previous one, while its grace lasts, signs what a connected minion checks against the key
 * it pinned before the rotation reached it (publications, SessionUnknown, KeyRotateReply). A rotation by {@code
 * brine-key --rotate-master-key} in another process is picked up by the timer ({@link #reloadIfRotated}), which
 * watches {@code master_chain}: the file written last and whole by a rotation's commit.
 */
public final class MasterKeyring {

    private static final Logger LOG = LoggerFactory.getLogger(MasterKeyring.class);

    private final Optional<Path> pkiDir;
    private final Clock clock;
    private volatile MasterKeySet keys;
    /** {@code master_chain}'s identity and time when last loaded; timer thread only. */
    private Object chainStamp;

    private MasterKeyring(Optional<Path> pkiDir, MasterKeySet keys, Clock clock) throws IOException {
        this.pkiDir = pkiDir;
        this.keys = keys;
        this.clock = clock;
        this.chainStamp = stamp();
    }

    /** A pair that never rotates (a cluster's, and tests'). */
    public static MasterKeyring fixed(KeyPair pair, Clock clock) {
        try {
            return new MasterKeyring(Optional.empty(), new MasterKeySet(pair, Optional.empty(), List.of()), clock);
        } catch (IOException e) {
            throw new IllegalStateException(e); // no file is read
        }
    }

    /** The keys in {@code pkiDir} as the key store loaded {@code current}: with the chain and the previous pair. */
    public static MasterKeyring open(Path pkiDir, KeyPair current, Clock clock) throws IOException,
            KeyStoreException {
        return new MasterKeyring(Optional.of(pkiDir), MasterKeyRotation.load(pkiDir, current, clock.millis()),
                clock);
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
        if (pkiDir.isEmpty()) {
            return Optional.empty();
        }
        try {
            Object stamp = stamp();
            if (Objects.equals(stamp, chainStamp)) {
                return Optional.empty();
            }
            KeyPair current = MasterKeyRotation.readCurrent(pkiDir.get());
            MasterKeySet loaded = MasterKeyRotation.load(pkiDir.get(), current, clock.millis());
            chainStamp = stamp;
            keys = loaded;
            return Optional.of(loaded.chain());
        } catch (IOException | KeyStoreException e) {
            LOG.debug("Master key rotation not loaded yet: {}", e.getMessage());
            return Optional.empty();
        }
    }

    /** When the newest rotation was made, epoch milliseconds; 0 before the first. */
    public long lastRotationMs() {
        List<MasterSuccession> chain = keys.chain();
        return chain.isEmpty() ? 0 : chain.get(chain.size() - 1).issuedMs();
    }

    /** How much longer the previous key signs publications; zero when none does. */
    public Duration graceRemaining() {
        MasterKeySet now = keys;
        return now.previous().isEmpty() ? Duration.ZERO
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
        if (pkiDir.isPresent()) {
            try {
                MasterKeyRotation.retirePrevious(pkiDir.get());
            } catch (IOException e) {
                LOG.error("The previous master key's grace is over but {} could not be removed: {}",
                        pkiDir.get().resolve(MasterKeyRotation.PREVIOUS_FILE), e.getMessage());
            }
        }
        return Optional.of(now.previous().get().getPublic());
    }

    private Object stamp() throws IOException {
        if (pkiDir.isEmpty()) {
            return null;
        }
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(pkiDir.get().resolve(
                MasterKeyRotation.CHAIN_FILE));
        return attributes.map(a -> List.of(String.valueOf(a.fileKey()), a.lastModifiedTime(), a.size()))
                .orElse(null);
    }
}
