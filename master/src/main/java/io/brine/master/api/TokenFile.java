package io.brine.master.api;

import io.brine.daemon.WarnInterval;
import io.brine.daemon.files.TrustedPath;
import io.brine.store.api.ApiTokens;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API tokens the master accepts: {@code pki_dir/api_tokens.json} as {@code brine-key api-token} last wrote it,
 * read again whenever the file changes (its inode, size or time: brine-key replaces it by rename), so a revocation
 * counts from the next request. Fails closed: a file that anyone but root and the master's user could write, or that
 * cannot be read, makes every token invalid until it is fixed, with one ERROR a minute naming the reason.
 */
final class TokenFile {

    private static final Logger LOG = LoggerFactory.getLogger(TokenFile.class);

    private record Loaded(Object fileKey, long size, long modifiedNs, List<ApiTokens.Entry> entries) {}

    private final Path file;
    private final TrustedPath trust;
    private final WarnInterval warn;
    private volatile Loaded loaded = new Loaded(null, -1, -1, List.of());

    TokenFile(Path file, TrustedPath trust, Clock clock) {
        this.file = file;
        this.trust = trust;
        this.warn = new WarnInterval(clock, 60_000);
    }

    /** The entry {@code token} belongs to (expired or not); empty for an unknown one. */
    Optional<ApiTokens.Entry> find(String token) {
        return ApiTokens.find(entries(), token);
    }

    /** The entry named {@code name} (expired or not), for a client certificate that names it; empty for none. */
    Optional<ApiTokens.Entry> named(String name) {
        return entries().stream().filter(entry -> entry.name().equals(name)).findFirst();
    }

    private List<ApiTokens.Entry> entries() {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException e) {
            problem("cannot be read: " + e.getMessage());
            return List.of();
        }
        // Checked at every request, not only when the file changes: a chmod changes neither its time nor its size.
        Optional<String> untrusted = trust.problem(file);
        if (untrusted.isPresent()) {
            problem(untrusted.get());
            return List.of();
        }
        Loaded current = loaded;
        long modified = attributes.lastModifiedTime().to(TimeUnit.NANOSECONDS);
        if (Objects.equals(current.fileKey(), attributes.fileKey())
                && current.size() == attributes.size()
                && current.modifiedNs() == modified) {
            return current.entries();
        }
        synchronized (this) {
            try {
                List<ApiTokens.Entry> entries = ApiTokens.read(file);
                loaded = new Loaded(attributes.fileKey(), attributes.size(), modified, entries);
                LOG.info("API tokens read from {}: {}", file, entries.size());
                return entries;
            } catch (IOException e) {
                problem(e.getMessage());
                return List.of();
            }
        }
    }

    private void problem(String reason) {
        loaded = new Loaded(null, -1, -1, List.of());
        long suppressed = warn.due();
        if (suppressed >= 0) {
            LOG.error(
                    "API tokens {}: no token is accepted until this is fixed: {}{}",
                    file,
                    reason,
                    suppressed > 0 ? " (" + suppressed + " more requests refused for it)" : "");
        }
    }
}
