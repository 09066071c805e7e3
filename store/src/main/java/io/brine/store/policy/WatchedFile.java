package io.brine.store.policy;

import io.brine.daemon.files.TrustedPath;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A policy's input file (autosign file, inventory, ...), re-read when it changes. No watcher thread: on use, at most
 * once a second, the file's identity, size, modification time and mode are compared with what was read last. A
 * file that group or others can write is ignored, as if it were empty, because whoever can write it decides who is
 * accepted; so is a missing, unreadable or oversized file. Each problem is logged once, when it appears.
 *
 * @param <T> what the file parses to
 */
final class WatchedFile<T> {

    /** Parses the file's bytes; logs its own per-line problems. Must not throw for any content. */
    interface Parser<T> {
        T parse(Path file, byte[] content);
    }

    /** What the file holds now, or why it is ignored. */
    record Loaded<T>(T value, Optional<String> problem) {}

    static final long CHECK_INTERVAL_MS = 1000;

    private static final Logger LOG = LoggerFactory.getLogger(WatchedFile.class);
    private static final TrustedPath TRUST = TrustedPath.forThisProcess();

    private final String option;
    private final Path file;
    private final Clock clock;
    private final Parser<T> parser;
    private final T empty;
    private final int maxBytes;
    private final Object lock = new Object();
    private volatile Loaded<T> loaded;
    private volatile long checkedAtMs = Long.MIN_VALUE;
    private List<Object> stamp;

    /**
     * @param option the config key naming the file, for log lines ({@code autosign_file})
     * @param empty  the value of an ignored file
     */
    WatchedFile(String option, Path file, Clock clock, Parser<T> parser, T empty, int maxBytes) {
        this.option = Objects.requireNonNull(option, "option");
        this.file = Objects.requireNonNull(file, "file");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.parser = Objects.requireNonNull(parser, "parser");
        this.empty = empty;
        this.maxBytes = maxBytes;
    }

    Path file() {
        return file;
    }

    /** The current content, re-read first when the file changed (checked at most once a second). */
    Loaded<T> current() {
        long now = clock.millis();
        Loaded<T> current = loaded;
        if (current != null && !due(now, checkedAtMs)) {
            return current;
        }
        synchronized (lock) {
            if (loaded != null && !due(now, checkedAtMs)) {
                return loaded;
            }
            checkedAtMs = now;
            reloadIfChangedLocked();
            return loaded;
        }
    }

    /** Whether a check made at {@code checkedAtMs} (MIN_VALUE: never) is due again at {@code now}. */
    static boolean due(long now, long checkedAtMs) {
        return checkedAtMs == Long.MIN_VALUE || now < checkedAtMs || now - checkedAtMs >= CHECK_INTERVAL_MS;
    }

    private void reloadIfChangedLocked() {
        Optional<String> untrusted = TRUST.problem(file);
        if (untrusted.isPresent()) {
            distrust(untrusted.get());
            return;
        }
        PosixFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, PosixFileAttributes.class);
        } catch (NoSuchFileException e) {
            ignore(List.of("missing"), "does not exist");
            return;
        } catch (IOException e) {
            ignore(List.of("unreadable", String.valueOf(e.getMessage())), "cannot be read: " + describe(e));
            return;
        }
        List<Object> now = List.of(
                String.valueOf(attributes.fileKey()),
                attributes.lastModifiedTime(),
                attributes.size(),
                attributes.permissions(),
                attributes.owner().getName());
        if (now.equals(stamp) && loaded != null) {
            return;
        }
        if (!attributes.isRegularFile()) {
            ignore(now, "is not a regular file");
            return;
        }
        if (attributes.permissions().contains(PosixFilePermission.GROUP_WRITE)
                || attributes.permissions().contains(PosixFilePermission.OTHERS_WRITE)) {
            ignore(
                    now,
                    "is writable by group or others, so anyone in them could decide who is accepted; run: "
                            + "chmod go-w " + file);
            return;
        }
        if (attributes.size() > maxBytes) {
            ignore(now, "is larger than " + maxBytes + " bytes");
            return;
        }
        byte[] content;
        try (InputStream in = Files.newInputStream(file)) {
            content = in.readNBytes(maxBytes + 1);
        } catch (IOException e) {
            ignore(now, "cannot be read: " + describe(e));
            return;
        }
        if (content.length > maxBytes) {
            ignore(now, "is larger than " + maxBytes + " bytes");
            return;
        }
        T value = parser.parse(file, content);
        boolean first = stamp == null;
        stamp = now;
        loaded = new Loaded<>(value, Optional.empty());
        LOG.info("{} {} {}", option, file, first ? "loaded" : "changed: reloaded");
    }

    /** The ownership rule is broken: ERROR at every check while it is, since an attacker may be deciding. */
    private void distrust(String problem) {
        List<Object> now = List.of("untrusted", problem);
        if (!now.equals(stamp) || loaded == null) {
            LOG.error(
                    "{} {} is not trusted: {}; the policy is disabled (accepts or rejects nothing) until fixed",
                    option,
                    file,
                    problem);
        }
        stamp = now;
        loaded = new Loaded<>(empty, Optional.of(option + " " + file + " is not trusted: " + problem));
    }

    private void ignore(List<Object> now, String problem) {
        if (!now.equals(stamp) || loaded == null) {
            LOG.warn("{} {} {}: ignored, it accepts or rejects nothing until fixed", option, file, problem);
        }
        stamp = now;
        loaded = new Loaded<>(empty, Optional.of(option + " " + file + " " + problem));
    }

    private static String describe(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        return e.getMessage() != null ? e.getMessage() : e.toString();
    }
}
