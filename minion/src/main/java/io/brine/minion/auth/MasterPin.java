package io.brine.minion.auth;

import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.daemon.files.AtomicFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.interfaces.RSAPublicKey;
import java.util.Arrays;
import java.util.Optional;

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

    /** The outcome of checking an offered master key. */
    public sealed interface Check {
        record Trusted(RSAPublicKey key, boolean firstUse) implements Check {
        }

        record Mismatch(String reason) implements Check {
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
     * Checks the key a master presented (SPKI DER). Does not pin it: call {@link #pin} once the reply it came in is
     * verified with it.
     */
    public Check check(byte[] offeredDer) {
        RSAPublicKey offered;
        try {
            offered = RsaKeys.publicKeyFromDer(offeredDer);
        } catch (KeyFormatException e) {
            return new Check.Mismatch("master offered an unusable key: " + e.getMessage());
        }
        String fingerprint = Fingerprints.of(offered);
        if (masterFinger != null && !masterFinger.equals(fingerprint)) {
            return new Check.Mismatch("master key fingerprint " + fingerprint + " is not master_finger "
                    + masterFinger);
        }
        RSAPublicKey current = pinned;
        if (current != null) {
            if (!Arrays.equals(current.getEncoded(), offered.getEncoded())) {
                return new Check.Mismatch("master key changed: cached " + Fingerprints.of(current) + ", offered "
                        + fingerprint + ". If the master key was replaced on purpose, remove " + file);
            }
            return new Check.Trusted(current, false);
        }
        return new Check.Trusted(offered, true);
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
