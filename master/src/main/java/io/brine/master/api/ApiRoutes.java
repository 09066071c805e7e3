package io.brine.master.api;

import io.brine.daemon.config.MasterConfig;
import io.brine.master.jobs.JobIds;
import io.brine.master.publish.PublisherService;
import io.brine.master.session.SessionTable;
import io.brine.protocol.BatchSize;
import io.brine.protocol.MinionIds;
import io.brine.protocol.ReservedIds;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.targeting.Glob;
import io.brine.store.api.ApiTokens;
import io.brine.store.keys.AdminResult;
import io.brine.store.keys.KeyListing;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.SharedKeys;
import io.brine.store.keys.StoredKey;
import io.brine.store.policy.Classifications;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * What each route of the HTTP API does, over the master's own parts: the key store's fingerprint-bound admin
 * operations (as brine-key's), the publisher path (as {@code brine}'s: targeting, nodegroups, ACL, audit), the job
 * cache, the sessions. Takes a parsed request and the caller's token; answers a value for {@link ApiHandler} to send,
 * or throws an {@link ApiError}. No sockets here.
 */
final class ApiRoutes {

    /** Keys a page holds at most, and by default. */
    static final int MAX_PAGE = 1000;

    static final int DEFAULT_PAGE = 100;
    /** How long a job's wait may be asked to last at most. */
    static final int MAX_WAIT_SECONDS = 300;
    /** A job's timeout at most, as {@code brine -t}. */
    static final int MAX_TIMEOUT_SECONDS = 86_400;

    /** The token that made a request: who it is in the audit log, and what it may do. */
    record Caller(ApiTokens.Entry token) {
        /** The actor of its changes in the audit log, and the publisher of its jobs. */
        String actor() {
            return "api:" + token.name();
        }

        Optional<MasterConfig.PublisherAcl> acl() {
            return Optional.of(new MasterConfig.PublisherAcl(token.targets(), token.functions()));
        }
    }

    /** What a route answers. */
    sealed interface Answer {
        /** A JSON document with a status. */
        record Json(HttpResponseStatus status, Object body) implements Answer {}

        /** Server-sent events from number {@code after} on (-1: live only) whose tag matches {@code tag}. */
        record Events(String tag, long after) implements Answer {}

        /** The job {@code jid} once every targeted minion returned, or after {@code seconds}. */
        record WaitForJob(String jid, int seconds) implements Answer {}
    }

    /** A route: its path pattern ({@code {id}} stands for one segment) and methods. */
    record Route(String pattern, Set<String> methods) {}

    static final List<Route> ROUTES = List.of(
            new Route("/api/keys", Set.of("GET")),
            new Route("/api/keys/{id}", Set.of("GET")),
            new Route("/api/keys/{id}/accept", Set.of("POST")),
            new Route("/api/keys/{id}/reject", Set.of("POST")),
            new Route("/api/keys/{id}/delete", Set.of("POST")),
            new Route("/api/jobs", Set.of("GET", "POST")),
            new Route("/api/jobs/{jid}", Set.of("GET")),
            new Route("/api/jobs/batches/{id}", Set.of("GET")),
            new Route("/api/minions", Set.of("GET")),
            new Route("/api/events", Set.of("GET")),
            new Route("/api/openapi.json", Set.of("GET")));

    private final KeyStore keyStore;
    private final PublisherService publishers;
    private final BatchRuns batches;
    private final SessionTable sessions;
    private final Supplier<ReservedIds> reservedIds;
    private final Path classesDir;

    /** The keys as last listed, with who shares which key, and the count of key changes it was listed after. */
    private record View(long changes, KeyListing listing, SharedKeys shared) {}

    /**
     * Key changes heard (the master's, brine-key's, another master's): a listing of 100,000 keys takes the store
     * seconds here, so one is made again only after a change, not for every page. A change the view misses by a
     * moment cannot go wrong: accept, reject and delete are bound to the fingerprint in the store itself.
     */
    private final AtomicLong changes = new AtomicLong();

    private volatile View view = new View(-1, null, null);

    ApiRoutes(
            KeyStore keyStore,
            PublisherService publishers,
            SessionTable sessions,
            Supplier<ReservedIds> reservedIds,
            Path cachedir) {
        keyStore.addListener(change -> changes.incrementAndGet()); // closed with the key store
        this.keyStore = keyStore;
        this.publishers = publishers;
        this.batches = new BatchRuns(publishers::publish, BatchRuns.MAX_ACTIVE);
        this.sessions = sessions;
        this.reservedIds = reservedIds;
        this.classesDir = cachedir.resolve(Classifications.DIR_NAME);
    }

