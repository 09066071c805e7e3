package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.benmanes.caffeine.cache.Ticker;
import io.brine.master.salt.FileRoots;
import io.brine.master.salt.SaltFileServer;
import io.brine.protocol.salt.Crypticle;
import io.brine.protocol.salt.SaltCommand;
import io.brine.protocol.salt.SaltDialect;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltMsgpack;
import io.brine.protocol.salt.SaltReplies;
import io.brine.protocol.salt.SaltRequest;
import io.brine.protocol.salt.SaltSessionRequest;
import io.brine.protocol.salt.SaltValue;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state scenario's run against the master's own file server: each request sealed as the simulated minion seals
 * it, opened and answered by {@link SaltFileServer}, the reply sealed and opened again, as on the wire.
 */
class StateRunTest {

    private static final int BUFFER = 4096;

    @TempDir
    Path srv;

    private final Crypticle session = Crypticle.generate();
    private SaltFileServer files;

    @BeforeEach
    void serve() throws Exception {
        StateRun.writeTree(srv);
        files = new SaltFileServer(
                new FileRoots(
                        new FileRoots.Options(
                                Map.of("base", List.of(srv)),
                                List.of(),
                                List.of(),
                                "sha256",
                                Duration.ofSeconds(20),
                                FileRoots.MAX_ENTRIES),
                        Clock.systemUTC()),
                new SaltFileServer.Limits(BUFFER, 10_000, 10_000, 1L << 26),
                Clock.systemUTC(),
                Ticker.disabledTicker());
    }

    @Test
    void theTreeHasAHundredFilesAndTheManagedOnesHaveTheirSizes() throws Exception {
        try (Stream<Path> walk = Files.walk(srv)) {
            assertThat(walk.filter(Files::isRegularFile).count()).isEqualTo(StateRun.TREE_FILES);
        }
        StateRun.MANAGED.forEach((path, size) -> assertThat(srv.resolve(path)).hasSize(size));
        assertThat(srv.resolve(StateRun.STATE)).content().contains("salt://bench/files/app.conf", "cmd.run");
    }

    @Test
    void aRunAsksForOptionsListAndEachFileByHashAndChunksUntilAnEmptyOneThenReturnsEachState() throws Exception {
        List<String> asked = new ArrayList<>();
        StateRun run = runAgainstServer(asked, UnaryOperator.identity());

        assertThat(run.failure()).isEmpty();
        assertThat(asked.subList(0, 5))
                .containsExactly(
                        "_master_opts",
                        "_file_list",
                        "_file_hash top.sls",
                        "_serve_file top.sls@0",
                        "_serve_file top.sls@" + Files.size(srv.resolve("top.sls")));
        // 12,288 bytes in chunks of 4,096: three chunks and the empty one that ends the file.
        assertThat(asked)
                .containsSubsequence(
                        "_file_hash bench/files/nginx.conf.jinja",
                        "_serve_file bench/files/nginx.conf.jinja@0",
                        "_serve_file bench/files/nginx.conf.jinja@4096",
                        "_serve_file bench/files/nginx.conf.jinja@8192",
                        "_serve_file bench/files/nginx.conf.jinja@12288");
        long served = Files.size(srv.resolve("top.sls"))
                + Files.size(srv.resolve(StateRun.STATE))
                + StateRun.MANAGED.values().stream()
                        .mapToLong(Integer::longValue)
                        .sum();
        assertThat(run.bytes()).isEqualTo(served);
        assertThat(run.requests()).isEqualTo(asked.size());
        assertThat(run.stateReturn()).isInstanceOfSatisfying(SaltValue.Map.class, states -> {
            assertThat(states.textKeys())
                    .hasSize(StateRun.MANAGED.size() + 1)
                    .contains(
                            "file_|-/etc/bench/app.conf_|-/etc/bench/app.conf_|-managed", "cmd_|-reload_|-true_|-run");
            assertThat(states.get("cmd_|-reload_|-true_|-run").get())
                    .isInstanceOfSatisfying(
                            SaltValue.Map.class,
                            r -> assertThat(r.get("result")).contains(SaltValue.bool(true)));
        });
    }

