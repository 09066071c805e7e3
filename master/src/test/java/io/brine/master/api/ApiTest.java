package io.brine.master.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.JsonSerializable;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;
import io.brine.daemon.config.MasterConfig;
import io.brine.master.WiredMaster;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.api.ApiTokens;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.PolicyVerdict;
import io.brine.transport.testing.TestCertificates;
import io.brine.transport.tls.TlsFiles;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.security.interfaces.RSAPublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP API over a master wired as the daemon wires it, on loopback: keys bound to the fingerprint seen, jobs
 * through the publisher path, events, and every refusal (JSON, right status, nothing changed). Every route and status
 * seen here must be in openapi.json ({@link #everyAnswerSeenIsDocumented}).
 */
class ApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** (route pattern, method, status) of every answer the tests saw. */
    private static final Set<List<String>> SEEN = ConcurrentHashMap.newKeySet();

    @TempDir
    Path dir;

    WiredMaster master;
    HttpClient http = HttpClient.newHttpClient();
    String scheme = "http";
    String admin;
    String reader;

    @BeforeEach
    void start() throws Exception {
        start(api -> api);
    }

    void start(UnaryOperator<MasterConfig.Api> api) throws Exception {
        if (master != null) {
            master.close();
        }
        master = WiredMaster.start(dir, config -> config.api(api.apply(MasterConfig.Api.loopback(0))));
        Path pki = master.config().pkiDir();
        if (admin == null) {
            admin = ApiTokens.create(
                            pki, "ops", List.of("web*"), List.of("test.*"), true, Duration.ofDays(1), Clock.systemUTC())
                    .token();
            reader = ApiTokens.create(pki, "dash", List.of(), List.of(), false, Duration.ofDays(1), Clock.systemUTC())
                    .token();
        }
    }

    @AfterEach
    void stop() {
        master.close();
    }

    // ------------------------------------------------------------------ helpers

    record Answer(int status, JsonNode json, HttpResponse<String> response) {}

    Answer call(String method, String path, String token, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create(scheme + "://127.0.0.1:" + master.apiPort() + path))
                .timeout(Duration.ofSeconds(30));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        request.method(
                method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        JsonNode json = JSON.readTree(response.body());
        seen(path, method, response.statusCode());
        assertThat(response.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        if (response.statusCode() >= 400) {
            assertError(json, response.statusCode());
        }
        return new Answer(response.statusCode(), json, response);
    }

    Answer get(String path, String token) throws Exception {
        return call("GET", path, token, null);
    }

    Answer post(String path, String token, String body) throws Exception {
        return call("POST", path, token, body);
    }

    static void seen(String path, String method, int status) {
        String route = path.replaceAll("\\?.*", "");
        List<String> segments = List.of(route.substring(1).split("/", -1));
        String pattern = ApiRoutes.route(segments).map(ApiRoutes.Route::pattern).orElse("(none)");
        SEEN.add(List.of(pattern, method.toLowerCase(Locale.ROOT), String.valueOf(status)));
    }

    /** A JSON error: its status, a message, and no trace or path of the master's. */
    void assertError(JsonNode json, int status) {
        assertThat(json.get("status").asInt()).isEqualTo(status);
        assertThat(json.get("message").asText())
                .isNotBlank()
                .doesNotContain("Exception", "\tat ", "io.brine", dir.toString());
    }

    RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    String pending(String id, int key) {
        master.keyStore().offer(id, key(key), PolicyVerdict.NONE);
        settled();
        return Fingerprints.of(key(key));
    }

    /**
     * Until the API lists what the store holds: it lists again after the store's listeners hear of a change, on the
     * store's thread, a moment after a change the test made directly.
     */
    void settled() {
        int stored = master.keyStore().list().keys().values().stream()
                .mapToInt(List::size)
                .sum();
        await().until(() ->
                get("/api/keys?limit=1000", reader).json().get("keys").size() == stored);
    }

    List<String> auditLines() throws Exception {
        return Files.readAllLines(master.config().auditLog());
    }

    // ------------------------------------------------------------------ keys

    @Test
    void keysArePagedAndFilteredAndShown() throws Exception {
        for (int i = 1; i <= 5; i++) {
            pending("web" + i, i);
        }
        pending("db1", 6);
        Answer first = get("/api/keys?state=pending&match=web*&limit=2", reader);
        assertThat(first.status()).isEqualTo(200);
        assertThat(first.json().get("keys"))
                .extracting(k -> k.get("id").asText())
                .containsExactly("web1", "web2");
        assertThat(first.json().get("keys").get(0).get("fingerprint").asText()).isEqualTo(Fingerprints.of(key(1)));
        assertThat(first.json().get("keys").get(0).get("kind").asText()).isEqualTo("brine");
        Answer second = get(
                "/api/keys?state=pending&match=web*&limit=2&after="
                        + first.json().get("next").asText(),
                reader);
        assertThat(second.json().get("keys"))
                .extracting(k -> k.get("id").asText())
                .containsExactly("web3", "web4");
        Answer last = get("/api/keys?state=pending&match=web*&limit=2&after=web4", reader);
        assertThat(last.json().get("keys"))
                .extracting(k -> k.get("id").asText())
                .containsExactly("web5");
        assertThat(last.json().get("next").isNull()).isTrue();

        Answer shown = get("/api/keys/db1", reader);
        assertThat(shown.status()).isEqualTo(200);
        assertThat(shown.json().get("keys").get(0).get("state").asText()).isEqualTo("pending");
        assertThat(shown.json().get("up").asBoolean()).isFalse();
        assertThat(get("/api/keys/nobody", reader).status()).isEqualTo(404);
        assertThat(get("/api/keys/Bad%20Id", reader).json().get("message").asText())
                .startsWith("not a minion id");
        assertThat(get("/api/keys?state=lost", reader).status()).isEqualTo(400);
        assertThat(get("/api/keys?limit=1001", reader).status()).isEqualTo(400);
        assertThat(get("/api/keys?colour=red", reader).status()).isEqualTo(400);
        assertThat(get("/api/keys?limit=1&limit=2", reader).status()).isEqualTo(400);
    }

    @Test
    void anAcceptIsBoundToTheFingerprintSeenAndAuditedWithTheToken() throws Exception {
        String seen = pending("web1", 1);
        // Another admin deletes the key, the minion offers another: the admin's accept must not take it.
        master.keyStore().delete("web1", "someone");
        settled();
        pending("web1", 2);
        Answer refused = post("/api/keys/web1/accept", admin, "{\"fingerprint\": \"" + seen + "\"}");
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.json().get("message").asText()).contains(Fingerprints.of(key(2)), "nothing changed");
        assertThat(master.keyStore().acceptedIds()).isEmpty();

        String now = Fingerprints.of(key(2));
        Answer accepted = post(
                "/api/keys/web1/accept",
                admin,
                "{\"fingerprint\": \"" + now.replace(":", "").toUpperCase(Locale.ROOT) + "\"}");
        assertThat(accepted.status()).isEqualTo(200);
        assertThat(accepted.json().get("result").asText()).isEqualTo("accepted");
        assertThat(master.keyStore().acceptedIds()).containsExactly("web1");
        assertThat(auditLines()).anySatisfy(line -> assertThat(line).contains("\"api:ops\"", "web1", "accepted"));
        assertThat(post("/api/keys/web1/accept", admin, "{\"fingerprint\": \"" + now + "\"}")
                        .json()
                        .get("result")
                        .asText())
                .isEqualTo("unchanged");

        Answer rejected = post("/api/keys/web1/reject", admin, "{\"fingerprint\": \"" + now + "\"}");
        assertThat(rejected.json().get("result").asText()).isEqualTo("rejected");
        Answer deleted = post("/api/keys/web1/delete", admin, "{\"fingerprint\": \"" + now + "\"}");
        assertThat(deleted.json().get("result").asText()).isEqualTo("deleted");
        assertThat(master.keyStore().list().keys(KeyState.REJECTED)).isEmpty();
        assertThat(post("/api/keys/web1/delete", admin, "{\"fingerprint\": \"" + now + "\"}")
                        .status())
                .isEqualTo(404);
    }

    @Test
    void oneKeyOneIdAndReservedIdsAsBrineKey() throws Exception {
        pending("web1", 1);
        master.keyStore().offer("web2", key(1), PolicyVerdict.NONE); // the same key under a second id
        settled();
        String fingerprint = Fingerprints.of(key(1));
        Answer shared = post("/api/keys/web1/accept", admin, "{\"fingerprint\": \"" + fingerprint + "\"}");
        assertThat(shared.status()).isEqualTo(409);
        assertThat(shared.json().get("message").asText()).contains("same key as web2", "allow_shared_key");
        assertThat(master.keyStore().acceptedIds()).isEmpty();
        assertThat(post(
                                "/api/keys/web1/accept",
                                admin,
                                "{\"fingerprint\": \"" + fingerprint + "\", \"allow_shared_key\": true}")
                        .status())
                .isEqualTo(200);

        master.keyStore().offer("master", key(3), PolicyVerdict.NONE);
        settled();
        Answer reserved =
                post("/api/keys/master/accept", admin, "{\"fingerprint\": \"" + Fingerprints.of(key(3)) + "\"}");
        assertThat(reserved.status()).isEqualTo(409);
        assertThat(master.keyStore().acceptedIds()).containsExactly("web1");
    }

    @Test
    void badBodiesAreRefusedAndChangeNothing() throws Exception {
        String fingerprint = pending("web1", 1);
        for (String body : List.of(
                "{\"fingerprint\": ",
                "[1, 2]",
                "{\"fingerprint\": 42}",
                "{\"fingerprint\": \"" + fingerprint + "\", \"force\": true}",
                "{\"fingerprint\": \"" + fingerprint + "\", \"fingerprint\": \"" + fingerprint + "\"}",
                "{\"fingerprint\": \"zz\"}",
                "{}",
                "{\"fingerprint\": \"" + fingerprint + "\"} {}",
                "[".repeat(100) + "]".repeat(100))) {
            Answer answer = post("/api/keys/web1/accept", admin, body);
            assertThat(answer.status()).as(body).isEqualTo(400);
        }
        Answer empty = call("POST", "/api/keys/web1/accept", admin, "");
        assertThat(empty.status()).isEqualTo(400);
        HttpResponse<String> text = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + master.apiPort() + "/api/keys/web1/accept"))
                        .header("Authorization", "Bearer " + admin)
                        .header("Content-Type", "text/plain")
                        .POST(HttpRequest.BodyPublishers.ofString("{}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(text.statusCode()).isEqualTo(415);
        seen("/api/keys/web1/accept", "POST", 415);
        assertThat(master.keyStore().acceptedIds()).isEmpty();
        assertThat(master.keyStore().list().keys(KeyState.PENDING)).hasSize(1);
    }

    @Test
    void tokensMissingWrongRevokedExpiredOrWithoutThePermissionAreRefused() throws Exception {
        String fingerprint = pending("web1", 1);
        String body = "{\"fingerprint\": \"" + fingerprint + "\"}";
        Answer none = post("/api/keys/web1/accept", null, body);
        assertThat(none.status()).isEqualTo(401);
        assertThat(none.response().headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"brine\"");
        assertThat(post("/api/keys/web1/accept", "brine_" + "x".repeat(43), body)
                        .status())
                .isEqualTo(401);
        HttpResponse<String> basic = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + master.apiPort() + "/api/keys"))
                        .header("Authorization", "Basic b3BzOnB3")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(basic.statusCode()).isEqualTo(401);
        assertThat(post("/api/keys/web1/accept", reader, body).status()).isEqualTo(403);

        Path pki = master.config().pkiDir();
        String expired = ApiTokens.create(
                        pki,
                        "old",
                        List.of("*"),
                        List.of("*"),
                        true,
                        Duration.ofHours(1),
                        Clock.fixed(Instant.now().minus(Duration.ofHours(2)), ZoneOffset.UTC))
                .token();
        assertThat(post("/api/keys/web1/accept", expired, body).status()).isEqualTo(401);

        assertThat(get("/api/keys", admin).status()).isEqualTo(200);
        assertThat(ApiTokens.revoke(pki, "ops")).isTrue();
        Answer revoked = post("/api/keys/web1/accept", admin, body);
        assertThat(revoked.status()).isEqualTo(401);
        assertThat(revoked.json().get("message").asText()).isEqualTo("invalid token (unknown, revoked or expired)");
        assertThat(master.keyStore().acceptedIds()).isEmpty();
    }

    @Test
    void aTokenFileOthersCouldWriteIsNotTrusted() throws Exception {
        assertThat(get("/api/keys", reader).status()).isEqualTo(200);
        Path file = ApiTokens.file(master.config().pkiDir());
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
        assertThat(get("/api/keys", reader).status()).isEqualTo(401);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertThat(get("/api/keys", reader).status()).isEqualTo(200);
    }

    @Test
    void unknownRoutesAndWrongMethods() throws Exception {
        Answer unknown = get("/api/nothing", reader);
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(get("/nothing", reader).status()).isEqualTo(404);
        assertThat(get("/api/keys/web1/accept/more", reader).status()).isEqualTo(404);
        Answer wrong = call("DELETE", "/api/keys", reader, null);
        assertThat(wrong.status()).isEqualTo(405);
        assertThat(wrong.response().headers().firstValue("Allow")).hasValue("GET");
        assertThat(get("/api/keys/web1/accept", admin).status()).isEqualTo(405);
        Answer openapi = get("/api/openapi.json", null);
        assertThat(openapi.status()).isEqualTo(200);
        assertThat(openapi.json().get("openapi").asText()).isEqualTo("3.1.0");
    }

    // ------------------------------------------------------------------ the console's files

    HttpResponse<String> page(String method, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + master.apiPort() + path))
                        .method(method, HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The answer's status line and headers to a request line sent as it is (no client tidies the path). */
    String rawHead(String path) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", master.apiPort())) {
            socket.getOutputStream()
                    .write(("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return answer.substring(0, answer.indexOf("\r\n\r\n"));
        }
    }

    @Test
    void theConsoleIsServedFromAFixedListWithAStrictPolicy() throws Exception {
        Map<String, String> files = Map.of(
                "/",
                "text/html; charset=utf-8",
                "/console/app.js",
                "text/javascript; charset=utf-8",
                "/console/api.js",
                "text/javascript; charset=utf-8",
                "/console/dom.js",
                "text/javascript; charset=utf-8",
                "/console/pages.js",
                "text/javascript; charset=utf-8",
                "/console/console.css",
                "text/css; charset=utf-8");
        for (Map.Entry<String, String> file : files.entrySet()) {
            HttpResponse<String> response = page("GET", file.getKey());
            assertThat(response.statusCode()).as(file.getKey()).isEqualTo(200);
            assertThat(response.headers().firstValue("Content-Type")).hasValue(file.getValue());
            assertThat(response.headers().firstValue("Content-Security-Policy")).hasValue(ConsoleFiles.POLICY);
            assertThat(response.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
            assertThat(response.headers().firstValue("Referrer-Policy")).hasValue("no-referrer");
            assertThat(response.headers().firstValue("Set-Cookie")).isEmpty();
            // Minion-controlled strings become text nodes: nothing in the console parses markup or code.
            assertThat(response.body())
                    .as(file.getKey())
                    .doesNotContain(
                            "innerHTML",
                            "outerHTML",
                            "insertAdjacentHTML",
                            "document.write",
                            "eval(",
                            "new Function",
                            "style=",
                            "localStorage");
        }
        String index = page("GET", "/").body();
        assertThat(index)
                .contains("<script type=\"module\" src=\"/console/app.js\"></script>")
                .doesNotContainPattern("<script(?![^>]*\\ssrc=)")
                .doesNotContain("<style", "http://", "https://");
        assertThat(ConsoleFiles.POLICY)
                .contains("default-src 'self'", "frame-ancestors 'none'")
                .doesNotContain("unsafe");

        // Only the list: no decoding, no resolving, nothing of the jar or the disk by its name.
        for (String path : List.of(
                "/console/",
                "/console",
                "/console//app.js",
                "/console/app.js/",
                "/console/App.js",
                "/console/%61pp.js",
                "/console/../console/app.js",
                "/console/%2e%2e/api/openapi.json",
                "/io/brine/master/api/openapi.json",
                "/console/openapi.json",
                "/logback.xml",
                "/../../etc/passwd",
                "/console/..%2fapi.js",
                "/index.html/",
                "/console/index.html")) {
            String head = rawHead(path);
            assertThat(head)
                    .as(path)
                    .startsWith("HTTP/1.1 404")
                    .contains("application/json", "content-security-policy: " + ConsoleFiles.NONE);
        }
        HttpResponse<String> posted = page("POST", "/");
        assertThat(posted.statusCode()).isEqualTo(405);
        assertThat(posted.headers().firstValue("Allow")).hasValue("GET");
        // The API's answers: nothing in them may run, be framed, or leak a referrer.
        Answer api = get("/api/keys", reader);
        assertThat(api.response().headers().firstValue("Content-Security-Policy"))
                .hasValue(ConsoleFiles.NONE);
        assertThat(api.response().headers().firstValue("Referrer-Policy")).hasValue("no-referrer");
    }

    // ------------------------------------------------------------------ limits

    @Test
    void aBodyOverTheLimitIsRefusedAsItArrives() throws Exception {
        String fingerprint = pending("web1", 1);
        String body = "{\"fingerprint\": \"" + fingerprint + "\", \"pad\": \"" + "x".repeat(70_000) + "\"}";
        Answer huge = post("/api/keys/web1/accept", admin, body);
        assertThat(huge.status()).isEqualTo(413);
        assertThat(master.keyStore().acceptedIds()).isEmpty();
        // Chunked, without a length announced: refused once the limit is passed.
        try (Socket socket = new Socket("127.0.0.1", master.apiPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /api/keys/web1/accept HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + admin
                            + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = ("4000\r\n" + "x".repeat(0x4000) + "\r\n").getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < 5; i++) {
                out.write(chunk);
            }
            out.flush();
            String status = new BufferedReader(
                            new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))
                    .readLine();
            assertThat(status).isEqualTo("HTTP/1.1 413 Request Entity Too Large");
        }
        seen("/api/keys/web1/accept", "POST", 413);
    }

    @Test
    void aBodyAnnouncedOverTheLimitAndSentWholeStillGetsItsAnswer() throws Exception {
        // The master answers 413 as soon as the length is announced; the client, as most do, sends the body anyway.
        // Closed at once, the connection's unread bytes were answered with a reset that could destroy the 413 before
        // it was read (ci: "header parser received no bytes"); drained, the client reads it after the whole body.
        int length = 4 << 20;
        try (Socket socket = new Socket("127.0.0.1", master.apiPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /api/keys/web1/accept HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + admin
                            + "\r\nContent-Type: application/json\r\nContent-Length: " + length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] block = new byte[64 * 1024];
            for (int sent = 0; sent < length; sent += block.length) {
                out.write(block);
            }
            out.flush();
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer)
                    .startsWith("HTTP/1.1 413 Request Entity Too Large")
                    .contains("\"status\":413");
        }
        assertThat(master.keyStore().acceptedIds()).isEmpty();
    }

    @Test
    void aSlowRequestIsCutOffAt408() throws Exception {
        start(api -> api.withLimits(
                api.maxBodyBytes(), api.maxConnections(), api.requestsPerSecond(), Duration.ofSeconds(1)));
        try (Socket socket = new Socket("127.0.0.1", master.apiPort())) {
            socket.setSoTimeout((int) TimeUnit.MINUTES.toMillis(1));
            OutputStream out = socket.getOutputStream();
            out.write(("POST /api/keys/web1/accept HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            + "Content-Length: 100\r\n\r\n{\"fing")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            // The rest never comes: the master answers 408 and closes.
            InputStream in = socket.getInputStream();
            String answer = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer).startsWith("HTTP/1.1 408 Request Timeout").contains("\"status\":408");
        }
        seen("/api/keys/web1/accept", "POST", 408);
    }

    @Test
    void requestsOverTheTokensRateAre429() throws Exception {
        start(api -> api.withLimits(api.maxBodyBytes(), api.maxConnections(), 1, api.requestTimeout()));
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            statuses.add(get("/api/minions", reader).status());
        }
        // The burst is twice the rate: the first two pass whatever the machine's speed, and ten cannot all pass.
        assertThat(statuses.subList(0, 2)).containsOnly(200);
        assertThat(statuses).contains(429);
    }

    @Test
    void connectionsOverTheCapAreClosed() throws Exception {
        start(api -> api.withLimits(api.maxBodyBytes(), 2, api.requestsPerSecond(), api.requestTimeout()));
        try (Socket one = new Socket("127.0.0.1", master.apiPort());
                Socket two = new Socket("127.0.0.1", master.apiPort())) {
            await().until(() -> {
                try (Socket three = new Socket("127.0.0.1", master.apiPort())) {
                    three.setSoTimeout(10_000);
                    return three.getInputStream().read() == -1;
                }
            });
        }
        assertThat(get("/api/minions", reader).status()).isEqualTo(200);
    }

    @Test
    void plainHttpOffLoopbackIsRefusedAtStart() {
        assertThatThrownBy(() -> start(api -> new MasterConfig.Api(
                        "0.0.0.0",
                        0,
                        Optional.empty(),
                        api.maxBodyBytes(),
                        api.maxConnections(),
                        api.requestsPerSecond(),
                        api.requestTimeout())))
                .hasMessageContaining("api: interface 0.0.0.0 is not loopback and api.tls is not set");
    }

    // ------------------------------------------------------------------ client certificates

    /** The API over HTTPS ({@code server}'s files), with client certificates signed by {@code ca}. */
    void startTls(
            TestCertificates.CertFiles server,
            TestCertificates.CertFiles ca,
            MasterConfig.ClientAuth mode,
            Set<String> revoked)
            throws Exception {
        start(api -> api.withTls(
                new MasterConfig.Tls(server.cert(), server.key()),
                Optional.of(new MasterConfig.ClientCerts(ca.cert(), mode, revoked))));
        scheme = "https";
        http = tlsClient(server, null);
    }

    /** A client that trusts {@code server}'s certificate and sends {@code client}'s, if any. */
    static HttpClient tlsClient(TestCertificates.CertFiles server, TestCertificates.CertFiles client) throws Exception {
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        trusted.setCertificateEntry("api", TlsFiles.certificates(server.cert()).get(0));
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        KeyStore own = KeyStore.getInstance("PKCS12");
        own.load(null, null);
        if (client != null) {
            own.setKeyEntry(
                    "client",
                    TlsFiles.privateKey(client.key()),
                    new char[] {'x'},
                    TlsFiles.certificates(client.cert()).toArray(new Certificate[0]));
        }
        keys.init(own, new char[] {'x'});
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(context).build();
    }

    static String sha256(TestCertificates.CertFiles files) throws Exception {
        return HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-256")
                        .digest(TlsFiles.certificates(files.cert()).get(0).getEncoded()));
    }

    @Test
    void aClientCertificateStandsForTheTokenItsCnNames() throws Exception {
        Path tls = dir.resolve("tls");
        TestCertificates.CertFiles server = TestCertificates.selfSigned(tls, "api", 20);
        TestCertificates.CertFiles ca = TestCertificates.selfSigned(tls, "clients", 21);
        startTls(server, ca, MasterConfig.ClientAuth.OPTIONAL, Set.of());
        String fingerprint = pending("web1", 1);

        http = tlsClient(server, TestCertificates.issued(tls, "ops", "ops", 22, ca, 21));
        Answer accepted = post("/api/keys/web1/accept", null, "{\"fingerprint\": \"" + fingerprint + "\"}");
        assertThat(accepted.status()).isEqualTo(200);
        assertThat(master.keyStore().acceptedIds()).containsExactly("web1");
        assertThat(auditLines()).anySatisfy(line -> assertThat(line).contains("api:ops", "web1"));

        // Optional: a bearer token without a certificate still works; neither is refused.
        http = tlsClient(server, null);
        assertThat(get("/api/keys", reader).status()).isEqualTo(200);
        Answer none = get("/api/keys", null);
        assertThat(none.status()).isEqualTo(401);
        assertThat(none.json().get("message").asText()).endsWith("or a client certificate");

        // A CN that names no token, or more than a token name.
        http = tlsClient(server, TestCertificates.issued(tls, "stranger", "stranger", 23, ca, 21));
        assertThat(get("/api/keys", null).status()).isEqualTo(401);
        http = tlsClient(server, TestCertificates.issued(tls, "upper", "OPS", 24, ca, 21));
        assertThat(get("/api/keys", null).status()).isEqualTo(401);

        // Revoking the token refuses the certificate from the next request.
        http = tlsClient(server, TestCertificates.issued(tls, "ops2", "ops", 25, ca, 21));
        assertThat(get("/api/keys", null).status()).isEqualTo(200);
        assertThat(ApiTokens.revoke(master.config().pkiDir(), "ops")).isTrue();
        Answer revoked = get("/api/keys", null);
        assertThat(revoked.status()).isEqualTo(401);
        assertThat(revoked.json().get("message").asText()).contains("names no API token");
    }

    @Test
    void clientCertificatesTheCaDoesNotVerifyOrTheConfigRevokesAreRefused() throws Exception {
        Path tls = dir.resolve("tls");
        TestCertificates.CertFiles server = TestCertificates.selfSigned(tls, "api", 20);
        TestCertificates.CertFiles ca = TestCertificates.selfSigned(tls, "clients", 21);
        TestCertificates.CertFiles stolen = TestCertificates.issued(tls, "stolen", "dash", 22, ca, 21);
        startTls(server, ca, MasterConfig.ClientAuth.OPTIONAL, Set.of(sha256(stolen)));

        // Signed by another CA of the same name, with a CN that names a token: refused at the handshake, even with
        // a valid bearer token beside it.
        TestCertificates.CertFiles forgedCa = TestCertificates.selfSigned(tls.resolve("forged"), "clients", 23);
        http = tlsClient(server, TestCertificates.issued(tls.resolve("forged"), "ops", "ops", 25, forgedCa, 23));
        assertThatThrownBy(() -> get("/api/keys", null)).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> get("/api/keys", reader)).isInstanceOf(IOException.class);

        // Listed in client_revoked: 401, alone or beside a valid bearer token.
        http = tlsClient(server, stolen);
        Answer revoked = get("/api/keys", null);
        assertThat(revoked.status()).isEqualTo(401);
        assertThat(revoked.json().get("message").asText())
                .isEqualTo("client certificate revoked" + " (api.client_revoked)");
        assertThat(get("/api/keys", reader).status()).isEqualTo(401);
        // Another certificate for the same name is not revoked with it.
        http = tlsClient(server, TestCertificates.issued(tls, "renewed", "dash", 24, ca, 21));
        assertThat(get("/api/keys", null).status()).isEqualTo(200);

        // Required: no certificate, no connection, whatever token is sent.
        startTls(server, ca, MasterConfig.ClientAuth.REQUIRED, Set.of());
        http = tlsClient(server, null);
        assertThatThrownBy(() -> get("/api/keys", reader)).isInstanceOf(IOException.class);
        http = tlsClient(server, TestCertificates.issued(tls, "renewed", "dash", 24, ca, 21));
        assertThat(get("/api/keys", null).status()).isEqualTo(200);
    }

    // ------------------------------------------------------------------ jobs, minions, events

    @Test
    void jobsGoThroughThePublisherPathWithTheTokensAcl() throws Exception {
        master.keyStore().offer("web1", key(1), PolicyVerdict.ACCEPT);
        master.keyStore().offer("db1", key(2), PolicyVerdict.ACCEPT);
        Answer published = post("/api/jobs", admin, "{\"target\": \"web*\", \"fun\": \"test.ping\"}");
        assertThat(published.status()).isEqualTo(202);
        assertThat(published.json().get("minions")).extracting(JsonNode::asText).containsExactly("web1");
        String jid = published.json().get("jid").asText();
        Answer shown = get("/api/jobs/" + jid, admin);
        assertThat(shown.json().get("publisher").asText()).isEqualTo("api:ops");
        assertThat(shown.json().get("missing")).extracting(JsonNode::asText).containsExactly("web1");
        assertThat(get("/api/jobs", admin).json().get("jobs"))
                .extracting(j -> j.get("jid").asText())
                .containsExactly(jid);
        // Another token does not see it.
        assertThat(get("/api/jobs/" + jid, reader).status()).isEqualTo(404);
        assertThat(auditLines()).anySatisfy(line -> assertThat(line).contains("\"publish\"", "api:ops", jid));

        assertThat(post("/api/jobs", admin, "{\"target\": \"*\", \"fun\": \"test.ping\"}")
                        .status())
                .isEqualTo(403);
        assertThat(post("/api/jobs", admin, "{\"target\": \"web*\", \"fun\": \"cmd.run\"}")
                        .status())
                .isEqualTo(403);
        assertThat(post("/api/jobs", admin, "{\"target\": \"web*\", \"fun\": \"test.ping\", \"timeout\": \"5\"}")
                        .status())
                .isEqualTo(400);
        assertThat(post(
                                "/api/jobs",
                                admin,
                                "{\"target\": \"G@os\", \"target_type\": \"compound\"," + " \"fun\": \"test.ping\"}")
                        .status())
                .isEqualTo(400);
        assertThat(get("/api/jobs/20260101", admin).status()).isEqualTo(400);
        assertThat(get("/api/jobs", admin).json().get("jobs")).hasSize(1);

        Answer minions = get("/api/minions", reader);
        assertThat(minions.json().get("down")).extracting(JsonNode::asText).containsExactly("db1", "web1");
        assertThat(minions.json().get("up")).isEmpty();
    }

    @Test
    void batchRunsAreRefusedAsJobsAreAndShownOnlyToTheirToken() throws Exception {
        String ci = ApiTokens.create(
                        master.config().pkiDir(),
                        "ci",
                        List.of("web*"),
                        List.of("test.*"),
                        false,
                        Duration.ofDays(1),
                        Clock.systemUTC())
                .token();
        master.keyStore().offer("web1", key(1), PolicyVerdict.ACCEPT);
        master.keyStore().offer("web2", key(2), PolicyVerdict.ACCEPT);
        master.keyStore().offer("db1", key(3), PolicyVerdict.ACCEPT);
        for (String size : List.of("0", "101%", "0%", "-1", "1.5", "x", "5%%", "%", "", "1234567890", "50 %")) {
            Answer refused = post(
                    "/api/jobs",
                    ci,
                    "{\"target\": \"web*\", \"fun\": \"test.ping\"," + " \"batch\": \"" + size + "\"}");
            assertThat(refused.status()).as(size).isEqualTo(400);
            assertThat(refused.json().get("message").asText()).startsWith("batch: expected N");
        }
        assertThat(post("/api/jobs", ci, "{\"target\": \"web*\", \"fun\": \"test.ping\", \"batch\": 2}")
                        .status())
                .isEqualTo(400);
        // The job's own ACL, before any test.ping goes out: no publication, a refusal audited.
        assertThat(post("/api/jobs", ci, "{\"target\": \"web*\", \"fun\": \"cmd.run\", \"batch\": \"1\"}")
                        .status())
                .isEqualTo(403);
        assertThat(post("/api/jobs", ci, "{\"target\": \"*\", \"fun\": \"test.ping\", \"batch\": \"1\"}")
                        .status())
                .isEqualTo(403);
        assertThat(get("/api/jobs", ci).json().get("jobs")).isEmpty();
        assertThat(auditLines()).anySatisfy(line -> assertThat(line).contains("publish-refused", "api:ci", "cmd.run"));

        Answer started = post(
                "/api/jobs",
                ci,
                "{\"target\": \"web*\", \"fun\": \"test.ping\"," + " \"batch\": \"50%\", \"timeout\": 5}");
        assertThat(started.status()).isEqualTo(202);
        String id = started.json().get("batch_id").asText();
        assertThat(started.json().get("targeted")).extracting(JsonNode::asText).containsExactly("web1", "web2");
        String ping = started.json().get("ping_jid").asText();
        assertThat(get("/api/jobs/" + ping, ci).json().get("publisher").asText())
                .isEqualTo("api:ci");
        // Neither minion is connected: nobody answers the ping, so no batch is published.
        await().until(() ->
                get("/api/jobs/batches/" + id, ci).json().get("state").asText().equals("done"));
        assertThat(get("/api/jobs/batches/" + id, ci).json().get("batches")).isEmpty();
        // Another token does not see it; a key-admin token does.
        assertThat(get("/api/jobs/batches/" + id, reader).status()).isEqualTo(404);
        assertThat(get("/api/jobs/batches/" + id, admin).json().get("batch_id").asText())
                .isEqualTo(id);
        assertThat(get("/api/jobs/batches/" + "0".repeat(32), ci).status()).isEqualTo(404);
        assertThat(get("/api/jobs/batches/..%2Fx", ci).status()).isEqualTo(400);
    }

    @Test
    void eventsAreStreamedAndResumedFromLastEventId() throws Exception {
        List<String> first = new ArrayList<>();
        try (Socket socket = events(null)) {
            BufferedReader in = reader(socket);
            assertThat(in.readLine()).isEqualTo("HTTP/1.1 200 OK");
            skipToSubscribed(in);
            pending("web1", 1);
            pending("web2", 2);
            first.addAll(readEvent(in));
            first.addAll(readEvent(in));
        }
        assertThat(first.get(1)).contains("web1");
        String firstId = first.get(0).substring("id: ".length());
        // Reconnecting after the first event: the second is sent again (before the live ones).
        try (Socket socket = events(firstId)) {
            assertThat(readEvent(reader(socket))).isEqualTo(first.subList(2, 4));
        }
        seen("/api/events", "GET", 200);
    }

    @Test
    void anEventIsEncodedOnceForAllItsReaders() throws Exception {
        AtomicInteger encoded = new AtomicInteger();
        JsonSerializable counted = new JsonSerializable.Base() {
            @Override
            public void serialize(JsonGenerator out, SerializerProvider provider) throws IOException {
                encoded.incrementAndGet();
                out.writeString("counted");
            }

            @Override
            public void serializeWithType(JsonGenerator out, SerializerProvider provider, TypeSerializer type)
                    throws IOException {
                serialize(out, provider);
            }
        };
        List<Socket> sockets = new ArrayList<>();
        try {
            List<BufferedReader> readers = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                Socket socket = events(null);
                sockets.add(socket);
                BufferedReader in = reader(socket);
                skipToSubscribed(in);
                readers.add(in);
            }
            master.events().emit("brine/key/probe", List.of("web1"), Map.of("probe", counted));
            List<List<String>> got = new ArrayList<>();
            for (BufferedReader in : readers) {
                got.add(readEvent(in));
            }
            assertThat(got).allSatisfy(event -> assertThat(event).isEqualTo(got.get(0)));
            assertThat(got.get(0).get(1)).contains("\"probe\":\"counted\"");
            assertThat(encoded).hasValue(1);
        } finally {
            for (Socket socket : sockets) {
                socket.close();
            }
        }
    }

    @Test
    void anEventStreamEndsWhenItsTokenIsRevoked() throws Exception {
        try (Socket socket = events(null)) {
            BufferedReader in = reader(socket);
            skipToSubscribed(in);
            assertThat(ApiTokens.revoke(master.config().pkiDir(), "ops")).isTrue();
            // Within a check or two of the token (no event comes meanwhile): the master closes the stream.
            String line;
            while ((line = in.readLine()) != null) {
                assertThat(line).doesNotStartWith("data:");
            }
        }
        assertThat(get("/api/events", admin).status()).isEqualTo(401);
    }

    @Test
    void aSubscriberThatDoesNotReadIsCutOffAndTheMasterGoesOn() throws Exception {
        int before = master.eventSubscribers();
        try (Socket socket = new Socket()) {
            socket.setReceiveBufferSize(4096);
            socket.connect(new InetSocketAddress("127.0.0.1", master.apiPort()));
            socket.getOutputStream()
                    .write(("GET /api/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + admin + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            await().until(() -> master.eventSubscribers() == before + 1);
            // Never read: 64 MiB of events cannot all fit in the socket buffers and the 1 MiB allowed.
            String pad = "x".repeat(64 * 1024);
            for (int i = 0; i < 1024 && master.eventSubscribers() > before; i++) {
                master.events().emit("brine/key/test", List.of("web1"), Map.of("pad", pad));
            }
            assertThat(master.eventSubscribers()).isEqualTo(before);
            socket.setSoTimeout((int) TimeUnit.MINUTES.toMillis(1));
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[65536];
            while (in.read(buffer) >= 0) {
                // what the kernel still held, then the end: the connection is closed
            }
        }
        assertThat(get("/api/minions", reader).status()).isEqualTo(200);
    }

    private Socket events(String lastEventId) throws Exception {
        Socket socket = new Socket("127.0.0.1", master.apiPort());
        socket.setSoTimeout((int) TimeUnit.MINUTES.toMillis(1));
        socket.getOutputStream()
                .write(("GET /api/events?tag=*key* HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + admin + "\r\n"
                                + (lastEventId == null ? "" : "Last-Event-ID: " + lastEventId + "\r\n") + "\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
        return socket;
    }

    private static BufferedReader reader(Socket socket) throws Exception {
        return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
    }

    private static void skipToSubscribed(BufferedReader in) throws Exception {
        String line;
        while ((line = in.readLine()) != null && !line.endsWith(": subscribed")) {
            // headers and chunk sizes
        }
    }

    /** The id and data lines of the next event (chunk sizes skipped). */
    private static List<String> readEvent(BufferedReader in) throws Exception {
        List<String> lines = new ArrayList<>();
        String line;
        while (lines.size() < 2 && (line = in.readLine()) != null) {
            if (line.startsWith("id: ") || line.startsWith("data: ")) {
                lines.add(line);
            }
        }
        return lines;
    }

    // ------------------------------------------------------------------ the document

    @AfterAll
    static void everyAnswerSeenIsDocumented() throws Exception {
        JsonNode paths;
        try (InputStream in = ApiServer.class.getResourceAsStream("openapi.json")) {
            paths = JSON.readTree(in).get("paths");
        }
        List<String> routes = new ArrayList<>();
        paths.fieldNames().forEachRemaining(routes::add);
        assertThat(routes)
                .containsExactlyInAnyOrderElementsOf(
                        ApiRoutes.ROUTES.stream().map(ApiRoutes.Route::pattern).toList());
        for (ApiRoutes.Route route : ApiRoutes.ROUTES) {
            for (String method : route.methods()) {
                assertThat(paths.get(route.pattern()).has(method.toLowerCase(Locale.ROOT)))
                        .as(method + " " + route.pattern())
                        .isTrue();
            }
        }
        for (List<String> answer : SEEN) {
            if (answer.get(0).equals("(none)")) {
                continue; // no route: a 404 for any path
            }
            JsonNode operation = paths.get(answer.get(0)).get(answer.get(1));
            if (operation == null) {
                assertThat(answer.get(2)).as(answer.toString()).isEqualTo("405");
                continue;
            }
            assertThat(operation.get("responses").has(answer.get(2)))
                    .as(answer.toString())
                    .isTrue();
        }
    }
}