    /** Stops the batch runs still going (their threads are interrupted; each shows "failed"). */
    void close() {
        batches.close();
    }

    private View view() {
        View current = view;
        long now = changes.get();
        if (current.changes() == now) {
            return current;
        }
        synchronized (this) {
            current = view;
            if (current.changes() != now) {
                KeyListing listing = keyStore.list();
                current = new View(now, listing, SharedKeys.of(listing));
                view = current;
            }
            return current;
        }
    }

    /** The route {@code path} names, or empty (404). */
    static Optional<Route> route(List<String> segments) {
        for (Route route : ROUTES) {
            String[] parts = route.pattern().substring(1).split("/");
            if (parts.length != segments.size()) {
                continue;
            }
            boolean matches = true;
            for (int i = 0; i < parts.length && matches; i++) {
                matches = parts[i].startsWith("{") || parts[i].equals(segments.get(i));
            }
            if (matches) {
                return Optional.of(route);
            }
        }
        return Optional.empty();
    }

    /** Answers one authenticated request on {@code route}, whose method the route allows. */
    Answer handle(
            Route route,
            HttpMethod method,
            List<String> segments,
            Query query,
            byte[] body,
            Caller caller,
            Optional<String> lastEventId)
            throws ApiError {
        return switch (route.pattern()) {
            case "/api/keys" -> keys(query.only("state", "match", "limit", "after"));
            case "/api/keys/{id}" -> key(id(query.only(), segments.get(2)));
            case "/api/keys/{id}/accept", "/api/keys/{id}/reject", "/api/keys/{id}/delete" ->
                change(query.only(), segments.get(2), segments.get(3), body, caller);
            case "/api/jobs" ->
                method.equals(HttpMethod.POST)
                        ? publish(query.only(), body, caller)
                        : jobs(query.only("limit"), caller);
            case "/api/jobs/{jid}" -> job(query.only("wait"), segments.get(2), caller);
            case "/api/jobs/batches/{id}" -> batchRun(query.only(), segments.get(3), caller);
            case "/api/minions" -> minions(query.only("match"));
            case "/api/events" -> events(query.only("tag"), lastEventId);
            default -> throw ApiError.notFound("no route " + route.pattern());
        };
    }

    // ------------------------------------------------------------------ keys

    private Answer keys(Query query) throws ApiError {
        Set<KeyState> states = EnumSet.allOf(KeyState.class);
        Optional<String> state = query.get("state");
        if (state.isPresent()) {
            states = EnumSet.of(state(state.get()));
        }
        Glob match = glob(query.get("match").orElse("*"), "match", true);
        int limit = query.integer("limit", 1, MAX_PAGE).orElse(DEFAULT_PAGE);
        String after = query.get("after").orElse("");
        View keys = view();
        KeyListing listing = keys.listing();
        SharedKeys shared = keys.shared();
        // One page of the keys sorted by id, then state: each state's list is sorted by id, so each is read from
        // the first id after the cursor (a binary search) up to one key past the page, not the whole store.
        TreeSet<StoredKey> selected =
                new TreeSet<>(Comparator.comparing(StoredKey::id).thenComparing(StoredKey::state));
        for (KeyState s : states) {
            List<StoredKey> sorted = listing.keys(s);
            int from = firstAfter(sorted, after);
            int taken = 0;
            for (int i = from; i < sorted.size() && taken <= limit; i++) {
                StoredKey key = sorted.get(i);
                if (match.matches(key.id())) {
                    selected.add(key);
                    taken++;
                }
            }
        }
        List<Map<String, Object>> page = new ArrayList<>();
        String last = null;
        boolean more = false;
        for (StoredKey key : selected) {
            if (page.size() >= limit && !key.id().equals(last)) {
                more = true;
                break;
            }
            page.add(describe(key, shared));
            last = key.id();
        }
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("keys", page);
        document.put("next", more ? last : null);
        return new Answer.Json(HttpResponseStatus.OK, document);
    }

    /** The index of the first key of {@code sorted} (by id) whose id comes after {@code after}. */
    private static int firstAfter(List<StoredKey> sorted, String after) {
        int low = 0;
        int high = sorted.size();
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (sorted.get(mid).id().compareTo(after) <= 0) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        return low;
    }

