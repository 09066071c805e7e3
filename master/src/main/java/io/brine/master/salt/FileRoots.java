package io.brine.master.salt;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.brine.daemon.WarnInterval;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemLoopException;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Salt's {@code roots} file server on disk, read-only: {@code file_roots} by environment, each a list of directories
 * searched in order. Confined (SALT.md §9): a path is relative, free of {@code ..} and hidden segments, and must
 * resolve, symlinks followed, to a regular file inside the root it was found in (Salt's CVE-2024-22232 was a path
 * that left it); {@code file_ignore_regex} and {@code file_ignore_glob} hide what they match, and hidden or ignored
 * stays what a link points at: a link to {@code .git/config} serves nothing. The listing of an
 * environment is kept for {@code fileserver_list_cache_time} and hashes for as long as a file's size, modification
 * time and inode stay the same, so that a fleet's {@code state.apply} walks and hashes the tree once, not once per
 * minion. Thread-safe.
 */
public final class FileRoots {

    private static final Logger LOG = LoggerFactory.getLogger(FileRoots.class);
    /** Entries (files, directories, links) one environment's listing holds at most; the rest is left out, logged. */
    public static final int MAX_ENTRIES = 100_000;
    /** Hashes kept at most. */
    static final int MAX_HASHES = 100_000;
    /** Salt's {@code hash_type} names and their JCA algorithms. */
    public static final Map<String, String> HASH_TYPES = Map.of(
            "md5", "MD5", "sha1", "SHA-1", "sha224", "SHA-224", "sha256", "SHA-256", "sha384", "SHA-384", "sha512",
            "SHA-512");

    /**
     * @param roots {@code file_roots}: each environment's directories, absolute, in search order
     * @param ignoreRegex {@code file_ignore_regex}: a relative path any of them finds is not served
     * @param ignoreGlob {@code file_ignore_glob}: fnmatch patterns (a {@code *} crosses {@code /}, as in Salt)
     * @param hashType {@code hash_type}, one of {@link #HASH_TYPES}
     * @param listCacheTime {@code fileserver_list_cache_time}: how long a listing is reused
     * @param maxEntries the bound of one environment's listing ({@link #MAX_ENTRIES} unless a test says less)
     */
    public record Options(
            Map<String, List<Path>> roots,
            List<Pattern> ignoreRegex,
            List<String> ignoreGlob,
            String hashType,
            Duration listCacheTime,
            int maxEntries) {
        public Options {
            Map<String, List<Path>> copy = new LinkedHashMap<>();
            roots.forEach((env, dirs) -> copy.put(env, List.copyOf(dirs)));
            roots = Collections.unmodifiableMap(copy);
            ignoreRegex = List.copyOf(ignoreRegex);
            ignoreGlob = List.copyOf(ignoreGlob);
            if (!HASH_TYPES.containsKey(hashType)) {
                throw new IllegalArgumentException("hash_type must be one of " + new TreeSet<>(HASH_TYPES.keySet()));
            }
        }

        /** No roots: every file request answered as for a file that does not exist. */
        public static Options none() {
            return new Options(Map.of(), List.of(), List.of(), "sha256", Duration.ofSeconds(20), MAX_ENTRIES);
        }
    }

    /** What a path names in an environment. */
    public sealed interface Lookup {}

    /** A regular file inside a root: {@code rel} as asked (normalised), {@code real} as opened. */
    public record Found(String saltenv, String rel, Path real, long size, long mtimeSeconds, int mode)
            implements Lookup {}

    /** Not there, hidden, ignored, or not a regular file: what Salt answers for a file it does not have. */
    public record Missing() implements Lookup {}

    /** A path no minion of a well-meaning admin asks for: answered as {@link Missing}, and logged. */
    public record Refused(String reason) implements Lookup {}

    /** One environment's listing, as Salt's {@code _file_lists} keeps it. */
    public record Listing(
            Set<String> files, Set<String> dirs, Set<String> emptyDirs, Map<String, String> links, long builtAtMs) {
        static final Listing EMPTY = new Listing(Set.of(), Set.of(), Set.of(), Map.of(), Long.MIN_VALUE);
    }

    private record HashKey(String real, long size, long mtimeNanos, Object inode) {}