    @Test
    void aFileWhoseBytesAreNotTheHashTheMasterGaveFailsTheRun() throws Exception {
        StateRun run = runAgainstServer(
                new ArrayList<>(),
                reply -> reply instanceof SaltValue.Map chunk
                                && chunk.get("dest")
                                        .flatMap(SaltValue::text)
                                        .filter("bench/files/app.conf"::equals)
                                        .isPresent()
                                && chunk.get("data")
                                        .flatMap(SaltValue::bytes)
                                        .filter(d -> d.length > 0)
                                        .isPresent()
                        ? SaltValue.Map.builder()
                                .put(
                                        "data",
                                        flipped(chunk.get("data").get().bytes().get()))
                                .put("dest", "bench/files/app.conf")
                                .build()
                        : reply);

        assertThat(run.over()).isTrue();
        assertThat(run.failure()).hasValueSatisfying(why -> assertThat(why).contains("bench/files/app.conf", "sha256"));
        assertThat(run.stateReturn().toString()).contains("bench/files/app.conf");
    }

    @Test
    void aTreeWithoutAManagedFileFailsTheRunAtTheListBeforeAnyFetch() throws Exception {
        Files.delete(srv.resolve("bench/files/sshd_config"));
        List<String> asked = new ArrayList<>();
        StateRun run = runAgainstServer(asked, UnaryOperator.identity());

        assertThat(run.failure())
                .hasValueSatisfying(
                        why -> assertThat(why).contains("_file_list", "bench/files/sshd_config not listed"));
        assertThat(asked).containsExactly("_master_opts", "_file_list");
    }

    @Test
    void masterOptionsWithoutARendererOrAFileHashWithoutASumEndTheRun() {
        StateRun opts = new StateRun();
        opts.answered(SaltValue.Map.builder().build());
        assertThat(opts.failure()).hasValueSatisfying(why -> assertThat(why).contains("renderer"));
        assertThat(opts.request()).isEmpty();

        StateRun hash = new StateRun();
        hash.answered(SaltValue.Map.builder().put("renderer", "jinja|yaml").build());
        hash.answered(new SaltValue.Array(List.of(SaltValue.str("top.sls"), SaltValue.str(StateRun.STATE)).stream()
                .toList()));
        assertThat(hash.failure()).isPresent(); // the managed files are not listed
        StateRun missing = new StateRun();
        missing.answered(SaltValue.Map.builder().put("renderer", "jinja|yaml").build());
        missing.answered(listing());
        missing.answered(SaltValue.str("")); // Salt's answer for a file it does not have
        assertThat(missing.failure()).hasValueSatisfying(why -> assertThat(why).contains("no hash of top.sls"));
    }

    /** The same bytes with the first one changed. */
    private static byte[] flipped(byte[] data) {
        byte[] changed = data.clone();
        changed[0] ^= 1;
        return changed;
    }

    private static SaltValue listing() {
        List<SaltValue> names = new ArrayList<>(List.of(SaltValue.str("top.sls"), SaltValue.str(StateRun.STATE)));
        StateRun.MANAGED.keySet().forEach(path -> names.add(SaltValue.str(path)));
        return new SaltValue.Array(names);
    }

    /** Runs to the end: each request through the wire's sealing to the file server and back, {@code tamper} between. */
    private StateRun runAgainstServer(List<String> asked, UnaryOperator<SaltValue> tamper) throws Exception {
        StateRun run = new StateRun();
        for (Optional<SaltValue.Map> fields = run.request(); fields.isPresent(); fields = run.request()) {
            String nonce = String.format("%032x", asked.size());
            byte[] sealed = SaltSessionRequest.seal(session, fields.get(), "bench-00001", nonce, 0, new byte[] {1});
            SaltSessionRequest request = SaltSessionRequest.open(
                    new SaltRequest.Encrypted("bench-00001", sealed, 3, "OAEP-SHA1", "PKCS1v15-SHA1"),
                    session,
                    SaltLimits.SESSION_LOAD);
            SaltCommand.FileRequest file = (SaltCommand.FileRequest) request.command();
            asked.add(file.cmd()
                    + file.path().map(p -> " " + p).orElse("")
                    + file.loc().map(l -> "@" + l).orElse(""));
            List<SaltValue> replies = new ArrayList<>();
            files.serve("bench-00001", "127.0.0.1", file, replies::add);
            assertThat(replies).hasSize(1);
            byte[] wire = SaltMsgpack.write(
                    SaltReplies.sealed(session, nonce, tamper.apply(replies.get(0))), SaltDialect.PAYLOAD);
            run.answered(SaltReplies.openSealed(
                    SaltMsgpack.read(wire, SaltLimits.SESSION), session, nonce, SaltLimits.SESSION_LOAD));
            assertThat(asked).hasSizeLessThan(100);
        }
        assertThat(run.over()).isTrue();
        return run;
    }
}
