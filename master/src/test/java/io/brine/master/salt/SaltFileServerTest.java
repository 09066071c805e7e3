package io.brine.master.salt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import com.github.benmanes.caffeine.cache.Ticker;
import io.brine.daemon.testing.LogCapture;
import io.brine.protocol.salt.SaltCommand;
import io.brine.protocol.salt.SaltDialect;
import io.brine.protocol.salt.SaltMsgpack;
import io.brine.protocol.salt.SaltValue;
import io.brine.protocol.salt.SaltValues;
import io.brine.protocol.testing.MovableClock;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The file server as a stock minion meets it: each request's answer in Salt's shape (salt/fileserver, roots.py,
 * AESFuncs._master_opts), every confinement case answered as a missing file and logged once, escaped, the listing
 * and hashes reused, and each bound tested one past it.
 */
class SaltFileServerTest {

    private static final int CHUNK = 4096;

    @TempDir
    Path dir;

    Path srv;
    Path outside;
    final MovableClock clock = new MovableClock(Instant.parse("2026-11-28T22:00:00Z"));
    FileRoots roots;
    SaltFileServer server;

    @BeforeEach
    void setUp() throws IOException {
        srv = Files.createDirectories(dir.resolve("srv"));
        outside = Files.createDirectories(dir.resolve("outside"));
        Files.writeString(outside.resolve("shadow"), "root:secret\n");
        Files.writeString(srv.resolve("top.sls"), "base:\n  '*':\n    - web\n");
        Files.createDirectories(srv.resolve("web/files"));
        Files.writeString(srv.resolve("web/init.sls"), "motd:\n  file.managed:\n    - source: salt://web/motd\n");
        Files.writeString(srv.resolve("web/motd"), "hello\n");
        Files.createDirectories(srv.resolve("empty"));
        Files.createDirectories(srv.resolve(".git"));
        Files.writeString(srv.resolve(".git/config"), "[core]\n");
        Files.writeString(srv.resolve("web/.secret"), "x");
        Files.writeString(srv.resolve("web/notes.bak"), "x");
        Files.writeString(srv.resolve("web/draft.swp"), "x");
        Files.createSymbolicLink(srv.resolve("web/motd-link"), Path.of("motd"));
        Files.createSymbolicLink(srv.resolve("web/shadow"), outside.resolve("shadow"));
        Files.createSymbolicLink(srv.resolve("etc"), outside);
        server = server(SaltFileServer.Limits.defaults().bufferSize(), 1_000, 10_000, 1L << 26);
    }

    private SaltFileServer server(int buffer, int rate, int burst, long inFlight) {
        roots = new FileRoots(
                new FileRoots.Options(
                        Map.of("base", List.of(srv), "dev", List.of(srv.resolve("web"))),
                        List.of(Pattern.compile("\\.bak$")),
                        List.of("*.swp"),
                        "sha256",
                        Duration.ofSeconds(20),
                        FileRoots.MAX_ENTRIES),
                clock);
        return new SaltFileServer(
                roots, new SaltFileServer.Limits(buffer, rate, burst, inFlight), clock, Ticker.disabledTicker());
    }

    private static SaltCommand.FileRequest request(String cmd, String path, String saltenv) {
        return new SaltCommand.FileRequest(
                cmd,
                Optional.ofNullable(path),
                Optional.ofNullable(saltenv),
                Optional.empty(),
                Optional.of(0L),
                Optional.empty(),
                false);
    }

    private List<Object> answers(SaltCommand.FileRequest request) {
        List<Object> answers = new ArrayList<>();
        server.serve("salt1", "10.0.0.7", request, value -> answers.add(SaltValues.toPlain(value)));
        return answers;
    }