    private final Options options;
    private final Clock clock;
    private final List<Pattern> globs;
    private final Map<String, Listing> listings = new ConcurrentHashMap<>();
    private final Cache<HashKey, String> hashes =
            Caffeine.newBuilder().maximumSize(MAX_HASHES).build();
    private final WarnInterval truncated;
    private final Object walking = new Object();
    private final AtomicLong hashesComputed = new AtomicLong();

    public FileRoots(Options options, Clock clock) {
        this.options = options;
        this.clock = clock;
        this.globs = options.ignoreGlob().stream().map(FileRoots::fnmatch).toList();
        this.truncated = new WarnInterval(clock, 60_000);
    }

    public Options options() {
        return options;
    }

    /** The environments, sorted (Salt's {@code file_envs}). */
    public List<String> environments() {
        return new ArrayList<>(new TreeSet<>(options.roots().keySet()));
    }

    /** What {@code path} names in {@code saltenv}: the first root holding it wins, as in Salt. */
    public Lookup find(String saltenv, String path) {
        Optional<String> problem = problem(path);
        if (problem.isPresent()) {
            return new Refused(problem.get());
        }
        String rel = normalise(path);
        if (rel.isEmpty() || hidden(rel) || ignored(rel)) {
            return new Missing();
        }
        List<Path> roots = options.roots().get(saltenv);
        if (roots == null) {
            return new Missing();
        }
        for (Path root : roots) {
            Path candidate = root.resolve(rel);
            if (!Files.isRegularFile(candidate)) {
                continue;
            }
            try {
                Path realRoot = root.toRealPath();
                Path real = candidate.toRealPath();
                if (!real.startsWith(realRoot)) {
                    return new Refused("a symlink that leaves the root");
                }
                if (!real.equals(realRoot.resolve(rel))
                        && unserved(realRoot.relativize(real).toString())) {
                    // A link to .git/config or to an ignored file: what it points at is never served.
                    return new Refused("a symlink to a hidden or ignored file");
                }
                BasicFileAttributes attrs =
                        Files.readAttributes(real, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (!attrs.isRegularFile()) {
                    continue;
                }
                return new Found(
                        saltenv,
                        rel,
                        real,
                        attrs.size(),
                        attrs.lastModifiedTime().toMillis() / 1000,
                        mode(real));
            } catch (IOException e) {
                LOG.debug("Salt file server: {} in {}: {}", rel, root, e.toString());
            }
        }
        return new Missing();
    }

    /**
     * The hex digest of {@code file} by {@code hash_type}, computed once for each size, modification time and inode;
     * empty when the file went away or changed into something else since it was found.
     */
    public Optional<String> hash(Found file) {
        try {
            BasicFileAttributes attrs =
                    Files.readAttributes(file.real(), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attrs.isRegularFile()) {
                return Optional.empty();
            }
            HashKey key = new HashKey(
                    file.real().toString(),
                    attrs.size(),
                    attrs.lastModifiedTime().toMillis(),
                    attrs.fileKey());
            return Optional.of(hashes.get(key, k -> digest(file.real())));
        } catch (IOException | UncheckedIOException e) {
            LOG.debug("Salt file server: cannot hash {}: {}", file.rel(), e.toString());
            return Optional.empty();
        }
    }

    /** Up to {@code max} bytes of {@code file} from {@code offset}; empty at or past its end. */
    public byte[] read(Found file, long offset, int max) throws IOException {
        try (FileChannel channel = FileChannel.open(file.real(), StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            long size = channel.size();
            if (offset >= size) {
                return new byte[0];
            }
            ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(max, size - offset));
            while (buffer.hasRemaining() && channel.read(buffer, offset + buffer.position()) > 0) {
                // reads until full or at the end
            }
            byte[] bytes = new byte[buffer.position()];
            buffer.flip().get(bytes);
            return bytes;
        }
    }

    /** {@code saltenv}'s listing, walked again once older than {@code fileserver_list_cache_time}. */
    public Listing listing(String saltenv) {
        List<Path> roots = options.roots().get(saltenv);
        if (roots == null) {
            return Listing.EMPTY;
        }
        Listing cached = listings.get(saltenv);
        if (fresh(cached)) {
            return cached;
        }
        synchronized (walking) { // one walk at a time; the minions that asked meanwhile take its result
            cached = listings.get(saltenv);
            if (fresh(cached)) {
                return cached;
            }
            Listing walked = walk(saltenv, roots);
            listings.put(saltenv, walked);
            return walked;
        }
    }

    private boolean fresh(Listing listing) {
        return listing != null
                && clock.millis() - listing.builtAtMs()
                        < options.listCacheTime().toMillis();
    }

    private Listing walk(String saltenv, List<Path> roots) {
        Set<String> files = new TreeSet<>();
        Set<String> dirs = new TreeSet<>();
        Set<String> nonEmpty = new TreeSet<>();
        Map<String, String> links = new TreeMap<>();
        int[] entries = {0};
        for (Path root : roots) {
            // The directories reached through a link, by the path they are listed under: what lies below them is
            // checked as what it is, not as what the link names it.
            List<String> linkedDirs = new ArrayList<>();
            Path realRoot;
            try {
                realRoot = root.toRealPath();
            } catch (IOException e) {
                LOG.debug("Salt file server: root {} of {}: {}", root, saltenv, e.toString());
                continue;
            }
            try {
                Files.walkFileTree(
                        root, EnumSet.of(FileVisitOption.FOLLOW_LINKS), Integer.MAX_VALUE, new SimpleFileVisitor<>() {
                            @Override
                            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                                if (dir.equals(root)) {
                                    return FileVisitResult.CONTINUE;
                                }
                                return add(dir, true) ? FileVisitResult.CONTINUE : FileVisitResult.SKIP_SUBTREE;
                            }

                            @Override
                            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                                if (attrs.isRegularFile()) {
                                    add(file, false);
                                }
                                return entries[0] >= options.maxEntries()
                                        ? FileVisitResult.TERMINATE
                                        : FileVisitResult.CONTINUE;
                            }

                            @Override
                            public FileVisitResult visitFileFailed(Path file, IOException e) {
                                if (!(e instanceof FileSystemLoopException || e instanceof NoSuchFileException)) {
                                    LOG.debug("Salt file server: {} left out: {}", file, e.toString());
                                }
                                return FileVisitResult.CONTINUE;
                            }

                            private boolean underLink(String rel) {
                                for (String linked : linkedDirs) {
                                    if (rel.startsWith(linked)) {
                                        return true;
                                    }
                                }
                                return false;
                            }

                            /** Whether {@code path} is listed (and, for a directory, walked). */
                            private boolean add(Path path, boolean dir) {
                                String rel = root.relativize(path).toString();
                                if (hidden(rel) || ignored(rel) || entries[0] >= options.maxEntries()) {
                                    return false;
                                }
                                boolean link = Files.isSymbolicLink(path);
                                if (link || underLink(rel)) {
                                    try {
                                        Path real = path.toRealPath();
                                        if (!real.startsWith(realRoot)) {
                                            return false; // a link that leaves the root is not served
                                        }
                                        if (unserved(realRoot.relativize(real).toString())) {
                                            return false; // nor one to a hidden or ignored file
                                        }
                                        if (link) {
                                            links.putIfAbsent(
                                                    rel,
                                                    Files.readSymbolicLink(path).toString());
                                        }
                                    } catch (IOException e) {
                                        return false;
                                    }
                                }
                                if (link && dir) {
                                    linkedDirs.add(rel + "/");
                                }
                                entries[0]++;
                                (dir ? dirs : files).add(rel);
                                Path parent = root.relativize(path).getParent();
                                nonEmpty.add(parent == null ? "" : parent.toString());
                                return true;
                            }
                        });
            } catch (IOException e) {
                LOG.debug("Salt file server: root {} of {}: {}", root, saltenv, e.toString());
            }
        }
        if (entries[0] >= options.maxEntries()) {
            truncated.warn(
                    LOG,
                    "Salt file server: environment {} has more than {} files and directories; the "
                            + "listing holds the first {} (a file is still served when asked for by name)",
                    saltenv,
                    options.maxEntries(),
                    options.maxEntries());
        }
        Set<String> empty = new TreeSet<>(dirs);
        empty.removeAll(nonEmpty);
        return new Listing(
                Collections.unmodifiableSet(files),
                Collections.unmodifiableSet(dirs),
                Collections.unmodifiableSet(empty),
                Collections.unmodifiableMap(links),
                clock.millis());
    }

    /** Why {@code path} is refused outright: absolute, a parent segment, a backslash, a control character. */
    static Optional<String> problem(String path) {
        if (path.startsWith("/") || path.matches("^[A-Za-z]:.*")) {
            return Optional.of("an absolute path");
        }
        if (path.indexOf('\\') >= 0) {
            return Optional.of("a backslash in the path");
        }
        for (String segment : path.split("/", -1)) {
            if (segment.equals("..")) {
                return Optional.of("a path with ..");
            }
        }
        for (int i = 0; i < path.length(); i++) {
            if (Character.isISOControl(path.charAt(i))) {
                return Optional.of("a control character in the path");
            }
        }
        return Optional.empty();
    }

    /** {@code a//b/./c/} as {@code a/b/c} (Salt's {@code os.path.normpath}, {@code ..} refused before). */
    static String normalise(String path) {
        List<String> kept = new ArrayList<>();
        for (String segment : path.split("/")) {
            if (!segment.isEmpty() && !segment.equals(".")) {
                kept.add(segment);
            }
        }
        return String.join("/", kept);
    }

    /** Hidden files and directories (a segment starting with a dot: .git, .svn, .env) are never served. */
    static boolean hidden(String rel) {
        for (String segment : rel.split("/")) {
            if (segment.startsWith(".")) {
                return true;
            }
        }
        return false;
    }

    /** Whether a file at {@code rel} (as it is, links resolved) is never served: hidden or ignored. */
    private boolean unserved(String rel) {
        return hidden(rel) || ignored(rel);
    }

    boolean ignored(String rel) {
        for (Pattern regex : options.ignoreRegex()) {
            if (regex.matcher(rel).find()) {
                return true;
            }
        }
        for (Pattern glob : globs) {
            if (glob.matcher(rel).matches()) {
                return true;
            }
        }
        return false;
    }

    /** Python's {@code fnmatch.translate}: {@code *}, {@code ?}, {@code [seq]}, {@code [!seq]}. */
    static Pattern fnmatch(String glob) {
        StringBuilder regex = new StringBuilder();
        int i = 0;
        while (i < glob.length()) {
            char c = glob.charAt(i++);
            if (c == '*') {
                regex.append(".*");
            } else if (c == '?') {
                regex.append('.');
            } else if (c == '[') {
                int j = i;
                if (j < glob.length() && glob.charAt(j) == '!') {
                    j++;
                }
                if (j < glob.length() && glob.charAt(j) == ']') {
                    j++;
                }
                while (j < glob.length() && glob.charAt(j) != ']') {
                    j++;
                }
                if (j >= glob.length()) {
                    regex.append("\\[");
                } else {
                    String set = glob.substring(i, j).replace("\\", "\\\\");
                    i = j + 1;
                    if (set.startsWith("!")) {
                        set = "^" + set.substring(1);
                    } else if (set.startsWith("^")) {
                        set = "\\" + set;
                    }
                    regex.append('[').append(set).append(']');
                }
            } else {
                regex.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(regex.toString(), Pattern.DOTALL);
    }

    /** Files hashed so far (each change of a file is one more). */
    long hashesComputed() {
        return hashesComputed.get();
    }

    private String digest(Path real) {
        hashesComputed.incrementAndGet();
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance(HASH_TYPES.get(options.hashType()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        try (FileChannel channel = FileChannel.open(real, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
            while (channel.read(buffer) > 0) {
                buffer.flip();
                digest.update(buffer);
                buffer.clear();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /** {@code st_mode} as Python's {@code os.stat} gives it: the file type bits and the permissions. */
    private static int mode(Path real) {
        try {
            return (Integer) Files.getAttribute(real, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            int mode = 0100000;
            try {
                for (PosixFilePermission p : Files.getPosixFilePermissions(real, LinkOption.NOFOLLOW_LINKS)) {
                    mode |= 1 << (8 - p.ordinal());
                }
            } catch (IOException | UnsupportedOperationException ignored) {
                mode |= 0644;
            }
            return mode;
        }
    }
}
