package io.brine.master.salt;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.brine.master.auth.SourceRateLimiter;
import io.brine.protocol.MinionIds;
import io.brine.protocol.salt.SaltCommand;
import io.brine.protocol.salt.SaltDialect;
import io.brine.protocol.salt.SaltMsgpack;
import io.brine.protocol.salt.SaltValue;
import io.brine.protocol.salt.SaltValues;
import io.brine.transport.DropLog;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.zip.GZIPOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers a Salt minion's file server requests ({@link SaltCommand.FileRequest}) from {@link FileRoots}, in the shapes
 * Salt's master answers them (salt/fileserver/__init__.py and roots.py, {@code AESFuncs._master_opts} in
 * salt/master.py): what states and {@code cp.*} need, read-only. Pillar stays empty ({@link SaltService}), and
 * {@code _master_tops} and {@code _ext_nodes} are answered with nothing. Bounded: a per-minion rate, and the bytes of
 * the answers being built, sealed and sent at once ({@code _serve_file} chunks by their data, every other answer by
 * its encoded size: a listing of a large tree is megabytes, sealed again for each minion that asks); past either the
 * request gets no answer (the minion asks again after its timeout), logged once a minute. A refused path is answered
 * as a missing file and logged the same way, escaped. A listing's answer is built once for each command, environment
 * and prefix from the listing {@link FileRoots} keeps, and handed to every minion that asks until that listing is
 * walked again: a fleet (or one minion at its rate) asking for 100,000 entries costs one filtering and conversion,
 * not one per request.
 */
public final class SaltFileServer {

    private static final Logger LOG = LoggerFactory.getLogger(SaltFileServer.class);
    /** Salt's {@code file_buffer_size} default. */
    public static final int DEFAULT_BUFFER_SIZE = 1024 * 1024;

    public static final int DEFAULT_REQUESTS_PER_SECOND = 500;
    public static final int DEFAULT_BURST = 2_000;
    public static final long DEFAULT_MAX_BYTES_IN_FLIGHT = 64L * 1024 * 1024;
    private static final int MAX_RATED_MINIONS = 200_000;

    /**
     * @param bufferSize {@code file_buffer_size}: the largest chunk {@code _serve_file} answers
     * @param requestsPerSecond {@code fileserver_requests_per_second}: each minion's rate
     * @param burst {@code fileserver_burst}: what a minion may ask at once before the rate applies
     * @param maxBytesInFlight {@code fileserver_max_mib_in_flight}: answer bytes being prepared at once (a chunk's
     *     data, any other answer's encoded size)
     */
    public record Limits(int bufferSize, int requestsPerSecond, int burst, long maxBytesInFlight) {
        public static Limits defaults() {
            return new Limits(
                    DEFAULT_BUFFER_SIZE, DEFAULT_REQUESTS_PER_SECOND, DEFAULT_BURST, DEFAULT_MAX_BYTES_IN_FLIGHT);
        }
    }

    private final FileRoots roots;
    private final Limits limits;
    private final SourceRateLimiter rate;
    private final DropLog drops;
    private final AtomicLong inFlight = new AtomicLong();
    /** Listing answers by what was asked, each with the listing it was built from; weighed by entries. */
    private final Cache<ListingKey, ListingAnswer> listingAnswers = Caffeine.newBuilder()
            .maximumWeight(MAX_CACHED_LISTING_ENTRIES)
            // A minion chooses the prefix: it weighs as the entries its length would make (a path is about 64).
            .weigher((ListingKey key, ListingAnswer answer) ->
                    answer.entries() + 1 + key.prefix().length() / 64)
            .build();

    private static final Set<String> LISTINGS =
            Set.of("_file_list", "_file_list_emptydirs", "_dir_list", "_symlink_list");
    /** Entries the kept listing answers hold at most: the four commands over a full environment, least used out. */
    private static final long MAX_CACHED_LISTING_ENTRIES = 4L * FileRoots.MAX_ENTRIES;

    private record ListingKey(String cmd, String saltenv, String prefix) {}

