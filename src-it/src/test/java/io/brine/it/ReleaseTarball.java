package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The release tarball (dist/target/brine-VERSION.tar.gz) unpacked with tar into a temporary directory, as the
 * README's install section does: once per test JVM, for the test classes that run what an admin installs
 * (TarballIT checks its layout, DaemonLaunchersIT runs its launchers with its example configs), and removed when the
 * JVM exits. Tests only read it: each daemon's config, keys and logs are in the test's own directory.
 */
final class ReleaseTarball {

    static final Path TARBALL = Path.of(System.getProperty(
                    "brine.tarball",
                    "../dist/target/brine-" + System.getProperty("brine.version", "0.2.0") + ".tar.gz"))
            .toAbsolutePath();

    private static Path home;

    private ReleaseTarball() {}

    /** The unpacked tarball's top directory ({@code brine-VERSION}), unpacked at the first call. */
    static synchronized Path home() throws IOException, InterruptedException {
        if (home == null) {
            home = unpack();
        }
        return home;
    }

    private static Path unpack() throws IOException, InterruptedException {
        assertThat(TARBALL)
                .as("built by the dist module (./mvnw -pl dist -am package)")
                .exists();
        Path dir = Files.createTempDirectory("brine-tarball");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(dir), "delete-unpacked-tarball"));
        Path err = dir.resolve("tar.err");
        Path unpacked = Files.createDirectories(dir.resolve("opt"));
        Process tar = new ProcessBuilder("tar", "xzf", TARBALL.toString())
                .directory(unpacked.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(err.toFile())
                .start();
        assertThat(tar.waitFor(60, TimeUnit.SECONDS))
                .as("tar xzf %s finishes", TARBALL)
                .isTrue();
        assertThat(tar.exitValue())
                .as(Files.readString(err, StandardCharsets.UTF_8))
                .isZero();
        List<Path> top;
        try (Stream<Path> entries = Files.list(unpacked)) {
            top = entries.toList();
        }
        assertThat(top).as("one top directory").hasSize(1);
        return top.get(0);
    }

    private static void delete(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            // Left in the temp dir: nothing more can be done as the JVM exits.
        }
    }
}
