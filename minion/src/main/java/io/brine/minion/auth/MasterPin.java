package io.brine.minion.auth;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.util.Arrays;
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
    private volatile RSAPublicKey pinned;

    /** What an auth reply proved about the master key it carries. */
    public sealed interface Verdict {

        /**
         * Signed by the trusted key: the pinned one, or on first use the one it carries (matching master_finger).
         *
         * @param anchored whether the key was trusted before this reply: pinned, or named by {@code master_finger}.
         *                 On first use without master_finger anybody can make a reply that verifies with the key it
         *                 carries, so nothing final may follow from it (PROTOCOL.md 8.2 step 6)
         */
        record Authentic(RSAPublicKey key, boolean firstUse, boolean anchored) implements Verdict {
        }

        /** Carries the trusted key (or on first use a usable one) but is not signed by it: forged or damaged. */
        record Forged() implements Verdict {
        }

        /**
         * Carries another key than the pinned one or {@code master_finger}'s, or an unusable one.
         *
         * @param signedByPin whether the reply verified against the pinned key all the same; false for anything
         *                    an on-path attacker can make, and whenever nothing is pinned yet
         */
        record OtherKey(String reason, boolean signedByPin) implements Verdict {
        }
    }

    public MasterPin(Path pkiDir, String masterFinger) throws IOException, KeyFormatException {
        this.file = pkiDir.resolve(FILE);
        this.masterFinger = masterFinger;
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            pinned = Pem.readPublicKey(new String(AtomicFiles.readSmall(file, Pem.MAX_PEM_CHARS),
                    StandardCharsets.US_ASCII));
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
        RSAPublicKey current = pinned;
        boolean signedByPin = current != null && signedBy.test(current);
        RSAPublicKey offered;
        try {
            offered = RsaKeys.publicKeyFromDer(offeredDer);
        } catch (KeyFormatException e) {
            return new Verdict.OtherKey("master offered an unusable key: " + e.getMessage(), signedByPin);
        }
        String fingerprint = Fingerprints.of(offered);
        if (masterFinger != null && !masterFinger.equals(fingerprint)) {
            return new Verdict.OtherKey("master key fingerprint " + fingerprint + " is not master_finger "
                    + masterFinger, signedByPin);
        }
        if (current != null) {
            if (!Arrays.equals(current.getEncoded(), offered.getEncoded())) {
                return new Verdict.OtherKey("master key changed: cached " + Fingerprints.of(current) + ", offered "
                        + fingerprint + ". If the master key was replaced on purpose, remove " + file, signedByPin);
            }
            return signedByPin ? new Verdict.Authentic(current, false, true) : new Verdict.Forged();
        }
        return signedBy.test(offered) ? new Verdict.Authentic(offered, true, masterFinger != null)
                : new Verdict.Forged();
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