    /** {@code bytes}: the value's encoded size, what each request answered with it is charged. */
    private record ListingAnswer(FileRoots.Listing from, SaltValue value, int entries, long bytes) {}

    public SaltFileServer(FileRoots roots, Limits limits, Clock clock, Ticker ticker) {
        this.roots = roots;
        this.limits = limits;
        this.rate = new SourceRateLimiter(limits.requestsPerSecond(), limits.burst(), MAX_RATED_MINIONS, ticker);
        this.drops = new DropLog(LOG, DropLog.INTERVAL, clock);
    }

    /**
     * Answers {@code request} from minion {@code id} (authenticated) by {@code reply}, or not at all when it is over a
     * bound. {@code reply} is called on this thread; the answer's bytes count as in flight until it returns.
     */
    public void serve(String id, String from, SaltCommand.FileRequest request, Consumer<SaltValue> reply) {
        String who = "Salt minion " + id + " (" + from + ")";
        if (!rate.tryAcquire(id)) {
            drops.dropped(who, "file server request over fileserver_requests_per_second; not answered");
            return;
        }
        if (request.cmd().equals("_serve_file")) {
            serveFile(who, request, reply);
            return;
        }
        if (LISTINGS.contains(request.cmd()) && request.saltenv().isPresent()) {
            ListingAnswer listing = listingAnswer(request);
            charged(who, "listing", listing.value(), listing.bytes(), reply);
            return;
        }
        SaltValue value = SaltValues.fromPlain(answer(who, request));
        charged(who, "answer", value, encodedSize(value), reply);
    }

    /** Answers {@code value} by {@code reply}, its {@code bytes} in flight meanwhile, or not at all past the bound. */
    private void charged(String who, String what, SaltValue value, long bytes, Consumer<SaltValue> reply) {
        long reserved = reserve(who, what, bytes);
        if (reserved < 0) {
            return;
        }
        try {
            reply.accept(value);
        } finally {
            inFlight.addAndGet(-reserved);
        }
    }

    /**
     * Reserves {@code bytes} of {@code fileserver_max_mib_in_flight} for an answer being built, sealed and sent: what
     * was reserved, to give back once it is, or -1 (the drop logged) when it would be past the bound. An answer larger
     * than the whole bound (a listing can be) is charged the whole bound: it is answered alone, never beside another.
     */
    private long reserve(String who, String what, long bytes) {
        long reserved = Math.min(bytes, limits.maxBytesInFlight());
        if (reserved > 0 && inFlight.addAndGet(reserved) > limits.maxBytesInFlight()) {
            inFlight.addAndGet(-reserved);
            drops.dropped(who, "file server " + what + " over fileserver_max_mib_in_flight; not answered");
            return -1;
        }
        return reserved;
    }

    private static long encodedSize(SaltValue value) {
        return SaltMsgpack.write(value, SaltDialect.PAYLOAD).length;
    }

    /** The plain answer (lists, maps, strings) to every request but {@code _serve_file}. */
    Object answer(String who, SaltCommand.FileRequest request) {
        String saltenv = request.saltenv().orElse(null);
        return switch (request.cmd()) {
            case "_master_opts" -> masterOpts(request.envOnly());
            case "_file_envs" -> roots.environments();
            case "_file_list", "_file_list_emptydirs", "_dir_list" ->
                saltenv == null ? List.of() : listed(roots.listing(saltenv), request);
            case "_symlink_list" -> saltenv == null ? Map.of() : listed(roots.listing(saltenv), request);
            case "_file_hash" -> find(who, request).<Object>map(this::hash).orElse("");
            case "_file_hash_and_stat" ->
                find(who, request)
                        .<Object>map(f -> hash(f) instanceof Map<?, ?> h ? list(h, stat(f)) : list("", null))
                        .orElse(list("", null));
            case "_file_find" ->
                find(who, request)
                        .<Object>map(f -> {
                            Map<String, Object> found = new LinkedHashMap<>();
                            // Salt gives the master's own path here; a minion reads only stat, and the master's layout
                            // is
                            // none of its business.
                            found.put("path", f.rel());
                            found.put("rel", f.rel());
                            found.put("stat", stat(f));
                            found.put("back", "roots");
                            return found;
                        })
                        .orElse(Map.of("path", "", "rel", ""));
            // No master tops and no external node classifier: Salt's answer when none is configured.
            case "_master_tops", "_ext_nodes" -> Map.of();
            default -> throw new IllegalArgumentException("not a file server command: " + request.cmd());
        };
    }

