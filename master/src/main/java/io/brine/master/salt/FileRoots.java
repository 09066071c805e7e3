package io.brine.master.salt;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.brine.daemon.WarnInterval;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Salt's {@code roots} file server on disk, read-only: {@code file_roots} by environment, each a list of directories
 * searched in order. Confined (SALT.md §9): a path is relative, free of {@code ..} and hidden segments, and must
 * resolve, symlinks followed, to a regular file inside the root it was found in (Salt's CVE-2024-22232 was a path
 * that left it); {@code file_ignore_regex} and {@code file_ignore_glob} hide what they match, and hidden or ignored
 * stays what a link points at: a link to {@code .git/config} serves nothing. The check and the read are one: every
 * path is walked from its root a directory at a time, each opened relative to the one above it without following a
 * link ({@link Walk}), links resolved by this class inside the root, so that a directory or file swapped for a link
 * to {@code /etc} between a check and a read (by whoever can write the roots) makes the read fail, never serve or list
 * what lies outside. The listing of an
 * environment is kept for {@code fileserver_list_cache_time} and hashes for as long as a file's size, modification
 * time and inode stay the same, so that a fleet's {@code state.apply} walks and hashes the tree once, not once per
 * minion. Thread-safe.
 */
public final class FileRoots {

    private static final Logger LOG = LoggerFactory.getLogger(FileRoots.class);
    /** Entries (files, directories, links) one environment's listing holds at most; the rest is left out, logged. */
    public static final int MAX_ENTRIES = 100_000;
    /**
     * Directories a listing walks down at most, links included: what lies deeper is left out of the listing, logged
     * (its files are still served by name). The walk recurses a directory at a time, so a deeper tree (a checkout can
     * be 2,000 deep) overflowed a lane's stack, inside a directory stream's lock that its close then waited for forever.
     */
    public static final int MAX_DEPTH = 64;
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

    /**
     * A regular file inside a root: {@code rel} as asked (normalised), {@code real} its path in {@code root} with
     * every link resolved (what {@link #read} and {@link #hash} open again, following no link).
     */
    public record Found(String saltenv, String rel, Path root, String real, long size, long mtimeSeconds, int mode)
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
    private final WarnInterval tooDeep;
    private final Object walking = new Object();
    private final AtomicLong hashesComputed = new AtomicLong();
    private volatile Consumer<String> opening = path -> {};

