package io.brine.store.api;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.brine.daemon.config.MasterConfig.AutosignToken;
import io.brine.daemon.files.AtomicFiles;
import io.brine.protocol.MinionIds;
import io.brine.store.policy.TokenHashes;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The HTTP API's bearer tokens ({@code pki_dir/api_tokens.json}): made, listed and revoked by {@code brine-key
 * api-token}, read by the master. Only a salted SHA-256 of each token is stored ({@link TokenHashes}, as for autosign
 * tokens: the tokens are 32 random bytes, so a slow hash would only slow the master), with its name, ACL and expiry;
 * the token itself is printed once. The file is written whole (temp, fsync, rename; mode 0600) under its own lock
 * file, so two brine-key runs do not lose each other's change; the master trusts it only when nobody but root and its
 * own user can write it (TrustedPath, checked where it is read).
 */
public final class ApiTokens {

    public static final String FILE_NAME = "api_tokens.json";
    private static final String LOCK_NAME = ".api_tokens.lock";
    /** Tokens at most: each request is checked against every entry. */
    public static final int MAX_TOKENS = 1000;
    /** The file's size at most: a larger one is refused, not read. */
    public static final int MAX_FILE_BYTES = 1024 * 1024;
    /** Every token starts with this, so that a leaked one is recognised by scanners. */
    public static final String PREFIX = "brine_";

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(SerializationFeature.INDENT_OUTPUT);

    /**
     * One token.
     *
     * @param targets globs on minion ids the token may publish to and see events of
     * @param functions globs on the functions it may publish
     * @param keyAdmin whether it may accept, reject and delete keys
     * @param expiresMs when it stops working (ms since the epoch); 0 for never
     */
    public record Entry(
            String name,
            String salt,
            String sha256,
            List<String> targets,
            List<String> functions,
            boolean keyAdmin,
            long createdMs,
            long expiresMs) {
        public Entry {
            MinionIds.requireValid(name);
            new AutosignToken("*", salt, sha256, false); // checks their shape
            targets = List.copyOf(targets);
            functions = List.copyOf(functions);
        }

        public boolean expired(long nowMs) {
            return expiresMs != 0 && nowMs >= expiresMs;
        }

        /** Whether {@code token} is this entry's; constant time in the hash comparison. */
        public boolean matches(String token) {
            return TokenHashes.matches(new AutosignToken("*", salt, sha256, false), token);
        }

        @Override
        public String toString() {
            return "ApiToken[" + name + "]";
        }
    }

    /** A token just made: its entry and the token, which is not stored anywhere. */
    public record Created(Entry entry, String token) {
        @Override
        public String toString() {
            return "Created[" + entry.name() + "]";
        }
    }

    private record Document(List<Entry> tokens) {}

    private ApiTokens() {}

    public static Path file(Path pkiDir) {
        return pkiDir.resolve(FILE_NAME);
    }

    /**
     * The entries of {@code file}; none when it does not exist.
     *
     * @throws IOException when it cannot be read or is not a token file (the message says why)
     */
    public static List<Entry> read(Path file) throws IOException {
        byte[] bytes;
        try {
            if (Files.isSymbolicLink(file)) {
                throw new IOException(file + " is a symbolic link; not followed");
            }
            bytes = AtomicFiles.readSmall(file, MAX_FILE_BYTES);
        } catch (NoSuchFileException e) {
            return List.of();
        }
        try {
            List<Entry> entries =
                    JSON.readValue(bytes, new TypeReference<Document>() {}).tokens();
            if (entries == null) {
                throw new IOException(file + ": no \"tokens\" list");
            }
            if (entries.size() > MAX_TOKENS) {
                throw new IOException(file + ": more than " + MAX_TOKENS + " tokens");
            }
            return List.copyOf(entries);
        } catch (JacksonException | IllegalArgumentException e) {
            throw new IOException(
                    file + " is not a token file written by brine-key: "
                            + e.getMessage().lines().findFirst().orElse(""),
                    e);
        }
    }

    /**
     * Makes a token {@code name}, valid for {@code expires} (null: no expiry), and stores its hash.
     *
     * @throws IllegalArgumentException when a token of that name exists, or at {@value #MAX_TOKENS}
     */
    public static Created create(
            Path pkiDir,
            String name,
            List<String> targets,
            List<String> functions,
            boolean keyAdmin,
            Duration expires,
            Clock clock)
            throws IOException {
        MinionIds.requireValid(name);
        String token = PREFIX + TokenHashes.generate();
        AutosignToken hash = TokenHashes.entry("*", token, false);
        long now = clock.millis();
        Entry entry = new Entry(
                name,
                hash.salt(),
                hash.sha256(),
                targets,
                functions,
                keyAdmin,
                now,
                expires == null ? 0 : now + expires.toMillis());
        change(pkiDir, entries -> {
            if (entries.stream().anyMatch(e -> e.name().equals(name))) {
                throw new IllegalArgumentException("a token named " + name + " exists; revoke it first");
            }
            if (entries.size() >= MAX_TOKENS) {
                throw new IllegalArgumentException("there are " + MAX_TOKENS + " tokens already");
            }
            entries.add(entry);
            return true;
        });
        return new Created(entry, token);
    }

    /** Removes token {@code name}; false when there was none. */
    public static boolean revoke(Path pkiDir, String name) throws IOException {
        return change(pkiDir, entries -> entries.removeIf(e -> e.name().equals(name)));
    }

    private interface Change {
        boolean apply(List<Entry> entries) throws IOException;
    }

    private static boolean change(Path pkiDir, Change change) throws IOException {
        Objects.requireNonNull(pkiDir, "pkiDir");
        AtomicFiles.ensureDirectory(pkiDir);
        Path lockFile = pkiDir.resolve(LOCK_NAME);
        try (FileChannel channel = FileChannel.open(
                        lockFile,
                        Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                        PosixFilePermissions.asFileAttribute(AtomicFiles.OWNER_RW));
                FileLock lock = channel.lock()) {
            Path file = file(pkiDir);
            List<Entry> entries = new ArrayList<>(read(file));
            if (!change.apply(entries)) {
                return false;
            }
            AtomicFiles.write(file, JSON.writeValueAsBytes(new Document(entries)), AtomicFiles.OWNER_RW);
            return true;
        }
    }

    /** The entry {@code token} belongs to, of {@code entries}. */
    public static Optional<Entry> find(List<Entry> entries, String token) {
        if (!token.startsWith(PREFIX) || token.length() > 200) {
            return Optional.empty();
        }
        Entry found = null;
        for (Entry entry : entries) { // every entry, whichever matches: no timing on where it is
            if (entry.matches(token)) {
                found = entry;
            }
        }
        return Optional.ofNullable(found);
    }
}
