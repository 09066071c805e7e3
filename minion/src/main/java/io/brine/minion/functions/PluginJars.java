package io.brine.minion.functions;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.jar.JarFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Function plugins: each {@code *.jar} in {@code plugins_dir} gets its own {@link URLClassLoader} (parent: the
 * minion's loader, so plugins share brine's API and cannot replace its classes) and contributes the
 * {@link MinionFunction} providers it declares itself. A jar that is corrupt, world-writable (anyone on the host
 * could put code into a root daemon), or has a provider that fails to load is skipped whole, with a warning: one
 * bad plugin must not keep the minion from starting.
 */
final class PluginJars implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PluginJars.class);

    private final List<MinionFunction> functions;
    private final List<URLClassLoader> loaders;

    private PluginJars(List<MinionFunction> functions, List<URLClassLoader> loaders) {
        this.functions = List.copyOf(functions);
        this.loaders = List.copyOf(loaders);
    }

    static PluginJars none() {
        return new PluginJars(List.of(), List.of());
    }

    static PluginJars load(Path dir, ClassLoader parent) {
        if (!Files.isDirectory(dir)) {
            log.info("Plugins: {} is not a directory; no plugin functions loaded", dir);
            return none();
        }
        List<Path> jars = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir, "*.jar")) {
            stream.forEach(jars::add);
        } catch (IOException e) {
            log.warn("Plugins: cannot list {}: {}; no plugin functions loaded", dir, e.toString());
            return none();
        }
        jars.sort(null); // a stable order decides between two plugins that define the same name
        List<MinionFunction> functions = new ArrayList<>();
        List<URLClassLoader> loaders = new ArrayList<>();
        for (Path jar : jars) {
            URLClassLoader loader = loadJar(jar, parent, functions);
            if (loader != null) {
                loaders.add(loader);
            }
        }
        return new PluginJars(functions, loaders);
    }

    /** Adds the jar's functions to {@code into}; returns its loader, or null when the jar was skipped. */
    private static URLClassLoader loadJar(Path jar, ClassLoader parent, List<MinionFunction> into) {
        String problem = checkFile(jar);
        if (problem != null) {
            log.warn("Plugin {}: skipped: {}", jar, problem);
            return null;
        }
        URLClassLoader loader;
        try {
            loader = new URLClassLoader(
                    "brine-plugin-" + jar.getFileName(), new URL[] {jar.toUri().toURL()}, parent);
        } catch (IOException e) {
            log.warn("Plugin {}: skipped: {}", jar, e.toString());
            return null;
        }
        List<MinionFunction> found = new ArrayList<>();
        try {
            for (ServiceLoader.Provider<MinionFunction> provider : (Iterable<ServiceLoader.Provider<MinionFunction>>)
                    ServiceLoader.load(MinionFunction.class, loader).stream()::iterator) {
                // The service file of the minion's own class path is visible through the parent: skip those.
                if (provider.type().getClassLoader() != loader) {
                    continue;
                }
                MinionFunction function = provider.get();
                String name = function.name();
                if (!FunctionRegistry.isValidName(name)) {
                    throw new IllegalStateException(provider.type().getName() + " has an invalid name "
                            + FunctionRegistry.printable(name) + " (want module.fun in [a-z0-9_])");
                }
                found.add(function);
            }
        } catch (ServiceConfigurationError | RuntimeException | LinkageError e) {
            log.warn("Plugin {}: skipped: {}", jar, e.toString());
            log.debug("Plugin {}: load failure", jar, e);
            closeQuietly(loader);
            return null;
        }
        if (found.isEmpty()) {
            log.info("Plugin {}: declares no {} in META-INF/services; ignored", jar, MinionFunction.class.getName());
            closeQuietly(loader);
            return null;
        }
        log.info(
                "Plugin {}: loaded {}",
                jar,
                found.stream().map(MinionFunction::name).toList());
        into.addAll(found);
        return loader;
    }

    /** Why the file must not be loaded, or null. */
    private static String checkFile(Path jar) {
        if (!Files.isRegularFile(jar)) {
            return "not a regular file";
        }
        try {
            if (Files.getPosixFilePermissions(jar).contains(PosixFilePermission.OTHERS_WRITE)) {
                return "world-writable; anyone on this host could change the code the minion runs";
            }
        } catch (UnsupportedOperationException e) {
            // Not a POSIX file system: nothing to check.
        } catch (IOException e) {
            return e.toString();
        }
        // Opening it reads the central directory, so a truncated or corrupt jar is refused here, with a reason,
        // rather than silently contributing nothing.
        try (JarFile file = new JarFile(jar.toFile())) {
            file.size();
            return null;
        } catch (IOException e) {
            return "not a readable jar: " + e.getMessage();
        }
    }

    List<MinionFunction> functions() {
        return functions;
    }

    @Override
    public void close() {
        loaders.forEach(PluginJars::closeQuietly);
    }

    private static void closeQuietly(URLClassLoader loader) {
        try {
            loader.close();
        } catch (IOException e) {
            log.debug("Plugins: closing {} failed: {}", loader.getName(), e.toString());
        }
    }
}
