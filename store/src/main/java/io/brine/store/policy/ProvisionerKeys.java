package io.brine.store.policy;

import io.brine.daemon.files.AtomicFiles;
import io.brine.daemon.files.TrustedPath;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.crypto.RsaKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The provisioners the master trusts: one SPKI PEM public key per {@code pki_dir/provisioners/NAME.pub}, found by
 * fingerprint. Re-read when the directory or a file changes (checked at most once a second, on use). A directory
 * or a file that fails the ownership rule ({@link TrustedPath}), and links, are ignored and logged (ERROR): whoever
 * can write there could mint grants.
 */
final class ProvisionerKeys {

    static final String DIR_NAME = "provisioners";

    /** A trusted provisioner: its file name without {@code .pub}, and its key. */
    record Provisioner(String name, RSAPublicKey key) {}

    private static final Logger LOG = LoggerFactory.getLogger(ProvisionerKeys.class);
    private static final TrustedPath TRUST = TrustedPath.forThisProcess();

    private final Path dir;
    private final Clock clock;
    private final Object lock = new Object();
    private volatile Map<String, Provisioner> byFingerprint = Map.of();
    private volatile long checkedAtMs = Long.MIN_VALUE;
    private List<Object> stamp;

    ProvisionerKeys(Path dir, Clock clock) {
        this.dir = dir;
        this.clock = clock;
        current(); // read now, so that problems are reported at start
    }

    Path dir() {
        return dir;
    }

    /** The trusted provisioner whose key has {@code fingerprint}. */
    Optional<Provisioner> byFingerprint(String fingerprint) {
        return Optional.ofNullable(current().get(fingerprint));
    }

    int size() {
        return current().size();
    }

    private Map<String, Provisioner> current() {
        long now = clock.millis();
        if (!WatchedFile.due(now, checkedAtMs)) {
            return byFingerprint;
        }
        synchronized (lock) {
            if (WatchedFile.due(now, checkedAtMs)) {
                checkedAtMs = now;
                reloadIfChangedLocked();
            }
            return byFingerprint;
        }
    }

    private void reloadIfChangedLocked() {
        List<Object> now = new ArrayList<>();
        List<Path> files = new ArrayList<>();
        try {
            PosixFileAttributes attributes = Files.readAttributes(dir, PosixFileAttributes.class);
            now.add(List.of(
                    String.valueOf(attributes.fileKey()), attributes.lastModifiedTime(), attributes.permissions()));
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "*.pub")) {
                for (Path file : entries) {
                    files.add(file);
                    PosixFileAttributes fileAttributes =
                            Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                    now.add(List.of(
                            file.getFileName().toString(),
                            fileAttributes.lastModifiedTime(),
                            fileAttributes.size(),
                            fileAttributes.permissions(),
                            fileAttributes.owner().getName(),
                            String.valueOf(fileAttributes.fileKey())));
                }
            }
            Optional<String> untrusted = TRUST.problem(dir);
            now.add(untrusted.orElse(""));
            if (now.equals(stamp)) {
                return;
            }
            stamp = now;
            if (untrusted.isPresent()) {
                LOG.error("Provisioner keys in {} ignored, none trusted: {}", dir, untrusted.get());
                byFingerprint = Map.of();
                return;
            }
            if (writableByOthers(attributes)) {
                LOG.warn(
                        "Provisioner keys in {} ignored: the directory is writable by group or others; run: chmod"
                                + " go-w {}",
                        dir,
                        dir);
                byFingerprint = Map.of();
                return;
            }
            byFingerprint = read(files);
            LOG.info("Provisioner keys: {} trusted in {}", byFingerprint.size(), dir);
        } catch (NoSuchFileException e) {
            if (!List.of("missing").equals(stamp)) {
                LOG.debug("No provisioner keys: {} does not exist", dir);
            }
            stamp = List.of("missing");
            byFingerprint = Map.of();
        } catch (IOException e) {
            List<Object> unreadable = List.of("unreadable", String.valueOf(e.getMessage()));
            if (!unreadable.equals(stamp)) {
                LOG.warn("Provisioner keys in {} unreadable, none trusted: {}", dir, e.getMessage());
            }
            stamp = unreadable;
            byFingerprint = Map.of();
        }
    }

    private static Map<String, Provisioner> read(List<Path> files) {
        Map<String, Provisioner> keys = new TreeMap<>();
        for (Path file : files) {
            String name = file.getFileName().toString();
            name = name.substring(0, name.length() - ".pub".length());
            try {
                PosixFileAttributes attributes =
                        Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (!attributes.isRegularFile()) {
                    LOG.warn("Provisioner key {} ignored: not a regular file (links are not followed)", file);
                    continue;
                }
                Optional<String> untrusted = TRUST.problem(file);
                if (untrusted.isPresent()) {
                    LOG.error("Provisioner key {} ignored: {}", file, untrusted.get());
                    continue;
                }
                if (writableByOthers(attributes)) {
                    LOG.warn("Provisioner key {} ignored: writable by group or others; run: chmod go-w {}", file, file);
                    continue;
                }
                RSAPublicKey key = RsaKeys.checkSize(Pem.readPublicKey(
                        new String(AtomicFiles.readSmall(file, Pem.MAX_PEM_CHARS), StandardCharsets.US_ASCII)));
                keys.put(Fingerprints.of(key), new Provisioner(name, key));
            } catch (IOException | KeyFormatException e) {
                LOG.warn("Provisioner key {} ignored: {}", file, e.getMessage());
            }
        }
        return Map.copyOf(keys);
    }

    private static boolean writableByOthers(PosixFileAttributes attributes) {
        return attributes.permissions().contains(PosixFilePermission.GROUP_WRITE)
                || attributes.permissions().contains(PosixFilePermission.OTHERS_WRITE);
    }
}
