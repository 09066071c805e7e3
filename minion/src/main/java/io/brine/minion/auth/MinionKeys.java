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
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The minion's own key pair, in Salt's file names: {@code minion.pem} (0400) and {@code minion.pub} (0644). */
public final class MinionKeys {

    private static final Logger LOG = LoggerFactory.getLogger(MinionKeys.class);
    public static final String PRIVATE_FILE = "minion.pem";
    public static final String PUBLIC_FILE = "minion.pub";

    private MinionKeys() {}

    /**
     * The key pair as the minion uses it (from {@code minion.pem}, refused when group or others may read it), or empty
     * when it has none yet; creates nothing ({@code brine-minion --fingerprint}).
     */
    public static Optional<KeyPair> load(Path pkiDir) throws IOException, KeyFormatException {
        Path privateFile = pkiDir.resolve(PRIVATE_FILE);
        if (!Files.exists(privateFile, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        refuseReadableByOthers(privateFile);
        return Optional.of(Pem.readPrivateKey(
                new String(AtomicFiles.readSmall(privateFile, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII)));
    }

    /** Loads the key pair, or creates it on first start and logs its fingerprint for the admin to compare. */
    public static KeyPair loadOrCreate(Path pkiDir, int keysize) throws IOException, KeyFormatException {
        AtomicFiles.ensureDirectory(pkiDir);
        Path privateFile = pkiDir.resolve(PRIVATE_FILE);
        Path publicFile = pkiDir.resolve(PUBLIC_FILE);
        Optional<KeyPair> loaded = load(pkiDir);
        if (loaded.isPresent()) {
            KeyPair pair = loaded.get();
            // Missing, or left with the old key by a crash during a rotation's promotion (MinionKeyring).
            if (!Files.exists(publicFile, LinkOption.NOFOLLOW_LINKS) || !matches(publicFile, pair)) {
                AtomicFiles.write(publicFile, Pem.bytes(Pem.publicKeySpki(pair.getPublic())), AtomicFiles.PUBLIC_READ);
            }
            LOG.info("Minion key {} loaded, fingerprint {}", privateFile, Fingerprints.of(pair.getPublic()));
            return pair;
        }
        LOG.info("Generating a {}-bit RSA key pair in {}", keysize, pkiDir);
        KeyPair pair = RsaKeys.generate(keysize);
        AtomicFiles.write(publicFile, Pem.bytes(Pem.publicKeySpki(pair.getPublic())), AtomicFiles.PUBLIC_READ);
        AtomicFiles.create(privateFile, Pem.bytes(Pem.privateKeyPkcs1(pair.getPrivate())), AtomicFiles.OWNER_READ);
        LOG.info(
                "Minion key created, fingerprint {} (compare with `brine-key -f ID` on the master)",
                Fingerprints.of(pair.getPublic()));
        return pair;
    }

    private static boolean matches(Path publicFile, KeyPair pair) {
        try {
            return Pem.readPublicKey(
                            new String(AtomicFiles.readSmall(publicFile, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII))
                    .equals(pair.getPublic());
        } catch (IOException | KeyFormatException | RuntimeException e) {
            return false;
        }
    }

    static void refuseReadableByOthers(Path file) throws IOException {
        Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
        if (permissions.contains(PosixFilePermission.GROUP_READ)
                || permissions.contains(PosixFilePermission.OTHERS_READ)
                || permissions.contains(PosixFilePermission.GROUP_WRITE)
                || permissions.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new IOException(file + " is readable or writable by group or others ("
                    + PosixFilePermissions.toString(permissions)
                    + "): refusing to use it; run chmod 400 " + file);
        }
    }
}
