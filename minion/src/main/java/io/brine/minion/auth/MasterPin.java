package io.brine.minion.auth;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.codec.MasterSuccessions;
import io.brine.protocol.codec.MasterSuccessions.Walk;
import io.brine.protocol.codec.Timestamps;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.message.MasterSuccession;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The master key this minion trusts (DESIGN.md §4.5): the one cached in {@code minion_master.pub}, else the one
 * whose fingerprint equals {@code master_finger}, else the first one seen (trust on first use). A different key is
 * never trusted; only removing the cached file (an admin's act) resets the pin.
 */
public final class MasterPin {

    public static final String FILE = "minion_master.pub";

    private final Path file;
    private final String masterFinger;
    private final Optional<PublicKey> signingKey;
    private volatile RSAPublicKey pinned;
    /** The master's key before the pinned one, which still signs publications until {@link #previousUntilMs}. */
    private volatile RSAPublicKey previous;

    private volatile long previousUntilMs;

    /** What an auth reply proved about the master key it carries. */
    public sealed interface Verdict {

        /**
         * Signed by the trusted key: the pinned one, or on first use the one it carries (matching master_finger).
         *
         * @param anchored whether the key was trusted before this reply: pinned, or named by {@code master_finger}.
         *                 On first use without master_finger anybody can make a reply that verifies with the key it
         *                 carries, so nothing final may follow from it (PROTOCOL.md 8.2 step 6)
         */
        record Authentic(RSAPublicKey key, boolean firstUse, boolean anchored) implements Verdict {}

        /**
         * Signed by a key that the reply's chain of succession records leads to, step by verified step, from the
         * pinned key (PROTOCOL.md 6.4): the master's key was rotated, and {@code key} is to be pinned.
         */
        record Succeeded(RSAPublicKey key) implements Verdict {}

        /** Carries the trusted key (or on first use a usable one) but is not signed by it: forged or damaged. */
        record Forged() implements Verdict {}

        /**
         * Carries another key than the pinned one or {@code master_finger}'s, or an unusable one.
         *
         * @param signedByPin whether the reply verified against the pinned key all the same; false for anything
         *                    an on-path attacker can make, and whenever nothing is pinned yet
         */
        record OtherKey(String reason, boolean signedByPin) implements Verdict {}
    }

    public MasterPin(Path pkiDir, String masterFinger) throws IOException, KeyFormatException {
        this(pkiDir, masterFinger, Optional.empty());
    }

    /**
     * @param signingKey the master signing key ({@code master_sign_pubkey}): when given, every new master key must be
     *                   signed by it (PROTOCOL.md 6.4)
     */
    public MasterPin(Path pkiDir, String masterFinger, Optional<PublicKey> signingKey)
            throws IOException, KeyFormatException {
        this.file = pkiDir.resolve(FILE);
        this.masterFinger = masterFinger;
        this.signingKey = signingKey;
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            pinned = Pem.readPublicKey(
                    new String(AtomicFiles.readSmall(file, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII));
        }
    }

    /**
     * Reads the master signing key's public half ({@code verify_master_pubkey_sign}: {@code pki_dir/master_sign.pub}):
     * a regular file, not a link, that neither group nor others may write (whoever can write it decides which master
     * keys this minion follows), holding one usable RSA public key.
     *
     * @throws IOException with the reason, for the admin (the minion does not start)
     */
    public static RSAPublicKey readSigningKey(Path file) throws IOException {
        PosixFileAttributes attributes = AtomicFiles.attributes(file)
                .orElseThrow(() -> new IOException(file
                        + " does not exist: verify_master_pubkey_sign needs the master signing key's public half there (copy"
                        + " it from the machine that holds the signing key)"));
        if (!attributes.isRegularFile()) {
            throw new IOException(file + " is not a regular file"
                    + (attributes.isSymbolicLink() ? " (a symbolic link: not followed)" : ""));
        }
        if (attributes.permissions().contains(PosixFilePermission.GROUP_WRITE)
                || attributes.permissions().contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new IOException(file + " is writable by group or others (mode "
                    + PosixFilePermissions.toString(attributes.permissions())
                    + "); whoever writes it decides which master keys are followed. Run:"
                    + " chmod 644 " + file);
        }
        try {
            return Pem.readPublicKey(
                    new String(AtomicFiles.readSmall(file, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII));
        } catch (KeyFormatException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    public Optional<RSAPublicKey> pinned() {
        return Optional.ofNullable(pinned);
    }

    /**
     * Authenticates an auth reply: its signature is checked against the pinned key before the key it carries is
     * looked at, so that what follows from a reply ({@link Verdict.OtherKey} included) is known to be authentic or
     * not. On first use there is nothing to check against but the key carried (and {@code master_finger}). Does not
     * pin: call {@link #pin} with an authentic first-use key once the reply is acted on.
     *
     * @param offeredDer the key the reply carries, SPKI DER
     * @param signedBy   whether the reply's signature verifies with a given key
     */
    public Verdict verify(byte[] offeredDer, Predicate<PublicKey> signedBy) {
        return verify(offeredDer, signedBy, List.of());
    }

    /**
     * As {@link #verify(byte[], Predicate)}, for a reply that shows the master's chain of succession records: a key
     * other than the pinned one is authentic when the chain leads to it from the pinned key, every step verified
     * ({@link MasterSuccessions#walk}), and the reply is signed by it. Any other chain (a gap, a loop, a bad
     * signature, a pin outside it) changes nothing: the reply is judged as one without a chain.
     */
    public Verdict verify(byte[] offeredDer, Predicate<PublicKey> signedBy, List<MasterSuccession> chain) {
        RSAPublicKey current = pinned;
        if (current != null
                && !chain.isEmpty()
                && !Arrays.equals(current.getEncoded(), offeredDer)
                && MasterSuccessions.walk(current, chain, signingKey) instanceof Walk.Verified verified
                && Arrays.equals(verified.newest().getEncoded(), offeredDer)) {
            return signedBy.test(verified.newest()) ? new Verdict.Succeeded(verified.newest()) : new Verdict.Forged();
        }
        boolean signedByPin = current != null && signedBy.test(current);
        RSAPublicKey offered;
        try {
            offered = RsaKeys.publicKeyFromDer(offeredDer);
        } catch (KeyFormatException e) {
            return new Verdict.OtherKey("master offered an unusable key: " + e.getMessage(), signedByPin);
        }
        String fingerprint = Fingerprints.of(offered);
        if (masterFinger != null && !masterFinger.equals(fingerprint)) {
            return new Verdict.OtherKey(
                    "master key fingerprint " + fingerprint + " is not master_finger " + masterFinger, signedByPin);
        }
        if (current != null) {
            if (!Arrays.equals(current.getEncoded(), offered.getEncoded())) {
                return new Verdict.OtherKey(
                        "master key changed: cached " + Fingerprints.of(current) + ", offered " + fingerprint
                                + ". If the master key was replaced on purpose, remove " + file,
                        signedByPin);
            }
            return signedByPin ? new Verdict.Authentic(current, false, true) : new Verdict.Forged();
        }
        return signedBy.test(offered)
                ? new Verdict.Authentic(offered, true, masterFinger != null)
                : new Verdict.Forged();
    }

    /**
     * Follows a rotation of the master's key shown in a session (PROTOCOL.md 6.4): walks {@code chain} from the pinned
     * key and, when every step verifies, pins its newest key (one atomic write of {@code minion_master.pub}) and
     * trusts the key before it for publications until that record's grace ends. Returns what the walk concluded;
     * a refused chain changes nothing.
     */
    public synchronized Walk follow(List<MasterSuccession> chain) throws IOException {
        RSAPublicKey current = pinned;
        if (current == null || chain.isEmpty()) {
            return new Walk.Refused("nothing pinned yet, or an empty chain");
        }
        MasterSuccession last = chain.get(chain.size() - 1);
        if (Arrays.equals(last.nextKey(), current.getEncoded())) {
            remember(chain); // already the newest: a second copy, or shown at auth
            return new Walk.Verified(current, last);
        }
        Walk walk = MasterSuccessions.walk(current, chain, signingKey);
        if (walk instanceof Walk.Verified verified) {
            pinAnew(verified.newest());
            remember(chain);
        }
        return walk;
    }

    /**
     * After an authentic reply of the pinned key that shows a chain ending at it: the key before it still signs
     * publications until the newest record's grace ends (a minion that pinned the new key at auth, or restarted).
     */
    public synchronized void remember(List<MasterSuccession> chain) {
        RSAPublicKey current = pinned;
        if (current == null || chain.isEmpty()) {
            return;
        }
        MasterSuccession last = chain.get(chain.size() - 1);
        if (!Arrays.equals(last.nextKey(), current.getEncoded())) {
            return;
        }
        try {
            previous = RsaKeys.publicKeyFromDer(last.previousKey());
            previousUntilMs = last.graceUntilMs();
        } catch (KeyFormatException e) {
            previous = null; // the chain walked already parsed it; nothing to trust otherwise
        }
    }

    /** Pins {@code key}, a successor the chain proved, in place of the pinned one. */
    public synchronized void pinAnew(RSAPublicKey key) throws IOException {
        AtomicFiles.write(file, Pem.bytes(Pem.publicKeySpki(key)), AtomicFiles.PUBLIC_READ);
        pinned = key;
    }

    /**
     * Whether the master signed something a minion checks against its pin (a publication, SessionUnknown,
     * KeyRotateReply): by the pinned key, or by the master's previous key while its grace lasts at {@code nowMs}
     * (stretched by the clock skew allowed, so that a minion's clock ahead of the master's loses nothing).
     */
    public boolean signedByMaster(Predicate<PublicKey> signedBy, long nowMs) {
        RSAPublicKey current = pinned;
        if (current == null) {
            return false;
        }
        if (signedBy.test(current)) {
            return true;
        }
        RSAPublicKey before = previous;
        return before != null
                && nowMs < previousUntilMs + Timestamps.MAX_CLOCK_SKEW.toMillis()
                && signedBy.test(before);
    }

    /** Saves a first-use key as {@code minion_master.pub}. */
    public void pin(RSAPublicKey key) throws IOException {
        if (pinned == null) {
            AtomicFiles.write(file, Pem.bytes(Pem.publicKeySpki(key)), AtomicFiles.PUBLIC_READ);
            pinned = key;
        }
    }

    public Path file() {
        return file;
    }
}