    private Answer key(String id) throws ApiError {
        View listed = view();
        KeyListing listing = listed.listing();
        SharedKeys shared = listed.shared();
        List<Map<String, Object>> keys = new ArrayList<>();
        for (KeyState state : KeyState.values()) {
            listing.find(id, state).ifPresent(key -> keys.add(describe(key, shared)));
        }
        if (keys.isEmpty()) {
            throw ApiError.notFound("no key for id " + id);
        }
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("id", id);
        document.put("keys", keys);
        document.put("up", sessions.byMinion(id).isPresent());
        return new Answer.Json(HttpResponseStatus.OK, document);
    }

    private static Map<String, Object> describe(StoredKey key, SharedKeys shared) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("id", key.id());
        entry.put("state", key.state().label());
        entry.put("fingerprint", key.fingerprint());
        entry.put("kind", key.kind().name().toLowerCase(Locale.ROOT));
        entry.put("same_key_as", shared.sameKeyAs(key.fingerprint(), key.id()).orElse(null));
        return entry;
    }

    /**
     * Accept, reject or delete the key of {@code id} that has the fingerprint the admin saw, wherever it is now
     * among the states the change starts from: through the store's fingerprint-bound operation, as brine-key's
     * (DESIGN.md §4.6), with its rules for an accept (reserved ids, one key one id).
     */
    private Answer change(Query query, String rawId, String verb, byte[] body, Caller caller) throws ApiError {
        String id = id(query, rawId);
        if (!caller.token().keyAdmin()) {
            throw ApiError.forbidden("token " + caller.token().name() + " may not change keys (brine-key api-token"
                    + " create ... --key-admin)");
        }
        JsonBody json = JsonBody.parse(
                body, verb.equals("accept") ? Set.of("fingerprint", "allow_shared_key") : Set.of("fingerprint"));
        String typed = json.requiredString("fingerprint");
        String fingerprint = Fingerprints.normalize(typed);
        if (fingerprint == null) {
            throw ApiError.badRequest("fingerprint: expected 32 hex bytes (as the key listing shows it)");
        }
        boolean allowShared = json.bool("allow_shared_key").orElse(false);
        Set<KeyState> from = switch (verb) {
            case "accept" -> EnumSet.of(KeyState.PENDING, KeyState.REJECTED, KeyState.DENIED);
            case "reject" -> EnumSet.of(KeyState.PENDING, KeyState.ACCEPTED, KeyState.DENIED);
            default -> EnumSet.allOf(KeyState.class);
        };
        View keys = view();
        KeyListing listing = keys.listing();
        Optional<StoredKey> seen = Optional.empty();
        for (KeyState state : from) {
            Optional<StoredKey> key =
                    listing.find(id, state).filter(k -> k.fingerprint().equals(fingerprint));
            if (key.isPresent()) {
                seen = key;
                break;
            }
        }
        if (seen.isEmpty()) {
            List<String> held = new ArrayList<>();
            for (KeyState state : KeyState.values()) {
                listing.find(id, state)
                        .ifPresent(
                                k -> held.add("a " + k.state().label() + " key with fingerprint " + k.fingerprint()));
            }
            if (verb.equals("accept")
                    && listing.find(id, KeyState.ACCEPTED)
                            .filter(k -> k.fingerprint().equals(fingerprint))
                            .isPresent()) {
                return changed(id, "unchanged", id + ": already accepted", fingerprint);
            }
            if (held.isEmpty()) {
                throw ApiError.notFound("no key for id " + id);
            }
            throw ApiError.conflict(id + ": no key with fingerprint " + fingerprint + " to " + verb + "; the id holds "
                    + String.join(" and ", held) + "; nothing changed");
        }
        StoredKey key = seen.get();
        if (verb.equals("accept")) {
            Optional<String> reserved = reservedIds.get().problem(id);
            if (reserved.isPresent()) {
                throw ApiError.conflict(id + ": " + reserved.get() + "; its minion would be refused at auth. Nothing"
                        + " changed; delete the key instead");
            }
            Optional<String> sharedWith = keys.shared().sameKeyAs(fingerprint, id);
            if (sharedWith.isPresent() && !allowShared) {
                throw ApiError.conflict(id + ": " + sharedWith.get() + " (one key, one id); nothing changed. To accept"
                        + " it anyway: \"allow_shared_key\": true");
            }
        }
        AdminResult result = switch (verb) {
            case "accept" -> keyStore.accept(id, key.state(), fingerprint, caller.actor());
            case "reject" -> keyStore.reject(id, key.state(), fingerprint, caller.actor());
            default -> keyStore.delete(id, key.state(), fingerprint, caller.actor());
        };
        changes.incrementAndGet(); // the next listing shows this change, whenever the store's listeners hear it
        return switch (result.status()) {
            case DONE -> {
                if (!verb.equals("accept") && key.state() == KeyState.ACCEPTED) {
                    Classifications.remove(classesDir, id, fingerprint);
                }
                yield changed(
                        id,
                        verb.equals("accept") ? "accepted" : verb.equals("reject") ? "rejected" : "deleted",
                        result.message(),
                        fingerprint);
            }
            case UNCHANGED -> changed(id, "unchanged", result.message(), fingerprint);
            case NOT_FOUND, REFUSED -> throw ApiError.conflict(result.message());
        };
    }

    private static Answer changed(String id, String outcome, String message, String fingerprint) {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("id", id);
        document.put("result", outcome);
        document.put("fingerprint", fingerprint);
        document.put("message", message);
        return new Answer.Json(HttpResponseStatus.OK, document);
    }

    // ------------------------------------------------------------------ jobs

    private static final Set<String> PUBLISH_FIELDS =
            Set.of("target", "target_type", "fun", "args", "kwargs", "timeout", "batch");
    private static final Set<String> TARGET_TYPES = Set.of("glob", "pcre", "list", "grain", "compound", "nodegroup");

    private Answer publish(Query query, byte[] body, Caller caller) throws ApiError {
        JsonBody json = JsonBody.parse(body, PUBLISH_FIELDS);
        String target = json.requiredString("target");
        String type = json.string("target_type").orElse("glob");
        if (!TARGET_TYPES.contains(type)) {
            throw ApiError.badRequest("target_type: expected one of " + new TreeSet<>(TARGET_TYPES));
        }
        String fun = json.requiredString("fun");
        List<Object> args = json.list("args");
        Map<String, Object> kwargs = json.map("kwargs");
        int timeout = json.integer("timeout", 1, MAX_TIMEOUT_SECONDS).orElse(30);
        SessionMessage.PublishRequest request;
        try {
            request = new SessionMessage.PublishRequest(type, target, fun, args, kwargs, timeout);
        } catch (IllegalArgumentException e) {
            throw ApiError.badRequest("bad job: " + e.getMessage());
        }
        Optional<String> batch = json.string("batch");
        if (batch.isPresent()) {
            BatchSize size;
            try {
                size = BatchSize.parse(batch.get());
            } catch (IllegalArgumentException e) {
                throw ApiError.badRequest("batch: " + e.getMessage());
            }
            return new Answer.Json(
                    HttpResponseStatus.ACCEPTED,
                    batches.start(
                            caller.actor(),
                            caller.acl(),
                            request,
                            size,
                            () -> BatchRuns.Refusal.of(publishers
                                    .refusal(caller.actor(), caller.acl(), request)
                                    .orElse(null))));
        }
        SessionMessage.PublishReply reply = publishers.publish(caller.actor(), caller.acl(), request, null);
        BatchRuns.Refusal.of(reply.error());
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("jid", reply.jid());
        document.put("minions", reply.minions());
        document.put("unreachable", reply.unreachable());
        return new Answer.Json(HttpResponseStatus.ACCEPTED, document);
    }

    private Answer jobs(Query query, Caller caller) throws ApiError {
        int limit = query.integer("limit", 1, MAX_PAGE).orElse(DEFAULT_PAGE);
        SessionMessage.JobReply reply =
                publishers.query(caller.actor(), false, new SessionMessage.JobQuery(null, limit));
        return new Answer.Json(HttpResponseStatus.OK, reply.document());
    }

    private Answer job(Query query, String jid, Caller caller) throws ApiError {
        if (!JobIds.isValid(jid)) {
            throw ApiError.badRequest("not a job id: " + MinionIds.printable(jid));
        }
        Optional<Integer> wait = query.integer("wait", 0, MAX_WAIT_SECONDS);
        if (wait.isPresent() && wait.get() > 0) {
            show(jid, caller); // 404 now rather than after the wait
            return new Answer.WaitForJob(jid, wait.get());
        }
        return show(jid, caller);
    }

    /** A batch run started through {@code POST /api/jobs}: its own token's, or any for a key-admin token. */
    private Answer batchRun(Query query, String id, Caller caller) throws ApiError {
        if (!id.matches("[0-9a-f]{32}")) {
            throw ApiError.badRequest("not a batch run id: " + MinionIds.printable(id));
        }
        return new Answer.Json(
                HttpResponseStatus.OK,
                batches.show(id, caller.actor(), caller.token().keyAdmin()));
    }

    /** The job {@code jid} with its returns, as {@code brine jobs show}. */
    Answer.Json show(String jid, Caller caller) throws ApiError {
        SessionMessage.JobReply reply = publishers.query(caller.actor(), false, new SessionMessage.JobQuery(jid, 0));
        if (reply.error() != null) {
            throw ApiError.notFound(reply.error());
        }
        return new Answer.Json(HttpResponseStatus.OK, reply.document());
    }

    /** Whether every minion {@code jid} targeted has returned (the job shown has none missing). */
    static boolean complete(Answer.Json shown) {
        Object missing = ((Map<?, ?>) shown.body()).get("missing");
        return missing instanceof List<?> list && list.isEmpty();
    }

    // ------------------------------------------------------------------ minions, events

    private Answer minions(Query query) throws ApiError {
        Glob match = glob(query.get("match").orElse("*"), "match", true);
        List<String> up = new ArrayList<>();
        List<String> down = new ArrayList<>();
        for (String id : keyStore.acceptedIds()) {
            if (match.matches(id)) {
                (sessions.byMinion(id).isPresent() ? up : down).add(id);
            }
        }
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("up", up);
        document.put("down", down);
        return new Answer.Json(HttpResponseStatus.OK, document);
    }

    private Answer events(Query query, Optional<String> lastEventId) throws ApiError {
        String tag = query.get("tag").orElse("*");
        glob(tag, "tag", false);
        long after = -1;
        if (lastEventId.isPresent()) {
            try {
                after = Long.parseLong(lastEventId.get().strip());
            } catch (NumberFormatException e) {
                throw ApiError.badRequest("Last-Event-ID: expected the number of the last event received");
            }
            if (after < 0) {
                throw ApiError.badRequest("Last-Event-ID: expected the number of the last event received");
            }
        }
        return new Answer.Events(tag, after);
    }

    // ------------------------------------------------------------------ parameters

    private static String id(Query query, String raw) throws ApiError {
        Optional<String> problem = MinionIds.problem(raw);
        if (problem.isPresent()) {
            throw ApiError.badRequest("not a minion id: " + MinionIds.printable(raw) + ": " + problem.get());
        }
        return raw;
    }

    private static KeyState state(String label) throws ApiError {
        for (KeyState state : KeyState.values()) {
            if (state.label().equals(label)) {
                return state;
            }
        }
        throw ApiError.badRequest("state: expected pending, accepted, rejected or denied");
    }

    /** A glob on ids ({@code ids}) or on event tags. */
    private static Glob glob(String text, String name, boolean ids) throws ApiError {
        if (text.length() > MinionIds.MAX_LENGTH) {
            throw ApiError.badRequest(name + ": longer than " + MinionIds.MAX_LENGTH + " characters");
        }
        try {
            return ids ? Glob.compileIds(text) : Glob.compile(text);
        } catch (IllegalArgumentException e) {
            throw ApiError.badRequest(name + ": " + e.getMessage());
        }
    }

    /** A request's query parameters, each given at most once and each known to its route. */
    record Query(Map<String, List<String>> parameters) {

        /** This query, refused when it has a parameter other than {@code known}. */
        Query only(String... known) throws ApiError {
            for (Map.Entry<String, List<String>> entry : parameters.entrySet()) {
                if (!List.of(known).contains(entry.getKey())) {
                    throw ApiError.badRequest("unknown query parameter " + MinionIds.printable(entry.getKey())
                            + (known.length == 0
                                    ? "; this route takes none"
                                    : "; expected " + String.join(", ", known)));
                }
                if (entry.getValue().size() > 1) {
                    throw ApiError.badRequest("query parameter " + entry.getKey() + " given more than once");
                }
            }
            return this;
        }

        Optional<String> get(String name) {
            List<String> values = parameters.get(name);
            return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
        }

        Optional<Integer> integer(String name, int min, int max) throws ApiError {
            Optional<String> text = get(name);
            if (text.isEmpty()) {
                return Optional.empty();
            }
            try {
                int value = Integer.parseInt(text.get());
                if (value >= min && value <= max) {
                    return Optional.of(value);
                }
            } catch (NumberFormatException e) {
                // below
            }
            throw ApiError.badRequest(name + ": expected a whole number from " + min + " to " + max);
        }
    }
}
