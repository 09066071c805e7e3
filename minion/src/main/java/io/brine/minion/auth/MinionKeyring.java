package io.brine.minion.auth;

import io.brine.daemon.CrashPoints;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Instant;
import java.util.Arrays;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The minion's key pair and, during a rotation, the new one beside it (PROTOCOL.md 6.3): {@code minion.pem} and
 * {@code minion.pub} are the key the master accepted; {@code minion.pem.new} (0400) the key the minion asked to rotate
 * to, written before the request is sent. The new key replaces the old ({@link #promote}: one rename) only on the
 * master's signed word: its answer to the rotation, or an auth reply accepting the new key. Until then an auth offers
 * the new key first and the old one when that is not accepted ({@link #forAuth}), so a minion or master killed at any
 * step ends with the key the master holds. Confined to the minion's event thread.
 */
public final class MinionKeyring {

    public static final String NEW_PRIVATE_FILE = MinionKeys.PRIVATE_FILE + ".new";
    /**
     * Beside {@value #NEW_PRIVATE_FILE} when the master answered that the rotation waits for an admin ({@code
     * key_rotation: pending}): the new key is kept when the old one is accepted at an auth, since an admin may still
     * accept it.
     */
    public static final String PENDING_FILE = NEW_PRIVATE_FILE + ".pending";

    private static final Logger LOG = LoggerFactory.getLogger(MinionKeyring.class);

    private final Path pkiDir;
    private KeyPair current;
    private KeyPair candidate;
    /** The candidate was offered and not accepted: auths offer the current key until the next rotation. */
    private boolean candidateRefused;
    /** The master said the candidate waits for an admin ({@value #PENDING_FILE}). */
    private boolean candidatePending;

    private MinionKeyring(Path pkiDir, KeyPair current, KeyPair candidate) {
        this.pkiDir = pkiDir;
        this.current = current;
        this.candidate = candidate;
    }

    /** The keys in {@code pkiDir}: created on first start, and a rotation's new key when one was left there. */
    public static MinionKeyring load(Path pkiDir, int keysize) throws IOException, KeyFormatException {
        KeyPair current = MinionKeys.loadOrCreate(pkiDir, keysize);
        Path newFile = pkiDir.resolve(NEW_PRIVATE_FILE);
        KeyPair candidate = null;
        if (Files.exists(newFile, LinkOption.NOFOLLOW_LINKS)) {
            MinionKeys.refuseReadableByOthers(newFile);
            candidate = Pem.readPrivateKey(
                    new String(AtomicFiles.readSmall(newFile, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII));
            LOG.info(
                    "Minion key rotation to {} was not confirmed by the master: the next auth offers it first",
                    Fingerprints.of(candidate.getPublic()));
        }
        MinionKeyring keyring = new MinionKeyring(pkiDir, current, candidate);
        keyring.candidatePending =
                candidate != null && Files.exists(pkiDir.resolve(PENDING_FILE), LinkOption.NOFOLLOW_LINKS);
        return keyring;
    }

    /** A keyring over {@code current}, already loaded, keeping a rotation's new key in {@code pkiDir}. */
    public static MinionKeyring of(Path pkiDir, KeyPair current) {
        return new MinionKeyring(pkiDir, current, null);
    }

    /** The key the master accepted, as far as this minion knows. */
    public KeyPair current() {
        return current;
    }

    /** The key this minion asked to rotate to and has no answer for; empty when none. */
    public Optional<KeyPair> candidate() {
        return Optional.ofNullable(candidate);
    }

    /**
     * When the current key was made: the modification time of {@code minion.pem}, which is written once when the key
     * is created and replaced by a rename when a rotation is confirmed, so its time is the key's (a restore that
     * keeps file times keeps the age; one that does not makes the key look new, never older than it is). Empty when
     * the file cannot be read.
     */
    public Optional<Instant> createdAt() {
        try {
            return Optional.of(
                    Files.getLastModifiedTime(pkiDir.resolve(MinionKeys.PRIVATE_FILE), LinkOption.NOFOLLOW_LINKS)
                            .toInstant());
        } catch (IOException e) {
            LOG.warn("Minion key's age unknown: {}", e.getMessage());
            return Optional.empty();
        }
    }

    /** The key the next auth offers: the unconfirmed new key first, then the current one. */
    public KeyPair forAuth() {
        return candidate != null && !candidateRefused ? candidate : current;
    }

    /** The master did not accept the new key in an auth: offer the current one. */
    public void candidateRefused() {
        candidateRefused = true;
    }

    /**
     * A rotation's new key, made off the event thread, written to {@value #NEW_PRIVATE_FILE} before it is offered.
     * Nothing when a new key is held already (the one an unanswered rotation left): that one is kept.
     */
    public void adoptCandidate(KeyPair fresh) throws IOException {
        if (candidate == null) {
            AtomicFiles.write(
                    pkiDir.resolve(NEW_PRIVATE_FILE),
                    Pem.bytes(Pem.privateKeyPkcs1(fresh.getPrivate())),
                    AtomicFiles.OWNER_READ);
            candidate = fresh;
            clearPending(); // a marker a crash left behind is not this key's
        }
    }

    /** Whether the master said the new key waits for an admin: kept until the master's word on it. */
    public boolean candidatePending() {
        return candidate != null && candidatePending;
    }

    /** The master said the new key waits for an admin: kept (here and across restarts) until its word on it. */
    public void markCandidatePending() throws IOException {
        if (candidate != null && !candidatePending) {
            AtomicFiles.write(pkiDir.resolve(PENDING_FILE), new byte[0], AtomicFiles.OWNER_RW);
            candidatePending = true;
        }
    }

    private void clearPending() throws IOException {
        candidatePending = false;
        try {
            AtomicFiles.delete(pkiDir.resolve(PENDING_FILE));
        } catch (NoSuchFileException e) {
            // none
        }
    }

    /** The new key is asked for again in a rotation request: the next auth offers it first again. */
    public void candidateAsked() {
        candidateRefused = false;
    }

    /**
     * The master confirmed the new key: {@value #NEW_PRIVATE_FILE} becomes {@code minion.pem} with one rename, then
     * {@code minion.pub} is rewritten ({@link MinionKeys#loadOrCreate} rewrites a {@code minion.pub} a crash left
     * behind). Nothing when {@code confirmed} is not the candidate.
     */
    public void promote(KeyPair confirmed) throws IOException {
        if (candidate == null
                || !Arrays.equals(
                        candidate.getPublic().getEncoded(),
                        confirmed.getPublic().getEncoded())) {
            return;
        }
        AtomicFiles.move(pkiDir.resolve(NEW_PRIVATE_FILE), pkiDir.resolve(MinionKeys.PRIVATE_FILE));
        CrashPoints.reach("minion-rotation-switched");
        AtomicFiles.write(
                pkiDir.resolve(MinionKeys.PUBLIC_FILE),
                Pem.bytes(Pem.publicKeySpki(candidate.getPublic())),
                AtomicFiles.PUBLIC_READ);
        LOG.info(
                "Minion key rotated: {} replaces {}",
                Fingerprints.of(candidate.getPublic()),
                Fingerprints.of(current.getPublic()));
        current = candidate;
        candidate = null;
        candidateRefused = false;
        clearPending();
    }

    /** The master holds the current key and not the new one: the new key is dropped. */
    public void discardCandidate() throws IOException {
        if (candidate == null) {
            return;
        }
        try {
            AtomicFiles.delete(pkiDir.resolve(NEW_PRIVATE_FILE));
        } catch (NoSuchFileException e) {
            // gone already
        }
        LOG.info(
                "Minion key rotation to {} dropped: the master holds {}",
                Fingerprints.of(candidate.getPublic()),
                Fingerprints.of(current.getPublic()));
        candidate = null;
        candidateRefused = false;
        clearPending();
    }
}
