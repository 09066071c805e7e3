package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.salt.SaltPubkeySignature;
import io.brine.store.audit.AuditEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * A rotation of the master's key pair in {@code pki_dir} (PROTOCOL.md 6.4): the new private key is written beside the
 * old ({@code master.pem.new}, 0400), the old one kept as {@code master_previous.pem} (0400) for the grace period, and
 * the succession record appended to {@code master_chain}; writing the chain is the rotation's commit, after which
 * {@code master.pem.new} is renamed over {@code master.pem} and {@code master.pub} rewritten. A crash before the
 * chain names the new key leaves the old pair in force (the next rotation or start drops {@code master.pem.new}); one
 * after is completed by {@link #complete} when the store next opens. The caller holds the store lock.
 */
public final class MasterKeyRotation {

    public static final String CHAIN_FILE = "master_chain";
    public static final String PREVIOUS_FILE = "master_previous.pem";
    static final String NEW_FILE = "master.pem.new";
    /** A chain of {@link MasterSuccessions#MAX_CHAIN} records of 8,192-bit keys stays below this. */
    static final int MAX_CHAIN_BYTES = 64 * 1024;

    /**
     * The master's keys as a running master needs them.
     *
     * @param current  the key pair in force: it signs auth replies and is the one {@code master.pub} shows
     * @param previous the key it replaced, while the newest record's grace lasts: it still signs publications
     * @param chain    the succession records kept, oldest first; empty before the first rotation
     */
    public record MasterKeySet(KeyPair current, Optional<KeyPair> previous, List<MasterSuccession> chain) {

        public MasterKeySet {
            chain = List.copyOf(chain);
        }

        /** When the previous key stops signing; 0 when there is none. */
        public long graceUntilMs() {
            return previous.isPresent() && !chain.isEmpty()
                    ? chain.get(chain.size() - 1).graceUntilMs()
                    : 0;
        }
    }

    /** A rotation done: its record, and the two keys (for the audit line and the admin). */
    public record Rotated(MasterSuccession record, RSAPublicKey previous, RSAPublicKey next) {

        /** The {@code master-key-rotated} audit line: both fingerprints, the signing key, the end of the grace. */
        public AuditEvent auditEvent(String actor) {
            return AuditEvent.builder("master-key-rotated", actor)
                    .from(Fingerprints.of(previous))
                    .to(Fingerprints.of(next))
                    .reason((record.signingSignature() != null ? "signed by the master signing key too; " : "")
                            + "the previous key signs publications"
                            + " until " + Instant.ofEpochMilli(record.graceUntilMs()))
                    .build();
        }
    }

    private MasterKeyRotation() {}

    /**
     * Makes a new master key pair and its succession record, signed by the current key and by {@code signingKey}
     * when given, and puts it in force. Keeps the newest {@code keep} records. Refused in a pki dir with no master key.
     */
    public static Rotated rotate(
            Path pkiDir, int keysize, Duration grace, int keep, Optional<PrivateKey> signingKey, Clock clock)
            throws IOException, KeyStoreException {
        if (AtomicFiles.attributes(pkiDir.resolve(MasterKeys.PRIVATE_FILE)).isEmpty()) {
            throw new KeyStoreException(pkiDir.resolve(MasterKeys.PRIVATE_FILE) + " is missing: there is no master"
                    + " key to rotate (brine-master makes one at its first start)");
        }
        complete(pkiDir);
        OfflineMasterSigning.refuseWhilePrepared(pkiDir);
        KeyPair old = MasterKeys.loadOrCreate(pkiDir, keysize);
        KeyPair next = RsaKeys.generate(keysize);
        long issuedMs = clock.millis();
        long graceUntilMs = issuedMs + grace.toMillis();
        byte[] signed = MasterSuccessions.signedBytes(
                old.getPublic().getEncoded(), next.getPublic().getEncoded(), issuedMs, graceUntilMs);
        return commit(
                pkiDir,
                old,
                next,
                issuedMs,
                graceUntilMs,
                keep,
                signingKey.map(key -> Rsa.sign(key, signed)).orElse(null),
                signingKey.map(key -> SaltPubkeySignature.sign(key, next.getPublic())));
    }

    /**
     * Puts {@code next} in force after {@code old}: the record signed by {@code old} (and carrying {@code
     * signingSignature}, the offline key's, when not null), Salt's {@code pub_sig} of the new key written beside it
     * or the old one's removed (it would not verify for the new key), then the chain: the commit.
     */
    static Rotated commit(
            Path pkiDir,
            KeyPair old,
            KeyPair next,
            long issuedMs,
            long graceUntilMs,
            int keep,
            byte[] signingSignature,
            Optional<SaltPubkeySignature> pubSig)
            throws IOException, KeyStoreException {
        List<MasterSuccession> chain = new ArrayList<>(readChain(pkiDir));
        byte[] previousDer = old.getPublic().getEncoded();
        byte[] nextDer = next.getPublic().getEncoded();
        byte[] signed = MasterSuccessions.signedBytes(previousDer, nextDer, issuedMs, graceUntilMs);
        MasterSuccession record = new MasterSuccession(
                previousDer, nextDer, issuedMs, graceUntilMs, Rsa.sign(old.getPrivate(), signed), signingSignature);
        chain.add(record);
        while (chain.size() > Math.min(keep, MasterSuccessions.MAX_CHAIN)) {
            chain.remove(0);
        }
        AtomicFiles.write(
                pkiDir.resolve(NEW_FILE), Pem.bytes(Pem.privateKeyPkcs1(next.getPrivate())), AtomicFiles.OWNER_READ);
        AtomicFiles.write(
                pkiDir.resolve(PREVIOUS_FILE),
                Pem.bytes(Pem.privateKeyPkcs1(old.getPrivate())),
                AtomicFiles.OWNER_READ);
        // Before the commit: a crash between leaves a pub_sig the master finds is not over the key in force.
        Path saltSignature = pkiDir.resolve(SaltPubkeySignature.FILE);
        if (pubSig.isPresent()) {
            AtomicFiles.write(
                    saltSignature, pubSig.get().text().getBytes(StandardCharsets.US_ASCII), AtomicFiles.PUBLIC_READ);
        } else if (AtomicFiles.attributes(saltSignature).isPresent()) {
            AtomicFiles.delete(saltSignature);
        }
        AtomicFiles.write(pkiDir.resolve(CHAIN_FILE), MasterSuccessions.encodeChain(chain), AtomicFiles.PUBLIC_READ);
        complete(pkiDir);
        return new Rotated(record, (RSAPublicKey) old.getPublic(), (RSAPublicKey) next.getPublic());
    }

    /**
     * Salt's {@code pub_sig} of the key in force ({@code pki_dir/master_pubkey_signature}, written by a rotation the
     * signing key signed); empty when there is none. Not checked here: the master checks it against the key in force
     * and {@code master_sign.pub} before it sends it.
     */
    public static Optional<SaltPubkeySignature> readSaltSignature(Path pkiDir) throws IOException, KeyStoreException {
        Path file = pkiDir.resolve(SaltPubkeySignature.FILE);
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(file);
        if (attributes.isEmpty()) {
            return Optional.empty();
        }
        if (!attributes.get().isRegularFile()) {
            throw new KeyStoreException(file + " is not a regular file");
        }
        try {
            return Optional.of(SaltPubkeySignature.parse(
                    new String(AtomicFiles.readSmall(file, SaltPubkeySignature.MAX_BYTES), StandardCharsets.US_ASCII)));
        } catch (MalformedException e) {
            throw new KeyStoreException(file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads the offline master signing key for a rotation ({@code brine-key --rotate-master-key --master-sign-key
     * FILE}): a private key file outside {@code pkiDir} (the point of the key is that the master's machine does not
     * keep it), readable by its owner alone, not the master key itself, and, when {@code expectedPub} is given
     * ({@code master_sign_pubkey}), the private half of that public key. Its bytes are wiped once parsed.
     */
    public static PrivateKey readSigningKey(Path file, Path pkiDir, Optional<Path> expectedPub)
            throws IOException, KeyStoreException {
        Path absolute = file.toAbsolutePath().normalize();
        Path pki = pkiDir.toAbsolutePath().normalize();
        if (inside(absolute, pki)) {
            throw new KeyStoreException(file + " is inside pki_dir " + pkiDir + ": the master signing key is kept"
                    + " off the master (bring it for the rotation, e.g. on removable media), never in pki_dir");
        }
        PosixFileAttributes attributes =
                AtomicFiles.attributes(absolute).orElseThrow(() -> new KeyStoreException(file + " does not exist"));
        KeyPair pair = MasterKeys.readPrivate(absolute, attributes);
        if (AtomicFiles.attributes(pki.resolve(MasterKeys.PUBLIC_FILE)).isPresent()
                && Arrays.equals(
                        pair.getPublic().getEncoded(),
                        MasterKeys.readPublicIn(pki)
                                .map(RSAPublicKey::getEncoded)
                                .orElse(null))) {
            throw new KeyStoreException(file + " is the master key itself, not a separate signing key");
        }
        if (expectedPub.isPresent()) {
            RSAPublicKey expected = MasterKeys.readPublic(expectedPub.get())
                    .orElseThrow(() -> new KeyStoreException(expectedPub.get()
                            + " does not exist: master_sign_pubkey needs the signing key's public half" + " there"));
            if (!Arrays.equals(expected.getEncoded(), pair.getPublic().getEncoded())) {
                throw new KeyStoreException(file + " is not the private half of " + expectedPub.get()
                        + " (master_sign_pubkey): minions that verify the signing key would refuse the rotation");
            }
        }
        return pair.getPrivate();
    }

    /**
     * Reads the master signing key on the machine that holds it ({@code brine-key --sign-master-key}): a private key
     * file readable by its owner alone, never through a link. Its bytes are wiped once parsed.
     */
    public static KeyPair readOfflineSigningKey(Path file) throws IOException, KeyStoreException {
        return MasterKeys.readPrivate(
                file, AtomicFiles.attributes(file).orElseThrow(() -> new KeyStoreException(file + " does not exist")));
    }

    /** Whether {@code file} is in {@code dir} or below it, by name or once links in its directories are followed. */
    private static boolean inside(Path file, Path dir) throws IOException {
        if (file.startsWith(dir)) {
            return true;
        }
        Path parent = file.getParent();
        return parent != null
                && Files.isDirectory(parent)
                && Files.isDirectory(dir)
                && parent.toRealPath().startsWith(dir.toRealPath());
    }

    /**
     * Finishes a rotation a crash interrupted: a {@code master.pem.new} the chain's newest record names replaces
     * {@code master.pem} (and {@code master.pub} is rewritten); one it does not name was never committed and is
     * removed. The caller holds the store lock.
     */
    static void complete(Path pkiDir) throws IOException, KeyStoreException {
        Path pending = pkiDir.resolve(NEW_FILE);
        if (AtomicFiles.attributes(pending).isEmpty()) {
            return;
        }
        KeyPair pair = readPrivate(pending);
        List<MasterSuccession> chain = readChain(pkiDir);
        if (chain.isEmpty()
                || !Arrays.equals(
                        chain.get(chain.size() - 1).nextKey(), pair.getPublic().getEncoded())) {
            AtomicFiles.delete(pending);
            return;
        }
        AtomicFiles.move(pending, pkiDir.resolve(MasterKeys.PRIVATE_FILE));
        AtomicFiles.write(
                pkiDir.resolve(MasterKeys.PUBLIC_FILE),
                Pem.bytes(Pem.publicKeySpki(pair.getPublic())),
                AtomicFiles.PUBLIC_READ);
    }

    /**
     * What a running master loads: the pair in force, the previous one while the newest record's grace lasts at
     * {@code nowMs}, and the chain. A chain whose newest record does not name the key in force is refused (a
     * {@code master_chain} and {@code master.pem} from different masters).
     */
    public static MasterKeySet load(Path pkiDir, KeyPair current, long nowMs) throws IOException, KeyStoreException {
        List<MasterSuccession> chain = readChain(pkiDir);
        if (!chain.isEmpty()
                && !Arrays.equals(
                        chain.get(chain.size() - 1).nextKey(),
                        current.getPublic().getEncoded())) {
            throw new KeyStoreException(pkiDir.resolve(CHAIN_FILE) + " does not end at the key in "
                    + pkiDir.resolve(MasterKeys.PRIVATE_FILE) + "; restore the pair and the chain of one master");
        }
        Optional<KeyPair> previous = Optional.empty();
        Path previousFile = pkiDir.resolve(PREVIOUS_FILE);
        if (!chain.isEmpty()
                && nowMs < chain.get(chain.size() - 1).graceUntilMs()
                && AtomicFiles.attributes(previousFile).isPresent()) {
            KeyPair pair = readPrivate(previousFile);
            if (Arrays.equals(
                    pair.getPublic().getEncoded(), chain.get(chain.size() - 1).previousKey())) {
                previous = Optional.of(pair);
            }
        }
        return new MasterKeySet(current, previous, chain);
    }

    /** Reads the current pair again (after a rotation by another process): {@code master.pem}, checked as at start. */
    public static KeyPair readCurrent(Path pkiDir) throws IOException, KeyStoreException {
        return readPrivate(pkiDir.resolve(MasterKeys.PRIVATE_FILE));
    }

    /** Removes {@code master_previous.pem} once its grace is over. */
    public static void retirePrevious(Path pkiDir) throws IOException {
        if (AtomicFiles.attributes(pkiDir.resolve(PREVIOUS_FILE)).isPresent()) {
            AtomicFiles.delete(pkiDir.resolve(PREVIOUS_FILE));
        }
    }

    /** The records in {@code master_chain}, oldest first; empty when there is none. */
    public static List<MasterSuccession> readChain(Path pkiDir) throws IOException, KeyStoreException {
        Path file = pkiDir.resolve(CHAIN_FILE);
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(file);
        if (attributes.isEmpty()) {
            return List.of();
        }
        if (!attributes.get().isRegularFile()) {
            throw new KeyStoreException(file + " is not a regular file");
        }
        try {
            return MasterSuccessions.decodeChain(AtomicFiles.readSmall(file, MAX_CHAIN_BYTES));
        } catch (MalformedException e) {
            throw new KeyStoreException(file + ": " + e.getMessage(), e);
        }
    }

    static KeyPair readPrivate(Path pem) throws IOException, KeyStoreException {
        return MasterKeys.readPrivate(
                pem, AtomicFiles.attributes(pem).orElseThrow(() -> new KeyStoreException(pem + " is missing")));
    }
}
