package io.brine.minion.functions.builtin;

import io.brine.minion.functions.MinionFunction;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The functions every minion has (the registry adds {@code sys.list_functions} and {@code sys.doc}):
 * {@code test.*}, {@code grains.*} and {@code cmd.*}. Each call to {@link #create} makes fresh instances: there is
 * no shared state between minions in one JVM (tests run several).
 */
public final class BuiltinFunctions {

    /** cmd.* keeps at most this much of each output stream: a runaway command must not become a huge return. */
    public static final int DEFAULT_OUTPUT_CAP = 1 << 20;

    private BuiltinFunctions() {}

    /**
     * @param outputCapBytes how much of each output stream {@code cmd.*} keeps
     * @param defaultCwd     where commands run without {@code cwd=} (Salt: the user's home)
     * @param version        what {@code test.version} answers
     */
    public record Settings(int outputCapBytes, Path defaultCwd, String version) {
        public Settings {
            if (outputCapBytes <= 0) {
                throw new IllegalArgumentException("outputCapBytes must be positive");
            }
            Objects.requireNonNull(defaultCwd, "defaultCwd");
            Objects.requireNonNull(version, "version");
        }

        /** A 1 MiB output cap, the user's home, the version from brine's jar manifest. */
        public static Settings defaults() {
            return new Settings(DEFAULT_OUTPUT_CAP, Path.of(System.getProperty("user.home", "/")), brineVersion());
        }
    }

    public static List<MinionFunction> create(Settings settings) {
        List<MinionFunction> all = new ArrayList<>(TestFunctions.functions(settings.version()));
        all.addAll(GrainsFunctions.functions());
        all.addAll(new CmdFunctions(new CommandRunner(settings.outputCapBytes()), settings.defaultCwd()).functions());
        return List.copyOf(all);
    }

    /** {@code Implementation-Version} from the minion jar's manifest, or "dev" when running from classes. */
    public static String brineVersion() {
        String version = BuiltinFunctions.class.getPackage().getImplementationVersion();
        return version == null || version.isBlank() ? "dev" : version;
    }
}
