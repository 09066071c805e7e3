package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.util.Arrays;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The master's key pair in {@code pki_dir}: {@code master.pem} (PKCS#1, 0400) and {@code master.pub} (SPKI, 0644). */
public final class MasterKeys {

    static final String PRIVATE_FILE = "master.pem";
    static final String PUBLIC_FILE = "master.pub";

    private static final Logger log = LoggerFactory.getLogger(MasterKeys.class);
    private static final int MAX_PEM_BYTES = Pem.MAX_PEM_CHARS;

    private MasterKeys() {}

    /**
     * Loads a key pair an admin installed, with the same checks as {@link #loadOrCreate}, and never generates one:
     * every master of a cluster must have the cluster's one key pair (minions pin it), so a master that made its own
     * would split the cluster.
     */
    public static KeyPair loadInstalled(Path pkiDir) throws IOException, KeyStoreException {
        if (AtomicFiles.attributes(pkiDir.resolve(PRIVATE_FILE)).isEmpty()) {
            throw new KeyStoreException(pkiDir.resolve(PRIVATE_FILE) + " is missing: in cluster mode every master"
                    + " uses the cluster's one master key pair; copy master.pem (mode 0400) and master.pub from the"
                    + " first master into " + pkiDir);
        }
        return loadOrCreate(pkiDir, RsaKeys.DEFAULT_BITS);
    }

    /** Loads the key pair, generating it on first use. The caller holds the store lock. */
    static KeyPair loadOrCreate(Path pkiDir, int keysize) throws IOException, KeyStoreException {
        MasterKeyRotation.complete(pkiDir);
        Path pem = pkiDir.resolve(PRIVATE_FILE);
        Path pub = pkiDir.resolve(PUBLIC_FILE);
        Optional<PosixFileAttributes> pemAttributes = AtomicFiles.attributes(pem);
        if (pemAttributes.isEmpty()) {
            if (AtomicFiles.attributes(pub).isPresent()) {
                throw new KeyStoreException(pub + " exists but " + pem + " does not; restore " + PRIVATE_FILE
                        + ", or remove " + PUBLIC_FILE + " to generate a new master key pair (every minion that"
                        + " pinned the old key will then refuse this master)");
            }
            log.info("Generating the master key pair ({} bits) in {}", keysize, pkiDir);
            KeyPair pair = RsaKeys.generate(keysize);
            // The private key first: a crash before master.pub is written is repaired on the next open.
            AtomicFiles.create(
                    pkiDir.resolve(PRIVATE_FILE),
                    Pem.bytes(Pem.privateKeyPkcs1(pair.getPrivate())),
                    AtomicFiles.OWNER_READ);
            AtomicFiles.create(
                    pkiDir.resolve(PUBLIC_FILE),
                    Pem.bytes(Pem.publicKeySpki(pair.getPublic())),
                    AtomicFiles.PUBLIC_READ);
            return pair;
        }
        KeyPair pair = readPrivate(pem, pemAttributes.get());
        Optional<PosixFileAttributes> pubAttributes = AtomicFiles.attributes(pub);
        if (pubAttributes.isEmpty()) {
            log.info("Writing the missing {} from {}", pub, pem);
            AtomicFiles.create(
                    pkiDir.resolve(PUBLIC_FILE),
                    Pem.bytes(Pem.publicKeySpki(pair.getPublic())),
                    AtomicFiles.PUBLIC_READ);
        } else {
            RSAPublicKey stored =
                    readPublic(pub).orElseThrow(() -> new KeyStoreException(pub + " is not a valid public key"));
            RSAPublicKey derived = (RSAPublicKey) pair.getPublic();
            if (!KeyLookup.sameKey(stored, derived)) {
                throw new KeyStoreException(pub + " does not match " + pem + "; remove " + PUBLIC_FILE
                        + " to write it again from the private key");
            }
        }
        return pair;
    }

    /**
     * Reads a master private key file ({@code master.pem}, or a rotation's), refusing a link, another file type or
     * a mode that lets group or others read it.
     */
    static KeyPair readPrivate(Path pem, PosixFileAttributes attributes) throws IOException, KeyStoreException {
        if (!attributes.isRegularFile()) {
            throw new KeyStoreException(pem + " is not a regular file"
                    + (attributes.isSymbolicLink() ? " (a symbolic link; the key store never follows links)" : ""));
        }
        if (PkiPermissions.groupOrOtherAccess(attributes)) {
            throw new KeyStoreException(pem + " is accessible by group or others (mode "
                    + PosixFilePermissions.toString(attributes.permissions()) + "); refusing to use it. Run: chmod 400 "
                    + pem);
        }
        KeyPair pair;
        byte[] bytes = AtomicFiles.readSmall(pem, MAX_PEM_BYTES);
        try {
            pair = Pem.readPrivateKey(new String(bytes, StandardCharsets.US_ASCII));
        } catch (KeyFormatException e) {
            throw new KeyStoreException(pem + ": " + e.getMessage(), e);
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
        return pair;
    }

    /** Reads {@code master.pub} in {@code pkiDir}; empty when it is absent. */
    public static Optional<RSAPublicKey> readPublicIn(Path pkiDir) throws IOException, KeyStoreException {
        return readPublic(pkiDir.resolve(PUBLIC_FILE));
    }

    /** Reads {@code master.pub}; empty when it is absent. */
    public static Optional<RSAPublicKey> readPublic(Path pub) throws IOException, KeyStoreException {
        Optional<PosixFileAttributes> attributes = AtomicFiles.attributes(pub);
        if (attributes.isEmpty()) {
            return Optional.empty();
        }
        if (!attributes.get().isRegularFile()) {
            throw new KeyStoreException(pub + " is not a regular file");
        }
        try {
            return Optional.of(Pem.readPublicKey(
                    new String(AtomicFiles.readSmall(pub, MAX_PEM_BYTES), StandardCharsets.US_ASCII)));
        } catch (KeyFormatException e) {
            throw new KeyStoreException(pub + ": " + e.getMessage(), e);
        }
    }
}