    /**
     * {@code AESFuncs._master_opts}: the options a minion takes from its master for states (salt/state.py,
     * {@code HighState.__gen_opts}), each as brine's master has it; environments are named, their directories not.
     */
    private Map<String, Object> masterOpts(boolean envOnly) {
        Map<String, Object> opts = new LinkedHashMap<>();
        Map<String, Object> fileRoots = new LinkedHashMap<>();
        roots.environments().forEach(env -> fileRoots.put(env, List.of()));
        opts.put("file_roots", fileRoots);
        opts.put("top_file_merging_strategy", "merge");
        opts.put("env_order", List.of());
        opts.put("default_top", "base");
        if (envOnly) {
            return opts;
        }
        opts.put("renderer", "jinja|yaml");
        opts.put("failhard", false);
        opts.put("state_top", "top.sls");
        opts.put("state_top_saltenv", null);
        opts.put("nodegroups", Map.of());
        opts.put("state_auto_order", true);
        opts.put("state_events", false);
        opts.put("state_aggregate", false);
        opts.put("jinja_env", Map.of());
        opts.put("jinja_sls_env", Map.of());
        opts.put("jinja_lstrip_blocks", false);
        opts.put("jinja_trim_blocks", false);
        return opts;
    }

    private Optional<FileRoots.Found> find(String who, SaltCommand.FileRequest request) {
        if (request.path().isEmpty() || request.saltenv().isEmpty()) {
            return Optional.empty();
        }
        FileRoots.Lookup lookup =
                roots.find(request.saltenv().get(), request.path().get());
        if (lookup instanceof FileRoots.Refused refused) {
            drops.dropped(
                    who,
                    "file server: refused " + refused.reason() + ", answered as a missing file",
                    request.saltenv().get() + ":" + request.path().get());
        }
        return lookup instanceof FileRoots.Found found ? Optional.of(found) : Optional.empty();
    }

    /** {@code {hsum, hash_type}}, or "" when the file went away meanwhile. */
    private Object hash(FileRoots.Found file) {
        return roots.hash(file)
                .<Object>map(hsum -> {
                    Map<String, Object> hash = new LinkedHashMap<>();
                    hash.put("hsum", hsum);
                    hash.put("hash_type", roots.options().hashType());
                    return hash;
                })
                .orElse("");
    }

    /**
     * Python's {@code list(os.stat(path))}: mode, size and times as the file has them; inode, device, link count,
     * owner and group are the master's and not given (0, 0, 1, 0, 0).
     */
    private static List<Object> stat(FileRoots.Found file) {
        return List.of(
                (long) file.mode(),
                0L,
                0L,
                1L,
                0L,
                0L,
                file.size(),
                file.mtimeSeconds(),
                file.mtimeSeconds(),
                file.mtimeSeconds());
    }

    private static List<Object> list(Object first, Object second) {
        List<Object> pair = new ArrayList<>(2);
        pair.add(first);
        pair.add(second);
        return pair;
    }

