package io.brine.store.keys;

import io.brine.daemon.WarnInterval;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keys a master has already checked in full, by the SHA-256 of their exact PEM bytes, kept in
 * {@code pki_dir/.checked_keys} so that a start does not run every stored key's small-factor check again
 * ({@link RsaKeys#checkFactors}: most of a start's CPU at thousands of keys). Bytes found here skip that one check;
 * every other check of {@link Pem#readPublicKey} still runs, and bytes not found here (a key copied into
 * {@code minions/} by hand, another key under the same id) are checked in full.
 *
 * <p>Who else can write the file: it is trusted only when it is a regular file (not a link) owned by the pki dir's
 * owner and writable by nobody else, names this build's checks ({@link RsaKeys#CHECKS}), is at most
 * {@link #MAX_BYTES}, and carries an HMAC-SHA256 under {@code pki_dir/.checked_keys.secret}: 32 random bytes the
 * master creates once (mode 0600, whole or not at all) and trusts only as a regular file of the pki dir's owner that
 * nobody else can read or write, as private as {@code master.pem} beside it, so nobody who cannot read the pki dir's
 * secrets can add an entry. The secret is not the master key: an entry says only that these bytes passed these
 * checks, which a master key rotation does not change, so a rotation costs the next start nothing and says nothing.
 * A file that fails any of these is ignored as a whole, with a warning, and replaced at the next save; one of an
 * earlier format or of other checks (an upgrade) is replaced the same way with an INFO line. A process that is not
 * a master (brine-key) checks everything and saves nothing. Written atomically (temp, fsync, rename), mode 0600, at
 * most {@link #MAX_ENTRIES} keys: the store's keys when it opens and when it closes. The two modes are two
 * implementations: {@link None} (check everything, remember nothing) and {@link InFile}.
 */
public abstract sealed class CheckedKeys permits CheckedKeys.None, CheckedKeys.InFile {

    public static final String FILE_NAME = ".checked_keys";

    /** The HMAC key of {@link #FILE_NAME}, beside it. */
    public static final String SECRET_FILE_NAME = ".checked_keys.secret";

    static final int SECRET_BYTES = 32;

    /** Ten times the fleet brine is sized for; a store holding more keys checks the rest in full at each start. */
    static final int MAX_ENTRIES = 100_000;

    private static final byte[] MAGIC = "brine checked keys\n".getBytes(StandardCharsets.US_ASCII);
    /** 2: keyed by {@link #SECRET_FILE_NAME} (1 was keyed from the master key). */
    private static final int FORMAT = 2;

    private static final int DIGEST_BYTES = 32;
    private static final int HEADER_BYTES = MAGIC.length + 3 * Integer.BYTES;
    static final int MAX_BYTES = HEADER_BYTES + MAX_ENTRIES * DIGEST_BYTES + DIGEST_BYTES;

    private static final Logger log = LoggerFactory.getLogger(CheckedKeys.class);
    private static final CheckedKeys NONE = new None();

    private final AtomicLong fullChecks = new AtomicLong();

    private CheckedKeys() {}

    /** Checks every key in full and remembers nothing: for a store opened without the master key. */
    public static CheckedKeys none() {
        return NONE;
    }

    /**
     * The checked keys of the master whose pki dir is {@code pkiDir}, creating its secret the first time. Without a
     * usable secret (it cannot be read or written: logged) every key is checked in full and nothing is saved.
     */
    public static CheckedKeys open(Path pkiDir) {
        Path secretFile = pkiDir.resolve(SECRET_FILE_NAME);
        byte[] secret;
        boolean fresh;
        try {
            Optional<byte[]> existing = readSecret(secretFile);
            fresh = existing.isEmpty();
            secret = fresh ? createSecret(secretFile) : existing.get();
        } catch (IOException | RuntimeException e) {
            SECRET_WARNINGS.warn(
                    log, "Cannot use {}: {}; every key is checked in full at each start", secretFile, e.toString());
            return new None();
        }
        InFile checked = new InFile(pkiDir.resolve(FILE_NAME), secret);
        checked.known = checked.load(fresh);
        return checked;
    }

    private static final WarnInterval SECRET_WARNINGS = new WarnInterval(Clock.systemUTC(), 60_000);

    /** The secret, or empty when there is none or it cannot be trusted (logged; the caller makes a new one). */
    private static Optional<byte[]> readSecret(Path file) throws IOException {
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(file);
        if (attributes.isEmpty()) {
            return Optional.empty();
        }
        PosixFileAttributes a = attributes.get();
        String problem = !a.isRegularFile()
                ? (a.isSymbolicLink() ? "is a symbolic link" : "is not a regular file")
                : a.size() != SECRET_BYTES
                        ? "is not " + SECRET_BYTES + " bytes"
                        : !a.owner().equals(Files.getOwner(file.getParent(), LinkOption.NOFOLLOW_LINKS))
                                ? "is not owned by the pki dir's owner"
                                : PkiPermissions.groupOrOtherAccess(a)
                                        ? "is readable or writable by group or others"
                                        : null;
        if (problem == null) {
            byte[] secret = AtomicFiles.readSmall(file, SECRET_BYTES);
            if (secret.length == SECRET_BYTES) {
                return Optional.of(secret);
            }
            problem = "changed while read";
        }
        SECRET_WARNINGS.warn(log, "{} {}: replaced, every key is checked in full once", file, problem);
        if (!a.isRegularFile() && !a.isSymbolicLink()) {
            throw new IOException(file + " " + problem);
        }
        AtomicFiles.delete(file);
        return Optional.empty();
    }

    /** A new secret, created whole or not at all; another master process's, if it created one first. */
    private static byte[] createSecret(Path file) throws IOException {
        byte[] secret = new byte[SECRET_BYTES];
        new SecureRandom().nextBytes(secret);
        try {
            AtomicFiles.create(file, secret, AtomicFiles.OWNER_RW);
            return secret;
        } catch (FileAlreadyExistsException e) {
            return readSecret(file).orElseThrow(() -> new IOException(file + " was replaced while created"));
        }
    }

    /**
     * Reads an RSA public key from PEM as {@link Pem#readPublicKey} does, skipping the small-factor check for bytes
     * this master has checked before.
     */
    public abstract RSAPublicKey readPublicKey(byte[] pem) throws KeyFormatException;

    /** How many keys {@link #readPublicKey} checked in full (a test's view). */
    public long fullChecks() {
        return fullChecks.get();
    }

    /**
     * Adds the keys {@link #readPublicKey} checked in full to the file (a store's first read): nothing is written when
     * every key was found in it. Cheaper than {@link #save}, which encodes every key; a failure is logged.
     */
    public abstract void saveChecked();

    /**
     * Records {@code keys} (a store's keys, each checked in full when it entered the store) as the file's content, by
     * the digest of their canonical PEM (as the store writes them); at most {@link #MAX_ENTRIES}. Writes only when
     * that differs from what the file holds; a failure is logged, not thrown: the file only saves work.
     */
    public abstract void save(Collection<RSAPublicKey> keys);

    /** Reads {@code text} with every check, and counts it. */
    RSAPublicKey readInFull(String text) throws KeyFormatException {
        fullChecks.incrementAndGet();
        return Pem.readPublicKey(text);
    }

    /** Checks every key in full and remembers nothing. */
    static final class None extends CheckedKeys {
        @Override
        public RSAPublicKey readPublicKey(byte[] pem) throws KeyFormatException {
            return readInFull(new String(pem, StandardCharsets.US_ASCII));
        }

        @Override
        public void saveChecked() {}

        @Override
        public void save(Collection<RSAPublicKey> keys) {}
    }

    /** The keys checked before, in {@link #FILE_NAME} under the HMAC of {@link #SECRET_FILE_NAME}. */
    static final class InFile extends CheckedKeys {
        private final Path file;
        private final byte[] macKey;
        /** The digests the file held when opened, then those of the last save. */
        private volatile Set<Digest> known;
        /** Bytes {@link #readPublicKey} checked in full since the last save, and passed. */
        private final Set<Digest> passed = ConcurrentHashMap.newKeySet();
        /** A file was there but not used: the next save replaces it even with nothing to record. */
        private volatile boolean ignored;

        /**
         * Keys read from bytes other than their canonical PEM (a key copied in by hand), by modulus, with those bytes'
         * digest: {@link #save} records both, or such a key would be checked in full at every start.
         */
        private final Map<BigInteger, Digest> readAs = new ConcurrentHashMap<>();

        private final WarnInterval warnings = new WarnInterval(Clock.systemUTC(), 60_000);

        private InFile(Path file, byte[] macKey) {
            this.file = file;
            this.macKey = macKey;
            this.known = Set.of();
        }

        @Override
        public RSAPublicKey readPublicKey(byte[] pem) throws KeyFormatException {
            String text = new String(pem, StandardCharsets.US_ASCII);
            Digest digest = Digest.of(pem);
            if (known.contains(digest)) {
                return remember(Pem.readOfferedPublicKey(text), digest);
            }
            RSAPublicKey key = readInFull(text);
            passed.add(digest);
            return remember(key, digest);
        }

        private RSAPublicKey remember(RSAPublicKey key, Digest digest) {
            if (!Digest.of(Pem.bytes(Pem.publicKeySpki(key))).equals(digest)) {
                readAs.put(key.getModulus(), digest);
            }
            return key;
        }

        @Override
        public void saveChecked() {
            if (passed.isEmpty() && !ignored) {
                return;
            }
            Set<Digest> digests = new HashSet<>(known);
            for (Digest digest : passed) {
                if (digests.size() == MAX_ENTRIES) {
                    break;
                }
                digests.add(digest);
            }
            write(digests);
        }

        @Override
        public void save(Collection<RSAPublicKey> keys) {
            Set<Digest> digests = new HashSet<>();
            Map<BigInteger, Digest> stillRead = new HashMap<>();
            for (RSAPublicKey key : keys) {
                if (digests.size() == MAX_ENTRIES) {
                    break;
                }
                digests.add(Digest.of(Pem.bytes(Pem.publicKeySpki(key))));
                Digest raw = readAs.get(key.getModulus());
                if (raw != null && digests.size() < MAX_ENTRIES) {
                    digests.add(raw);
                    stillRead.put(key.getModulus(), raw);
                }
            }
            readAs.keySet().retainAll(stillRead.keySet());
            if (!digests.equals(known) || ignored) {
                write(digests);
            }
        }

        private synchronized void write(Set<Digest> digests) {
            try {
                AtomicFiles.write(file, encode(digests, macKey), AtomicFiles.OWNER_RW);
                passed.clear();
                known = Set.copyOf(digests);
                ignored = false;
            } catch (IOException | RuntimeException e) {
                warnings.warn(log, "Cannot write {}: {}; the next start checks every key in full", file, e.toString());
            }
        }

        private Set<Digest> load(boolean freshSecret) {
            try {
                Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(file);
                if (attributes.isEmpty()) {
                    return Set.of();
                }
                String problem = problem(attributes.get());
                if (problem == null) {
                    byte[] bytes = AtomicFiles.readSmall(file, MAX_BYTES);
                    Set<Digest> digests = decode(bytes, macKey);
                    if (digests != null) {
                        return digests;
                    }
                    if (freshSecret || olderVersion(bytes)) {
                        // An upgrade (an earlier format, or checks raised since) or the secret made just now: expected.
                        log.info(
                                "{} is of an earlier version of brine or its secret is new: every key is checked in full"
                                        + " once and the file rewritten",
                                file);
                        ignored = true;
                        return Set.of();
                    }
                    problem = "is damaged or not under " + SECRET_FILE_NAME;
                }
                warnings.warn(
                        log, "{} {}: ignored, every key is checked in full and the file rewritten", file, problem);
            } catch (IOException | RuntimeException e) {
                warnings.warn(log, "Cannot read {}: {}; every key is checked in full", file, e.toString());
            }
            ignored = true;
            return Set.of();
        }

        private String problem(PosixFileAttributes attributes) throws IOException {
            if (!attributes.isRegularFile()) {
                return attributes.isSymbolicLink() ? "is a symbolic link" : "is not a regular file";
            }
            if (attributes.size() > MAX_BYTES) {
                return "is larger than " + MAX_BYTES + " bytes";
            }
            if (!attributes.owner().equals(Files.getOwner(file.getParent(), LinkOption.NOFOLLOW_LINKS))) {
                return "is owned by " + attributes.owner().getName() + ", not by the pki dir's owner";
            }
            if (PkiPermissions.groupOrOtherWrite(attributes)) {
                return "is writable by group or others";
            }
            return null;
        }
    }

    static byte[] encode(Set<Digest> digests, byte[] macKey) {
        ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + digests.size() * DIGEST_BYTES + DIGEST_BYTES);
        out.put(MAGIC).putInt(FORMAT).putInt(RsaKeys.CHECKS).putInt(digests.size());
        digests.forEach(d -> out.put(d.bytes()));
        out.put(mac(macKey, out.array(), out.position()));
        return out.array();
    }

    /** Whether {@code bytes} begin as this file does but name another format or other checks (unauthenticated). */
    private static boolean olderVersion(byte[] bytes) {
        if (bytes.length < HEADER_BYTES || !Arrays.equals(bytes, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
            return false;
        }
        ByteBuffer in = ByteBuffer.wrap(bytes, MAGIC.length, 2 * Integer.BYTES);
        return in.getInt() != FORMAT || in.getInt() != RsaKeys.CHECKS;
    }

    /** The digests in {@code bytes}, or null when they are not a whole file of this format, checks and key. */
    static Set<Digest> decode(byte[] bytes, byte[] macKey) {
        if (bytes.length < HEADER_BYTES + DIGEST_BYTES || bytes.length > MAX_BYTES) {
            return null;
        }
        int body = bytes.length - DIGEST_BYTES;
        if (!MessageDigest.isEqual(mac(macKey, bytes, body), Arrays.copyOfRange(bytes, body, bytes.length))) {
            return null;
        }
        ByteBuffer in = ByteBuffer.wrap(bytes, 0, body);
        byte[] magic = new byte[MAGIC.length];
        in.get(magic);
        int count;
        if (!Arrays.equals(magic, MAGIC)
                || in.getInt() != FORMAT
                || in.getInt() != RsaKeys.CHECKS
                || (count = in.getInt()) < 0
                || count > MAX_ENTRIES
                || in.remaining() != (long) count * DIGEST_BYTES) {
            return null;
        }
        Set<Digest> digests = new HashSet<>(count * 2);
        for (int i = 0; i < count; i++) {
            byte[] digest = new byte[DIGEST_BYTES];
            in.get(digest);
            digests.add(new Digest(digest));
        }
        return Collections.unmodifiableSet(digests);
    }

    private static byte[] mac(byte[] key, byte[] bytes, int length) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(bytes, 0, length);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks HmacSHA256", e);
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks SHA-256", e);
        }
    }

    /** The SHA-256 of a key's PEM bytes. */
    record Digest(byte[] bytes) {

        static Digest of(byte[] pem) {
            return new Digest(sha256().digest(pem));
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Digest d && Arrays.equals(bytes, d.bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }

        @Override
        public String toString() {
            return HexFormat.of().formatHex(bytes);
        }
    }
}