    public FileRoots(Options options, Clock clock) {
        this.options = options;
        this.clock = clock;
        this.globs = options.ignoreGlob().stream().map(FileRoots::fnmatch).toList();
        this.truncated = new WarnInterval(clock, 60_000);
        this.tooDeep = new WarnInterval(clock, 60_000);
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
            return MISSING;
        }
        List<Path> roots = options.roots().get(saltenv);
        if (roots == null) {
            return MISSING;
        }
        for (Path root : roots) {
            try (Walk walk = new Walk(root, opening)) {
                Resolution resolution = resolve(walk, root, new ArrayDeque<>(List.of(rel.split("/"))));
                if (resolution instanceof Unresolved unresolved) {
                    if (unresolved.why() instanceof Refused refused) {
                        return refused;
                    }
                    continue;
                }
                Reached reached = (Reached) resolution;
                if (reached.name() == null || !reached.attributes().isRegularFile()) {
                    continue;
                }
                String real = walk.path(reached.name());
                if (!real.equals(rel) && unserved(real)) {
                    // A link to .git/config or to an ignored file: what it points at is never served.
                    return new Refused("a symlink to a hidden or ignored file");
                }
                PosixFileAttributes attrs = reached.attributes();
                return new Found(
                        saltenv,
                        rel,
                        root,
                        real,
                        attrs.size(),
                        attrs.lastModifiedTime().toMillis() / 1000,
                        mode(root.resolve(real), attrs));
            } catch (IOException e) {
                LOG.debug("Salt file server: {} in {}: {}", rel, root, e.toString());
            }
        }
        return MISSING;
    }

    /**
     * The hex digest of {@code file} by {@code hash_type}, computed once for each size, modification time and inode;
     * empty when the file went away or changed into something else since it was found.
     */
    public Optional<String> hash(Found file) {
        try {
            return Optional.of(atFile(file, (dir, name, attrs) -> {
                HashKey key = new HashKey(
                        file.root() + "/" + file.real(),
                        attrs.size(),
                        attrs.lastModifiedTime().toMillis(),
                        attrs.fileKey());
                // Concurrent askers of one file wait for its one digest.
                return hashes.get(key, k -> {
                    try (SeekableByteChannel channel = openFile(dir, name)) {
                        return digest(channel);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            }));
        } catch (IOException | UncheckedIOException e) {
            LOG.debug("Salt file server: cannot hash {}: {}", file.rel(), e.toString());
            return Optional.empty();
        }
    }

    /** Up to {@code max} bytes of {@code file} from {@code offset}; empty at or past its end. */
    public byte[] read(Found file, long offset, int max) throws IOException {
        return atFile(file, (dir, name, attrs) -> {
            try (SeekableByteChannel channel = openFile(dir, name)) {
                long size = channel.size();
                if (offset >= size) {
                    return new byte[0];
                }
                ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(max, size - offset));
                channel.position(offset);
                while (buffer.hasRemaining() && channel.read(buffer) > 0) {
                    // reads until full or at the end
                }
                byte[] bytes = new byte[buffer.position()];
                buffer.flip().get(bytes);
                return bytes;
            }
        });
    }

    /** What is done with a file found, in the directory that holds it, opened again. */
    private interface AtFile<T> {
        T apply(SecureDirectoryStream<Path> dir, String name, PosixFileAttributes attributes) throws IOException;
    }

    /**
     * Walks down to {@code file} again, exactly where it was found, every directory on the way opened without following
     * a link: one swapped for a link since the file was checked (a deploy job, a checkout, whoever can write the
     * roots) makes this fail, it never leads out of the root.
     */
    private <T> T atFile(Found file, AtFile<T> use) throws IOException {
        try (Walk walk = new Walk(file.root(), opening)) {
            String[] names = file.real().split("/");
            for (int i = 0; i < names.length - 1; i++) {
                walk.down(names[i]);
            }
            String name = names[names.length - 1];
            PosixFileAttributes attrs = walk.attributes(name);
            if (!attrs.isRegularFile()) {
                throw new IOException(file.real() + " is no longer a regular file");
            }
            opening.accept(file.real());
            return use.apply(walk.top(), name, attrs);
        }
    }

    /** {@code name} in {@code dir}, opened to read, failing if it is a link now (O_NOFOLLOW). */
    private static SeekableByteChannel openFile(SecureDirectoryStream<Path> dir, String name) throws IOException {
        return dir.newByteChannel(Path.of(name), Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
    }

    /** Where {@link #resolve} ended. */
    private sealed interface Resolution {}

    /**
     * In the directory the walk is in: {@code name} with its own attributes (a link's, were it one), or the directory
     * itself when {@code name} is null.
     */
    private record Reached(String name, PosixFileAttributes attributes) implements Resolution {}

    /** Nothing there ({@link Missing}), or a path that leaves the root ({@link Refused}). */
    private record Unresolved(Lookup why) implements Resolution {}

    private static final Missing MISSING = new Missing();
    private static final Unresolved NOTHING = new Unresolved(MISSING);
    private static final Unresolved LEAVES = new Unresolved(new Refused("a symlink that leaves the root"));
    /** Links followed in one path at most, as Linux's MAXSYMLINKS: past it, a loop, answered as missing. */
    private static final int MAX_LINKS = 40;

    /**
     * Follows {@code todo}'s segments from where {@code walk} is, links included but never out of the root: a link's
     * target is read as text and walked the same way, component by component ({@code ..} goes up the walk and never
     * above the root; an absolute target is walked from the root when it names a path under it, and leaves it
     * otherwise). The text is read by path, so a swap can make it another link's: whatever it says is still walked
     * inside the root. Leaves {@code walk} in the directory holding what was reached.
     */
    private Resolution resolve(Walk walk, Path root, Deque<String> todo) throws IOException {
        int links = 0;
        while (true) {
            String segment = todo.pollFirst();
            if (segment == null) {
                return new Reached(null, null);
            }
            if (segment.isEmpty() || segment.equals(".")) {
                continue;
            }
            if (segment.equals("..")) {
                if (!walk.up()) {
                    return LEAVES;
                }
                continue;
            }
            PosixFileAttributes attrs;
            try {
                attrs = walk.attributes(segment);
            } catch (NoSuchFileException e) {
                return NOTHING;
            }
            if (attrs.isSymbolicLink()) {
                if (++links > MAX_LINKS) {
                    return NOTHING;
                }
                Path target = Files.readSymbolicLink(root.resolve(walk.path(segment)));
                if (target.isAbsolute()) {
                    Optional<Path> inside = underRoot(target, root);
                    if (inside.isEmpty()) {
                        return LEAVES;
                    }
                    walk.toRoot();
                    target = inside.get();
                }
                for (int i = target.getNameCount() - 1; i >= 0; i--) {
                    todo.addFirst(target.getName(i).toString());
                }
                continue;
            }
            if (todo.isEmpty()) {
                return new Reached(segment, attrs);
            }
            if (!attrs.isDirectory()) {
                return NOTHING;
            }
            walk.down(segment);
        }
    }

    /**
     * An absolute link target relative to {@code root}, when it names a path under the root as configured or as it
     * really is ({@code /srv/salt} may itself be a link); empty when it leaves it.
     */
    private static Optional<Path> underRoot(Path target, Path root) throws IOException {
        for (Path base : List.of(root, root.toRealPath())) {
            if (target.startsWith(base)) {
                // The names after the root's, as written (a later .. is walked, not folded away).
                return Optional.of(
                        target.getNameCount() == base.getNameCount()
                                ? Path.of("")
                                : target.subpath(base.getNameCount(), target.getNameCount()));
            }
        }
        return Optional.empty();
    }

    /**
     * A walk down one root, a directory held open at each level: each step is opened relative to the one above it
     * without following a link (openat with O_NOFOLLOW, through {@link SecureDirectoryStream}), so a directory swapped
     * for a link after it was checked makes the walk fail instead of leading out of the root. The root itself is
     * opened as the admin named it.
     */
    private static final class Walk implements Closeable {
        private final Deque<SecureDirectoryStream<Path>> open = new ArrayDeque<>();
        private final List<String> names = new ArrayList<>();
        private final Consumer<String> opening;

        Walk(Path root, Consumer<String> opening) throws IOException {
            this.opening = opening;
            DirectoryStream<Path> stream = Files.newDirectoryStream(root);
            if (!(stream instanceof SecureDirectoryStream<Path> secure)) {
                stream.close();
                throw new IOException("this platform cannot open a file relative to a directory (no "
                        + "SecureDirectoryStream); the file server serves nothing");
            }
            open.push(secure);
        }

        SecureDirectoryStream<Path> top() {
            return open.peek();
        }

        /** {@code name}'s own attributes (a link's, not its target's). */
        PosixFileAttributes attributes(String name) throws IOException {
            return top().getFileAttributeView(Path.of(name), PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .readAttributes();
        }

        /** The identity (device and inode) of the directory the walk is in. */
        Object key() throws IOException {
            return top().getFileAttributeView(BasicFileAttributeView.class)
                    .readAttributes()
                    .fileKey();
        }

        /** Into the directory {@code name}; fails if it is not one, or is a link, now. */
        void down(String name) throws IOException {
            opening.accept(path(name));
            open.push(top().newDirectoryStream(Path.of(name), LinkOption.NOFOLLOW_LINKS));
            names.add(name);
        }

        /** Up one directory; false at the root. */
        boolean up() throws IOException {
            if (names.isEmpty()) {
                return false;
            }
            open.pop().close();
            names.remove(names.size() - 1);
            return true;
        }

        void toRoot() throws IOException {
            while (up()) {
                // closes each directory below the root
            }
        }

        /** The directories from the root to where the walk is. */
        List<String> names() {
            return List.copyOf(names);
        }

        /** The path, relative to the root, of the directory the walk is in ("" at the root). */
        String path() {
            return String.join("/", names);
        }

        /** The path, relative to the root, of {@code name} in the directory the walk is in. */
        String path(String name) {
            return names.isEmpty() ? name : path() + "/" + name;
        }

        @Override
        public void close() throws IOException {
            IOException failed = null;
            for (SecureDirectoryStream<Path> stream : open) {
                try {
                    stream.close();
                } catch (IOException e) {
                    failed = e;
                }
            }
            open.clear();
            if (failed != null) {
                throw failed;
            }
        }
    }

    /** Tests only: runs with each path (relative to its root) just before the walk opens it, as a swap would. */
    void onOpening(Consumer<String> hook) {
        this.opening = hook;
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

    /** A listing being walked. */
    private final class Lister {
        final Set<String> files = new TreeSet<>();
        final Set<String> dirs = new TreeSet<>();
        final Set<String> nonEmpty = new TreeSet<>();
        final Map<String, String> links = new TreeMap<>();
        /** The directories (by device and inode) from the root to where the listing is: a link to one is a loop. */
        final Set<Object> ancestors = new HashSet<>();

        int entries;
        /** A directory below {@link #MAX_DEPTH} was left out. */
        boolean deep;

        boolean full() {
            return entries >= options.maxEntries();
        }

        /** Whether the directory {@code listed} is past {@link #MAX_DEPTH}: then neither listed nor walked. */
        boolean tooDeep(String listed) {
            int segments = 1;
            for (int i = 0; i < listed.length(); i++) {
                if (listed.charAt(i) == '/') {
                    segments++;
                }
            }
            if (segments > MAX_DEPTH) {
                deep = true;
                return true;
            }
            return false;
        }

        void add(String rel, boolean dir) {
            entries++;
            (dir ? dirs : files).add(rel);
            int slash = rel.lastIndexOf('/');
            nonEmpty.add(slash < 0 ? "" : rel.substring(0, slash));
        }

        /**
         * Lists the directory {@code walk} is in, under {@code rel} (its path as listed, through a link maybe, and
         * not its real one), and walks down its directories. Each entry is checked as listed and as it really is.
         */
        void list(Path root, Walk walk, String rel) throws IOException {
            List<String> names = new ArrayList<>();
            for (Path entry : walk.top()) {
                names.add(entry.getFileName().toString());
            }
            Collections.sort(names);
            for (String name : names) {
                if (full()) {
                    return;
                }
                String listed = rel.isEmpty() ? name : rel + "/" + name;
                String real = walk.path(name);
                if (hidden(listed) || ignored(listed) || (!real.equals(listed) && unserved(real))) {
                    continue;
                }
                PosixFileAttributes attrs;
                try {
                    attrs = walk.attributes(name);
                } catch (IOException e) {
                    continue; // gone meanwhile
                }
                if (attrs.isSymbolicLink()) {
                    listLink(root, walk, name, listed);
                } else if (attrs.isRegularFile()) {
                    add(listed, false);
                } else if (attrs.isDirectory()) {
                    if (tooDeep(listed)) {
                        continue;
                    }
                    try {
                        walk.down(name);
                    } catch (IOException e) {
                        LOG.debug("Salt file server: {} in {} left out: {}", listed, root, e.toString());
                        continue; // swapped for a link since it was checked, or gone
                    }
                    try {
                        add(listed, true);
                        descend(root, walk, listed);
                    } finally {
                        walk.up();
                    }
                }
            }
        }

        /** Walks the directory {@code walk} is in, unless it is one the listing is already below (a loop). */
        private boolean descend(Path root, Walk walk, String listed) throws IOException {
            Object key = walk.key();
            if (!ancestors.add(key)) {
                return false;
            }
            try {
                list(root, walk, listed);
            } finally {
                ancestors.remove(key);
            }
            return true;
        }

        /**
         * A link in the directory {@code walk} is in: listed (with its target as written) when it leads, inside the
         * root, to a file or directory that is served; a directory is walked under the link's path.
         */
        private void listLink(Path root, Walk walk, String name, String listed) {
            try (Walk at = new Walk(root, opening)) {
                for (String dir : walk.names()) {
                    at.down(dir);
                }
                String text =
                        Files.readSymbolicLink(root.resolve(walk.path(name))).toString();
                if (!(resolve(at, root, new ArrayDeque<>(List.of(name))) instanceof Reached reached)) {
                    return; // leaves the root, or leads nowhere
                }
                if (reached.name() != null && reached.attributes().isRegularFile()) {
                    if (!unserved(at.path(reached.name()))) {
                        add(listed, false);
                        links.putIfAbsent(listed, text);
                    }
                    return;
                }
                if (reached.name() != null) {
                    if (!reached.attributes().isDirectory()) {
                        return;
                    }
                    at.down(reached.name());
                }
                if (unserved(at.path()) || ancestors.contains(at.key()) || tooDeep(listed)) {
                    return; // hidden or ignored, a loop, or past the depth walked
                }
                add(listed, true);
                links.putIfAbsent(listed, text);
                descend(root, at, listed);
            } catch (IOException e) {
                LOG.debug("Salt file server: {} in {} left out: {}", listed, root, e.toString());
            }
        }
    }

    private Listing walk(String saltenv, List<Path> roots) {
        Lister lister = new Lister();
        for (Path root : roots) {
            try (Walk walk = new Walk(root, opening)) {
                lister.descend(root, walk, "");
            } catch (IOException e) {
                LOG.debug("Salt file server: root {} of {}: {}", root, saltenv, e.toString());
            }
        }
        if (lister.full()) {
            truncated.warn(
                    LOG,
                    "Salt file server: environment {} has more than {} files and directories; the "
                            + "listing holds the first {} (a file is still served when asked for by name)",
                    saltenv,
                    options.maxEntries(),
                    options.maxEntries());
        }
        if (lister.deep) {
            tooDeep.warn(
                    LOG,
                    "Salt file server: environment {} has directories more than {} deep; the listing leaves out what "
                            + "lies below them (a file is still served when asked for by name)",
                    saltenv,
                    MAX_DEPTH);
        }
        Set<String> empty = new TreeSet<>(lister.dirs);
        empty.removeAll(lister.nonEmpty);
        return new Listing(
                Collections.unmodifiableSet(lister.files),
                Collections.unmodifiableSet(lister.dirs),
                Collections.unmodifiableSet(empty),
                Collections.unmodifiableMap(lister.links),
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

    private String digest(SeekableByteChannel channel) throws IOException {
        hashesComputed.incrementAndGet();
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance(HASH_TYPES.get(options.hashType()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        while (channel.read(buffer) > 0) {
            buffer.flip();
            digest.update(buffer);
            buffer.clear();
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /**
     * {@code st_mode} as Python's {@code os.stat} gives it: the unix view's, read by path, when the file there is still
     * the one checked (the same device and inode); else the type and permission bits of the one checked.
     */
    private static int mode(Path path, PosixFileAttributes checked) {
        int mode = 0100000;
        for (PosixFilePermission p : checked.permissions()) {
            mode |= 1 << (8 - p.ordinal());
        }
        try {
            Map<String, Object> unix = Files.readAttributes(path, "unix:mode,fileKey", LinkOption.NOFOLLOW_LINKS);
            if (Objects.equals(unix.get("fileKey"), checked.fileKey())) {
                return (Integer) unix.get("mode");
            }
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            // the permission bits will do
        }
        return mode;
    }
}