    /**
     * The answer to a listing command for an environment, from the listing kept now: the one built from that very
     * listing when there is one, else built once (concurrent askers wait for it) and kept.
     */
    private ListingAnswer listingAnswer(SaltCommand.FileRequest request) {
        String saltenv = request.saltenv().orElseThrow();
        FileRoots.Listing listing = roots.listing(saltenv);
        ListingKey key =
                new ListingKey(request.cmd(), saltenv, strip(request.prefix().orElse("")));
        return listingAnswers.asMap().compute(key, (k, kept) -> {
            if (kept != null && (kept.from() == listing || kept.from().builtAtMs() > listing.builtAtMs())) {
                return kept; // built from this listing, or from a newer one another asker took
            }
            Object plain = listed(listing, request);
            int entries = plain instanceof Collection<?> c ? c.size() : ((Map<?, ?>) plain).size();
            SaltValue value = SaltValues.fromPlain(plain);
            return new ListingAnswer(listing, value, entries, encodedSize(value));
        });
    }

    /** A listing command's plain answer from {@code listing}. */
    private static Object listed(FileRoots.Listing listing, SaltCommand.FileRequest request) {
        return switch (request.cmd()) {
            case "_file_list" -> prefixed(listing.files(), request);
            case "_file_list_emptydirs" -> prefixed(listing.emptyDirs(), request);
            case "_dir_list" -> prefixed(listing.dirs(), request);
            case "_symlink_list" -> links(listing, request);
            default -> throw new IllegalArgumentException("not a listing command: " + request.cmd());
        };
    }

    /** Salt filters by {@code prefix} with its slashes stripped, and sorts. */
    private static List<String> prefixed(Collection<String> entries, SaltCommand.FileRequest request) {
        String prefix = strip(request.prefix().orElse(""));
        return entries.stream().filter(e -> e.startsWith(prefix)).sorted().toList();
    }

    private static Map<String, String> links(FileRoots.Listing listing, SaltCommand.FileRequest request) {
        String prefix = strip(request.prefix().orElse(""));
        Map<String, String> links = new LinkedHashMap<>();
        listing.links().forEach((rel, target) -> {
            if (rel.startsWith(prefix)) {
                links.put(rel, target);
            }
        });
        return links;
    }

    private static String strip(String prefix) {
        int start = 0;
        int end = prefix.length();
        while (start < end && prefix.charAt(start) == '/') {
            start++;
        }
        while (end > start && prefix.charAt(end - 1) == '/') {
            end--;
        }
        return prefix.substring(start, end);
    }

    /**
     * {@code _serve_file}: {@code {data, dest}} with up to {@code file_buffer_size} bytes from {@code loc}, gzipped at
     * the level asked ({@code gzip} then says it); {@code data} empty at the end, both empty for a missing file.
     */
    private void serveFile(String who, SaltCommand.FileRequest request, Consumer<SaltValue> reply) {
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("data", "");
        answer.put("dest", "");
        Optional<FileRoots.Found> found = request.loc().isEmpty() ? Optional.empty() : find(who, request);
        if (found.isEmpty()) {
            reply.accept(SaltValues.fromPlain(answer));
            return;
        }
        FileRoots.Found file = found.get();
        long loc = request.loc().get();
        long reserved = reserve(who, "chunk", Math.max(0, Math.min(limits.bufferSize(), file.size() - loc)));
        if (reserved < 0) {
            return;
        }
        try {
            byte[] data;
            try {
                data = roots.read(file, loc, limits.bufferSize());
            } catch (IOException e) {
                LOG.debug("{}: {} not read: {}", who, MinionIds.printable(file.rel()), e.toString());
                reply.accept(SaltValues.fromPlain(answer));
                return;
            }
            answer.put("dest", file.rel());
            if (request.gzip().isPresent() && data.length > 0) {
                data = gzip(data, request.gzip().get());
                answer.put("gzip", (long) request.gzip().get());
            }
            answer.put("data", data);
            reply.accept(SaltValues.fromPlain(answer));
        } finally {
            inFlight.addAndGet(-reserved);
        }
    }

    /** Answer bytes reserved now (for tests and metrics). */
    long bytesInFlight() {
        return inFlight.get();
    }

    private static byte[] gzip(byte[] data, int level) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(data.length / 2 + 64);
        try (GZIPOutputStream gz = new GZIPOutputStream(out) {
            {
                def.setLevel(level);
            }
        }) {
            gz.write(data);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
