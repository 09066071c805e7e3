package io.brine.minion.functions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FunctionRegistryTest {

    private static final String SERVICE = "META-INF/services/" + MinionFunction.class.getName();

    /** Plugin classes compiled once for the whole class: javac is the slow part. */
    @TempDir
    static Path classes;

    @TempDir
    Path plugins;

    private static final List<MinionFunction> BUILT_INS = List.of(
            MinionFunction.of("test.ping", "", call -> true),
            MinionFunction.of("test.fail", "", call -> {
                throw new FunctionException("no such thing", 7);
            }),
            MinionFunction.of("test.boom", "", call -> {
                throw new IllegalStateException("boom");
            }),
            MinionFunction.of("test.weird", "", call -> new Object()),
            MinionFunction.of("cmd.run", "runs things", call -> "ran"));

    @BeforeAll
    static void compilePlugins() throws Exception {
        Path src = Files.createDirectories(classes.resolve("src/plug"));
        List<String> files = new ArrayList<>();
        for (String[] plugin : new String[][] {
            {"Hello", "hello.world", "return \"hello \" + call.args();"},
            {"Shadow", "cmd.run", "return \"plugin took over\";"},
            {"BadName", "Not A Name", "return null;"}
        }) {
            Path file = src.resolve(plugin[0] + ".java");
            Files.writeString(
                    file,
                    "package plug;\n"
                            + "public class " + plugin[0] + " implements io.brine.minion.functions.MinionFunction {\n"
                            + "  public String name() { return \"" + plugin[1] + "\"; }\n"
                            + "  public Object call(io.brine.minion.functions.FunctionCall call) { " + plugin[2]
                            + " }\n"
                            + "}\n");
            files.add(file.toString());
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        String api = Path.of(MinionFunction.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .toString();
        List<String> args = new ArrayList<>(List.of("-d", classes.resolve("out").toString(), "-cp", api));
        args.addAll(files);
        assertThat(javac.run(null, null, null, args.toArray(String[]::new)))
                .as("javac exit code")
                .isZero();
    }

    private Path pluginJar(String jarName, String... classNames) throws IOException {
        Path jar = plugins.resolve(jarName);
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            StringBuilder service = new StringBuilder("# plugin functions\n");
            for (String name : classNames) {
                out.putNextEntry(new JarEntry("plug/" + name + ".class"));
                out.write(Files.readAllBytes(classes.resolve("out/plug/" + name + ".class")));
                out.closeEntry();
                service.append("plug.").append(name).append('\n');
            }
            out.putNextEntry(new JarEntry(SERVICE));
            out.write(service.toString().getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
        }
        return jar;
    }

    @Test
    void runsAFunctionAndReportsSuccess() {
        FunctionRegistry registry = new FunctionRegistry(BUILT_INS, FunctionAccess.allowAll());
        assertThat(registry.call("test.ping", FunctionCall.of(List.of(), Map.of())))
                .isEqualTo(new FunctionResult(true, 0));
    }

    @Test
    void anUnknownFunctionIsNotAvailableWithRetcode254() {
        FunctionRegistry registry = new FunctionRegistry(BUILT_INS, FunctionAccess.allowAll());
        FunctionResult result = registry.call("nope.nothing", FunctionCall.of(List.of(), Map.of()));
        assertThat(result.retcode()).isEqualTo(FunctionResult.UNKNOWN);
        assertThat(result.success()).isFalse();
        assertThat(result.value()).isEqualTo("'nope.nothing' is not available on this minion");
        assertThat(registry.lookup("nope.nothing")).isInstanceOf(FunctionRegistry.Lookup.Unknown.class);
    }

    @Test
    void denyWinsOverAllowAndAnEmptyAllowListAllowsEverything() {
        FunctionRegistry registry =
                new FunctionRegistry(BUILT_INS, FunctionAccess.of(List.of("test.*", "cmd.*"), List.of("cmd.*")));
        FunctionResult denied = registry.call("cmd.run", FunctionCall.of(List.of("ls"), Map.of()));
        assertThat(denied.retcode()).isEqualTo(FunctionResult.DENIED);
        assertThat((String) denied.value()).contains("denied");
        assertThat(registry.lookup("sys.doc"))
                .as("not in the allow list")
                .isInstanceOf(FunctionRegistry.Lookup.Denied.class);
        assertThat(registry.names()).containsExactly("test.boom", "test.fail", "test.ping", "test.weird");

        FunctionRegistry open = new FunctionRegistry(BUILT_INS, FunctionAccess.of(List.of(), List.of("test.b*")));
        assertThat(open.names())
                .containsExactly("cmd.run", "sys.doc", "sys.list_functions", "test.fail", "test.ping", "test.weird");
    }

    @Test
    void badGlobsInTheAccessListsAreReportedTogether() {
        assertThatThrownBy(() -> FunctionAccess.of(List.of(""), List.of(" ")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("functions.allow: empty glob; functions.deny: empty glob");
    }

    @Test
    void aFunctionExceptionBecomesItsMessageAndRetcode() {
        FunctionRegistry registry = new FunctionRegistry(BUILT_INS, FunctionAccess.allowAll());
        assertThat(registry.call("test.fail", FunctionCall.of(List.of(), Map.of())))
                .isEqualTo(new FunctionResult("no such thing", 7));
    }

    @Test
    void anyOtherExceptionIsRetcode1WithTheMessageAndNoStackTrace() {
        FunctionRegistry registry = new FunctionRegistry(BUILT_INS, FunctionAccess.allowAll());
        FunctionResult result = registry.call("test.boom", FunctionCall.of(List.of(), Map.of()));
        assertThat(result).isEqualTo(new FunctionResult("IllegalStateException: boom", 1));
    }

    @Test
    void aReturnValueThatCannotBeSentIsAFailureNotAnEncoderCrashLater() {
        FunctionRegistry registry = new FunctionRegistry(BUILT_INS, FunctionAccess.allowAll());
        FunctionResult result = registry.call("test.weird", FunctionCall.of(List.of(), Map.of()));
        assertThat(result.retcode()).isEqualTo(1);
        assertThat((String) result.value()).contains("test.weird returned a value that cannot be sent");
    }

    @Test
    void sysListFunctionsAndSysDocShowOnlyAllowedFunctionsMatchingTheGlobs() {
        FunctionRegistry registry = new FunctionRegistry(BUILT_INS, FunctionAccess.of(List.of(), List.of("test.w*")));
        assertThat(registry.call("sys.list_functions", FunctionCall.of(List.of("test.*"), Map.of()))
                        .value())
                .isEqualTo(List.of("test.boom", "test.fail", "test.ping"));
        assertThat(registry.call("sys.doc", FunctionCall.of(List.of("cmd.*"), Map.of()))
                        .value())
                .isEqualTo(Map.of("cmd.run", "runs things"));
    }

    @Test
    void builtInsMustHaveValidUniqueNames() {
        assertThatThrownBy(() -> new FunctionRegistry(
                        List.of(MinionFunction.of("ping", "", c -> true)), FunctionAccess.allowAll()))
                .hasMessageContaining("invalid name");
        assertThatThrownBy(() -> new FunctionRegistry(
                        List.of(MinionFunction.of("sys.doc", "", c -> true)), FunctionAccess.allowAll()))
                .hasMessageContaining("two built-in functions named sys.doc");
    }

    @Test
    void aPluginJarIsLoadedAndCallable() throws Exception {
        pluginJar("hello.jar", "Hello");
        try (FunctionRegistry registry = FunctionRegistry.load(BUILT_INS, plugins, FunctionAccess.allowAll())) {
            assertThat(registry.names()).contains("hello.world");
            assertThat(registry.call("hello.world", FunctionCall.of(List.of("a", 1L), Map.of())))
                    .isEqualTo(new FunctionResult("hello [a, 1]", 0));
        }
    }

    @Test
    void corruptWorldWritableAndBadlyNamedJarsAreSkippedAndTheRestLoads() throws Exception {
        Files.write(plugins.resolve("corrupt.jar"), new byte[] {'P', 'K', 3, 4, 1, 2, 3, 42});
        Path open = pluginJar("open.jar", "Hello");
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-rw-rw-"));
        pluginJar("badname.jar", "BadName");
        pluginJar("z-good.jar", "Hello");
        try (OutputStream out = Files.newOutputStream(plugins.resolve("notes.txt"))) {
            out.write("not a jar".getBytes(StandardCharsets.UTF_8));
        }
        try (FunctionRegistry registry = FunctionRegistry.load(BUILT_INS, plugins, FunctionAccess.allowAll())) {
            assertThat(registry.call("hello.world", FunctionCall.of(List.of(), Map.of()))
                            .value())
                    .isEqualTo("hello []");
            assertThat(registry.names()).doesNotContain("Not A Name");
        }
    }

    @Test
    void aBuiltInWinsANameClashWithAPlugin() throws Exception {
        pluginJar("shadow.jar", "Shadow", "Hello");
        try (FunctionRegistry registry = FunctionRegistry.load(BUILT_INS, plugins, FunctionAccess.allowAll())) {
            assertThat(registry.call("cmd.run", FunctionCall.of(List.of("x"), Map.of()))
                            .value())
                    .isEqualTo("ran");
            assertThat(registry.names()).contains("hello.world");
        }
    }

    @Test
    void aMissingPluginsDirectoryMeansNoPlugins() {
        try (FunctionRegistry registry =
                FunctionRegistry.load(BUILT_INS, plugins.resolve("absent"), FunctionAccess.allowAll())) {
            assertThat(registry.names()).hasSize(BUILT_INS.size() + 2);
        }
    }
}
