package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.client.BrineClient;
import io.brine.client.channel.TcpClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.master.HostilePeersTest.MinionEnd;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.message.Message;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.SessionMessage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README's "The Java API" example, as a publisher embeds it: the code block is compiled against the client's API
 * alone (the client, daemon and protocol jars: none of the master's classes) and run against a wired master with
 * one accepted minion, whose return it prints and whose job it reads back from the job cache.
 */
class JavaApiExampleTest {

    private static final Path README = Path.of("../README.md");
    private static final Pattern EXAMPLE = Pattern.compile("### The Java API\\n.*?```java\\n(.*?)```", Pattern.DOTALL);

    @TempDir
    Path dir;

    @Test
    void readmesExampleCompilesAgainstTheClientAloneAndPublishesThroughALocalMaster() throws Exception {
        Path classes = compileExample();
        try (WiredMaster master = WiredMaster.start(
                        dir.resolve("master"),
                        config -> config.acceptance(MasterConfig.Acceptance.builder()
                                .autoAccept(true)
                                .build()));
                TcpClientChannel channel = master.connect()) {
            MinionEnd web1 = HostilePeersTest.accepted(channel, "web1");
            // The admin's master.yaml, as `brine -c DIR` and the example read it.
            Path etc = Files.createDirectories(dir.resolve("etc"));
            Files.writeString(
                    etc.resolve("master.yaml"),
                    "interface: 127.0.0.1\ntransport: tcp\ntcp_port: "
                            + master.port() + "\npki_dir: " + master.config().pkiDir() + "\ncachedir: "
                            + master.config().cachedir() + "\n");
            // The minion answers the publication it gets.
            CompletableFuture<Void> answered = CompletableFuture.runAsync(() -> {
                try {
                    String jid = null;
                    while (jid == null) {
                        byte[] frame = channel.receive(HostilePeersTest.ANSWER);
                        Message message = ((Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_FRAME)).message();
                        jid = message instanceof Publish publish ? publish.jid() : null;
                    }
                    web1.send(new SessionMessage.Return(jid, "test.ping", true, 0, true, 1));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });

            ByteArrayOutputStream printed = new ByteArrayOutputStream();
            PrintStream stdout = System.out;
            Map<?, ?> job;
            try (URLClassLoader loader = new URLClassLoader(
                    new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
                Method main = loader.loadClass("PingWeb").getMethod("pingWeb", Path.class);
                System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
                try {
                    job = (Map<?, ?>) main.invoke(null, etc);
                } finally {
                    System.setOut(stdout);
                }
            }
            answered.get();

            assertThat(printed.toString(StandardCharsets.UTF_8).lines()).contains("web1: true");
            assertThat(job.get("fun")).isEqualTo("test.ping");
            assertThat(job.get("minions")).isEqualTo(List.of("web1"));
            assertThat(job.get("publisher")).isEqualTo("root");
        }
    }

    /** README's example compiled with only the client's API on the class path; the classes' directory. */
    private Path compileExample() throws Exception {
        Matcher example = EXAMPLE.matcher(Files.readString(README));
        assertThat(example.find())
                .as("README.md has a java block under ### The Java API")
                .isTrue();
        Path source = Files.createDirectories(dir.resolve("src")).resolve("PingWeb.java");
        Files.writeString(source, example.group(1));
        Path out = Files.createDirectories(dir.resolve("classes"));
        List<String> classPath = new ArrayList<>();
        for (Class<?> api : List.of(BrineClient.class, MasterConfig.class, SessionMessage.class)) {
            classPath.add(Path.of(api.getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toString());
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int exit = javac.run(
                null, errors, errors, "-d", out.toString(), "-cp", String.join(":", classPath), source.toString());
        assertThat(exit)
                .as("javac: %s", errors.toString(StandardCharsets.UTF_8))
                .isZero();
        return out;
    }
}