    private Object answer(SaltCommand.FileRequest request) {
        List<Object> answers = answers(request);
        assertThat(answers).hasSize(1);
        return answers.get(0);
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void masterOptsAreSaltsWithTheEnvironmentsNamedAndTheirDirectoriesNot() {
        Map<?, ?> opts = (Map<?, ?>) answer(request("_master_opts", null, null));
        assertThat(opts.get("file_roots")).isEqualTo(Map.of("base", List.of(), "dev", List.of()));
        assertThat(opts.get("renderer")).isEqualTo("jinja|yaml");
        assertThat(opts.get("state_top")).isEqualTo("top.sls");
        assertThat(opts.get("failhard")).isEqualTo(false);
        assertThat(opts.get("top_file_merging_strategy")).isEqualTo("merge");
        assertThat(opts.containsKey("state_top_saltenv")).isTrue();
        Map<?, ?> envOnly = (Map<?, ?>) answer(new SaltCommand.FileRequest(
                "_master_opts",
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                true));
        assertThat(new ArrayList<Object>(envOnly.keySet()))
                .containsExactly("file_roots", "top_file_merging_strategy", "env_order", "default_top");
        assertThat(answer(request("_file_envs", null, null))).isEqualTo(List.of("base", "dev"));
        assertThat(answer(request("_master_tops", null, null))).isEqualTo(Map.of());
        assertThat(answer(request("_ext_nodes", null, null))).isEqualTo(Map.of());
    }

    @Test
    void listingsLeaveOutHiddenIgnoredAndLinksThatLeaveTheRoot() {
        assertThat(answer(request("_file_list", null, "base")))
                .isEqualTo(List.of("top.sls", "web/init.sls", "web/motd", "web/motd-link"));
        assertThat(answer(request("_dir_list", null, "base"))).isEqualTo(List.of("empty", "web", "web/files"));
        assertThat(answer(request("_file_list_emptydirs", null, "base"))).isEqualTo(List.of("empty", "web/files"));
        assertThat(answer(request("_symlink_list", null, "base"))).isEqualTo(Map.of("web/motd-link", "motd"));
        assertThat(answer(new SaltCommand.FileRequest(
                        "_file_list",
                        Optional.empty(),
                        Optional.of("base"),
                        Optional.of("/web/"),
                        Optional.empty(),
                        Optional.empty(),
                        false)))
                .isEqualTo(List.of("web/init.sls", "web/motd", "web/motd-link"));
        assertThat(answer(request("_file_list", null, "prod"))).isEqualTo(List.of());
        assertThat(answer(request("_file_list", null, null))).isEqualTo(List.of());
    }

    @Test
    void aFileIsHashedFoundAndStattedAndAMissingOneGetsSaltsEmptyAnswers() throws Exception {
        Map<?, ?> hash = (Map<?, ?>) answer(request("_file_hash", "web/motd", "base"));
        assertThat(hash).isEqualTo(Map.of("hsum", sha256("hello\n"), "hash_type", "sha256"));
        assertThat(answer(request("_file_hash", "salt://nothing", "base"))).isEqualTo("");
        assertThat(answer(request("_file_hash", "web/motd", null))).isEqualTo("");
        List<?> hashAndStat = (List<?>) answer(request("_file_hash_and_stat", "./web//motd", "base"));
        assertThat(hashAndStat.get(0)).isEqualTo(hash);
        List<?> stat = (List<?>) hashAndStat.get(1);
        assertThat(stat).hasSize(10);
        assertThat(((Long) stat.get(0)) & 0170000).isEqualTo(0100000);
        assertThat(stat.get(6)).isEqualTo(6L);
        assertThat(answer(request("_file_hash_and_stat", "nothing", "base"))).isEqualTo(Arrays.asList("", null));
        Map<?, ?> found = (Map<?, ?>) answer(request("_file_find", "web/motd-link", "base"));
        assertThat(found.get("rel")).isEqualTo("web/motd-link");
        assertThat(found.get("path")).isEqualTo("web/motd-link"); // never the master's own path
        assertThat(found.get("back")).isEqualTo("roots");
        assertThat(answer(request("_file_find", "nothing", "base"))).isEqualTo(Map.of("path", "", "rel", ""));
        assertThat(answer(request("_file_hash", "motd", "dev"))).isEqualTo(hash);
    }

    @Test
    void aFileIsServedInChunksOfFileBufferSizeGzippedWhenAsked() throws Exception {
        server = server(CHUNK, 1_000, 10_000, 1L << 26);
        byte[] big = new byte[CHUNK * 2 + 100];
        new Random(7).nextBytes(big);
        Files.write(srv.resolve("web/big.bin"), big);
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        int chunks = 0;
        while (true) {
            Map<?, ?> chunk = (Map<?, ?>) answer(new SaltCommand.FileRequest(
                    "_serve_file",
                    Optional.of("web/big.bin"),
                    Optional.of("base"),
                    Optional.empty(),
                    Optional.of((long) got.size()),
                    Optional.empty(),
                    false));
            assertThat(chunk.get("dest")).isEqualTo("web/big.bin");
            byte[] data = chunk.get("data") instanceof byte[] b ? b : new byte[0];
            if (data.length == 0) {
                break;
            }
            assertThat(data.length).isLessThanOrEqualTo(CHUNK);
            got.write(data);
            chunks++;
        }
        assertThat(chunks).isEqualTo(3);
        assertThat(got.toByteArray()).isEqualTo(big);

        Files.writeString(srv.resolve("web/text"), "a".repeat(3000));
        Map<?, ?> gz = (Map<?, ?>) answer(new SaltCommand.FileRequest(
                "_serve_file",
                Optional.of("web/text"),
                Optional.of("base"),
                Optional.empty(),
                Optional.of(0L),
                Optional.of(5),
                false));
        assertThat(gz.get("gzip")).isEqualTo(5L);
        byte[] compressed = (byte[]) gz.get("data");
        assertThat(compressed.length).isLessThan(3000);
        assertThat(new GZIPInputStream(new ByteArrayInputStream(compressed)).readAllBytes())
                .isEqualTo("a".repeat(3000).getBytes(StandardCharsets.US_ASCII));
        assertThat(answer(request("_serve_file", "nothing", "base"))).isEqualTo(Map.of("data", "", "dest", ""));
    }

    @Test
    void everyPathOutsideARootIsAnsweredAsMissingAndTheRefusalLoggedOnceEscaped() {
        List<String> refused = List.of(
                "../../etc/shadow",
                "/etc/shadow",
                "web/../../outside/shadow",
                "web/../top.sls",
                "..",
                "C:\\Windows\\win.ini",
                "web\\..\\..\\x",
                "web/shadow",
                "etc/shadow",
                "../\nforged line");
        List<String> lines;
        try (LogCapture logs = LogCapture.of(SaltFileServer.class)) {
            for (String path : refused) {
                assertThat(answer(request("_file_hash", path, "base"))).as(path).isEqualTo("");
                assertThat(answer(request("_serve_file", path, "base")))
                        .as(path)
                        .isEqualTo(Map.of("data", "", "dest", ""));
                assertThat(answer(request("_file_find", path, "base")))
                        .as(path)
                        .isEqualTo(Map.of("path", "", "rel", ""));
            }
            lines = logs.at(Level.WARN);
        }
        assertThat(lines)
                .anySatisfy(l -> assertThat(l)
                        .contains("salt1")
                        .contains("a path with ..")
                        .contains("../../etc/shadow"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("an absolute path"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("a symlink that leaves the root"));
        assertThat(lines).noneMatch(l -> l.contains("\n"));
        // Throttled: one line per reason a minute, whatever the number of requests.
        assertThat(lines.stream().filter(l -> l.contains("a path with ..")).count())
                .isEqualTo(1);
    }

    @Test
    void hiddenAndIgnoredFilesAreNotServedEvenByName() {
        for (String path : List.of(".git/config", "web/.secret", "web/notes.bak", "web/draft.swp")) {
            assertThat(answer(request("_file_hash", path, "base"))).as(path).isEqualTo("");
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void aLinkInsideTheRootToAHiddenOrIgnoredFileServesAndListsNothingAndTheRefusalIsLogged() throws Exception {
        // A states repository's contributor commits links to what is never served: .git, an ignored file.
        Files.createSymbolicLink(srv.resolve("web/config"), Path.of("../.git/config"));
        Files.createSymbolicLink(srv.resolve("gitdir"), Path.of(".git"));
        Files.createSymbolicLink(srv.resolve("web/notes"), Path.of("notes.bak"));
        List<String> lines;
        try (LogCapture logs = LogCapture.of(SaltFileServer.class)) {
            for (String path : List.of("web/config", "gitdir/config", "web/notes")) {
                assertThat(answer(request("_file_hash", path, "base"))).as(path).isEqualTo("");
                assertThat(answer(request("_serve_file", path, "base")))
                        .as(path)
                        .isEqualTo(Map.of("data", "", "dest", ""));
            }
            lines = logs.at(Level.WARN);
        }
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("a symlink to a hidden or ignored file"));
        assertThat((List<Object>) answer(request("_file_list", null, "base")))
                .isEqualTo(List.of("top.sls", "web/init.sls", "web/motd", "web/motd-link"));
        assertThat((List<Object>) answer(request("_dir_list", null, "base")))
                .isEqualTo(List.of("empty", "web", "web/files"));
        assertThat(answer(request("_symlink_list", null, "base"))).isEqualTo(Map.of("web/motd-link", "motd"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void linksThatStayInsideTheRootAreFollowedAndALoopEnds() throws Exception {
        Files.createSymbolicLink(srv.resolve("site"), Path.of("web")); // a directory
        Files.createSymbolicLink(srv.resolve("web/files/motd"), Path.of("../motd")); // up, and back down
        Files.createSymbolicLink(srv.resolve("abs"), srv.resolve("web/motd")); // absolute, inside the root
        Files.createSymbolicLink(srv.resolve("web/files/loop"), Path.of("../..")); // the root again
        Object hash = answer(request("_file_hash", "web/motd", "base"));
        for (String path : List.of("site/motd", "web/files/motd", "abs", "site/files/motd", "site/motd-link")) {
            assertThat(answer(request("_file_hash", path, "base"))).as(path).isEqualTo(hash);
        }
        assertThat(answer(request("_file_hash", "web/files/loop/top.sls", "base")))
                .isInstanceOf(Map.class);
        assertThat((List<Object>) answer(request("_file_list", null, "base")))
                .containsExactly(
                        "abs",
                        "site/files/motd",
                        "site/init.sls",
                        "site/motd",
                        "site/motd-link",
                        "top.sls",
                        "web/files/motd",
                        "web/init.sls",
                        "web/motd",
                        "web/motd-link");
        assertThat((List<Object>) answer(request("_dir_list", null, "base")))
                .containsExactly("empty", "site", "site/files", "web", "web/files");
        assertThat(answer(request("_symlink_list", null, "base")))
                .isEqualTo(Map.of(
                        "abs", srv.resolve("web/motd").toString(),
                        "site", "web",
                        "site/files/motd", "../motd",
                        "site/motd-link", "motd",
                        "web/files/motd", "../motd",
                        "web/motd-link", "motd"));
    }

    @Test
    void aDirectoryOrFileSwappedForALinkOutAfterTheCheckIsNeverReadThrough() throws Exception {
        Files.writeString(outside.resolve("motd"), "root:secret\n");
        FileRoots.Found found = (FileRoots.Found) roots.find("base", "web/motd");
        // Whoever can write the roots (a deploy job, a checkout) swaps the checked directory for a link out.
        swapForLink(srv.resolve("web"), outside);
        assertThatThrownBy(() -> roots.read(found, 0, CHUNK)).isInstanceOf(IOException.class);
        assertThat(roots.hash(found)).isEmpty();

        putBack(srv.resolve("web"));
        FileRoots.Found again = (FileRoots.Found) roots.find("base", "web/motd");
        swapForLink(srv.resolve("web/motd"), outside.resolve("motd"));
        assertThatThrownBy(() -> roots.read(again, 0, CHUNK)).isInstanceOf(IOException.class);
        assertThat(roots.hash(again)).isEmpty();
    }

    @Test
    void aDirectorySwappedForALinkOutWhileARequestIsAnsweredServesNothingFromOutside() throws Exception {
        Files.writeString(outside.resolve("motd"), "root:secret\n");
        // The first opening of web is the check (the path resolved), the second the read.
        for (int nth : new int[] {1, 2}) {
            for (String cmd : List.of("_serve_file", "_file_hash")) {
                roots.onOpening(swapOn("web", nth));
                Object answer = answer(request(cmd, "web/motd", "base"));
                assertThat(Files.isSymbolicLink(srv.resolve("web")))
                        .as("swapped")
                        .isTrue();
                assertThat(answer)
                        .as(cmd + ", swapped at opening " + nth)
                        .isEqualTo(cmd.equals("_file_hash") ? "" : Map.of("data", "", "dest", ""));
                roots.onOpening(path -> {});
                putBack(srv.resolve("web"));
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void aDirectorySwappedForALinkOutWhileTheListingIsWalkedIsNotListedThrough() throws Exception {
        Files.writeString(outside.resolve("motd"), "root:secret\n");
        roots.onOpening(swapOn("web", 1)); // checked as a directory, then swapped as the walk goes down into it
        assertThat((List<Object>) answer(request("_file_list", null, "base"))).containsExactly("top.sls");
        assertThat(Files.isSymbolicLink(srv.resolve("web"))).as("swapped").isTrue();
        assertThat((List<Object>) answer(request("_dir_list", null, "base"))).containsExactly("empty");
        assertThat(answer(request("_symlink_list", null, "base"))).isEqualTo(Map.of());
    }

    /** A hook that swaps the directory {@code rel} of the root for a link to {@link #outside} at its nth opening. */
    private Consumer<String> swapOn(String rel, int nth) {
        AtomicInteger openings = new AtomicInteger();
        return path -> {
            if (path.equals(rel) && openings.incrementAndGet() == nth) {
                try {
                    swapForLink(srv.resolve(rel), outside);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }

    /** {@code path} moved out of the roots and a link to {@code target} in its place. */
    private void swapForLink(Path path, Path target) throws IOException {
        Files.move(path, dir.resolve("moved"));
        Files.createSymbolicLink(path, target);
    }

    private void putBack(Path path) throws IOException {
        Files.delete(path);
        Files.move(dir.resolve("moved"), path);
    }

    @Test
    void aTreeIsHashedOnceForAFleetAndAgainOnlyWhenAFileChanges() throws Exception {
        for (int i = 0; i < 200; i++) {
            answer(request("_file_hash", "web/motd", "base"));
        }
        assertThat(roots.hashesComputed()).isEqualTo(1);
        Files.writeString(srv.resolve("web/motd"), "changed, longer\n");
        assertThat(answer(request("_file_hash", "web/motd", "base")))
                .isEqualTo(Map.of("hsum", sha256("changed, longer\n"), "hash_type", "sha256"));
        assertThat(roots.hashesComputed()).isEqualTo(2);
    }

    @Test
    @SuppressWarnings("unchecked")
    void theListingIsReusedForFileserverListCacheTimeThenWalkedAgain() throws Exception {
        assertThat((List<Object>) answer(request("_file_list", null, "base"))).doesNotContain("web/new.sls");
        Files.writeString(srv.resolve("web/new.sls"), "x");
        assertThat((List<Object>) answer(request("_file_list", null, "base"))).doesNotContain("web/new.sls");
        // A file is found by name at once, listed or not.
        assertThat(answer(request("_file_hash", "web/new.sls", "base"))).isInstanceOf(Map.class);
        clock.advance(Duration.ofSeconds(20));
        assertThat((List<Object>) answer(request("_file_list", null, "base"))).contains("web/new.sls");
    }

    @Test
    @SuppressWarnings("unchecked")
    void aListingAnswerIsBuiltOncePerListingNotOncePerRequest() throws Exception {
        List<String> commands = List.of("_file_list", "_file_list_emptydirs", "_dir_list", "_symlink_list");
        Set<SaltValue> built = Collections.newSetFromMap(new IdentityHashMap<>());
        for (int i = 0; i < 50; i++) {
            for (String cmd : commands) {
                server.serve("salt" + i, "10.0.0.7", request(cmd, null, "base"), built::add);
            }
        }
        assertThat(built).hasSize(commands.size());
        // Another prefix is its own answer.
        assertThat(answer(new SaltCommand.FileRequest(
                        "_file_list",
                        Optional.empty(),
                        Optional.of("base"),
                        Optional.of("web"),
                        Optional.empty(),
                        Optional.empty(),
                        false)))
                .isEqualTo(List.of("web/init.sls", "web/motd", "web/motd-link"));

        // Once the listing is walked again (fileserver_list_cache_time), the answers are built from it, once.
        Files.writeString(srv.resolve("web/new.sls"), "x");
        clock.advance(Duration.ofSeconds(20));
        built.clear();
        List<SaltValue> answers = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            server.serve("salt" + i, "10.0.0.7", request("_file_list", null, "base"), answers::add);
        }
        built.addAll(answers);
        assertThat(built).hasSize(1);
        assertThat((List<Object>) SaltValues.toPlain(answers.get(49))).contains("web/new.sls");
    }

    @Test
    void aListingPastItsBoundKeepsTheBoundAndSaysSo() throws Exception {
        roots = new FileRoots(
                new FileRoots.Options(
                        Map.of("base", List.of(srv)), List.of(), List.of(), "sha256", Duration.ofSeconds(20), 3),
                clock);
        List<String> lines;
        try (LogCapture logs = LogCapture.of(FileRoots.class)) {
            FileRoots.Listing listing = roots.listing("base");
            assertThat(listing.files().size() + listing.dirs().size()).isEqualTo(3);
            lines = logs.at(Level.WARN);
        }
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("more than 3"));
    }

    @Test
    void aTreeDeeperThanTheListingWalksIsLeftOutBelowTheBoundAndSaidSoNotAStackOverflow() throws Exception {
        // 400 levels (a checkout can hold 2,000): the walk recursed a level at a time, and a lane's stack overflowed
        // (at 2,000 on a 1 MiB stack; here a 256 KiB one, the listing in a thread of that stack).
        Path deep = Files.createDirectories(srv.resolve("deep/" + "d/".repeat(400)));
        Files.writeString(deep.resolve("bottom.sls"), "x");
        Files.writeString(srv.resolve("deep/" + "d/".repeat(10) + "shallow.sls"), "x");
        AtomicReference<Object> walked = new AtomicReference<>();
        List<String> lines;
        try (LogCapture logs = LogCapture.of(FileRoots.class)) {
            Thread lane = new Thread(
                    null,
                    () -> {
                        try {
                            walked.set(roots.listing("base"));
                        } catch (Throwable t) {
                            walked.set(t);
                        }
                    },
                    "small-stack",
                    256 * 1024);
            lane.start();
            // On main the overflow struck inside a directory stream's lock, which its close then waited for forever.
            await().until(() -> walked.get() != null);
            lines = logs.at(Level.WARN);
        }

        assertThat(walked.get()).isInstanceOf(FileRoots.Listing.class);
        FileRoots.Listing listing = (FileRoots.Listing) walked.get();
        assertThat(listing.files()).contains("top.sls", "deep/" + "d/".repeat(10) + "shallow.sls");
        assertThat(listing.files()).noneMatch(f -> f.endsWith("bottom.sls"));
        assertThat(listing.dirs()).allMatch(d -> d.split("/").length <= FileRoots.MAX_DEPTH);
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("more than " + FileRoots.MAX_DEPTH + " deep"));
        // Still served by name: finding a file walks no deeper than its path.
        assertThat(roots.find("base", "deep/" + "d/".repeat(400) + "bottom.sls"))
                .isInstanceOf(FileRoots.Found.class);
    }

    @Test
    void aMinionOverItsBurstGetsNoAnswerAndTheDropIsLogged() {
        server = server(CHUNK, 1, 5, 1L << 26);
        List<String> lines;
        try (LogCapture logs = LogCapture.of(SaltFileServer.class)) {
            for (int i = 0; i < 5; i++) {
                assertThat(answers(request("_file_envs", null, null))).hasSize(1);
            }
            assertThat(answers(request("_file_envs", null, null))).isEmpty();
            lines = logs.at(Level.WARN);
        }
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("fileserver_requests_per_second"));
        List<Object> other = new ArrayList<>();
        server.serve("salt2", "10.0.0.8", request("_file_envs", null, null), v -> other.add(v));
        assertThat(other).hasSize(1); // the rate is each minion's own
    }

    @Test
    void aListingPastTheBytesInFlightGetsNoAnswerUntilTheOneBeforeIsSent() throws Exception {
        // _file_list is then about 7 KiB encoded (300 entries of 23 bytes): more than half of 2 chunks' bound.
        for (int i = 0; i < 300; i++) {
            Files.writeString(srv.resolve("web/files/file-%03d.sls".formatted(i)), "x");
        }
        SaltCommand.FileRequest list = request("_file_list", null, "base");
        long size = SaltMsgpack.write(SaltValues.fromPlain(answer(list)), SaltDialect.PAYLOAD).length;
        assertThat(size).isBetween(CHUNK + 1L, 2L * CHUNK);
        server = server(CHUNK, 1_000, 10_000, 2L * CHUNK);
        Files.write(srv.resolve("web/big.bin"), new byte[CHUNK]);
        SaltCommand.FileRequest chunk = firstChunk("web/big.bin");
        List<String> lines;
        try (LogCapture logs = LogCapture.of(SaltFileServer.class)) {
            // While a listing, or a chunk, is being sent, a listing would be one past the bound.
            for (SaltCommand.FileRequest first : List.of(list, chunk)) {
                List<SaltValue> nested = new ArrayList<>();
                List<SaltValue> outer = new ArrayList<>();
                server.serve("salt1", "10.0.0.7", first, value -> {
                    outer.add(value);
                    assertThat(server.bytesInFlight()).isPositive();
                    server.serve("salt2", "10.0.0.8", list, nested::add);
                });
                assertThat(outer).hasSize(1);
                assertThat(nested)
                        .as("a listing asked while %s is sent", first.cmd())
                        .isEmpty();
                assertThat(server.bytesInFlight()).isZero();
            }
            lines = logs.at(Level.WARN);
        }
        assertThat(lines)
                .anySatisfy(l -> assertThat(l)
                        .contains("salt2")
                        .contains("file server listing over fileserver_max_mib_in_flight; not answered"));
        assertThat(answers(list)).hasSize(1);

        // A listing larger than the whole bound is answered alone, and nothing beside it, not even _file_envs.
        server = server(CHUNK, 1_000, 10_000, CHUNK);
        List<SaltValue> nested = new ArrayList<>();
        List<SaltValue> outer = new ArrayList<>();
        server.serve("salt1", "10.0.0.7", list, value -> {
            outer.add(value);
            server.serve("salt2", "10.0.0.8", request("_file_envs", null, null), nested::add);
        });
        assertThat(outer).hasSize(1);
        assertThat(nested).isEmpty();
        assertThat(answers(request("_file_envs", null, null))).hasSize(1);
    }

    @Test
    void aChunkPastTheBytesInFlightGetsNoAnswerUntilTheOneBeforeIsSent() throws Exception {
        server = server(CHUNK, 1_000, 10_000, CHUNK);
        Files.write(srv.resolve("web/big.bin"), new byte[CHUNK * 2]);
        SaltCommand.FileRequest first = firstChunk("web/big.bin");
        List<SaltValue> nested = new ArrayList<>();
        List<SaltValue> outer = new ArrayList<>();
        server.serve("salt1", "10.0.0.7", first, value -> {
            outer.add(value);
            // While this chunk is being sent, a second one would be one past the bound.
            server.serve("salt2", "10.0.0.8", first, nested::add);
        });
        assertThat(outer).hasSize(1);
        assertThat(nested).isEmpty();
        assertThat(server.bytesInFlight()).isZero();
        assertThat(answers(first)).hasSize(1);
    }

    /** {@code _serve_file} of {@code path}'s first chunk in base, not gzipped. */
    private static SaltCommand.FileRequest firstChunk(String path) {
        return new SaltCommand.FileRequest(
                "_serve_file",
                Optional.of(path),
                Optional.of("base"),
                Optional.empty(),
                Optional.of(0L),
                Optional.empty(),
                false);
    }
}
