package io.brine.daemon;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;

/**
 * brine's version and the commit it was built from, from the build ({@code version.properties}, filled by Maven and
 * the git-commit-id plugin); also the {@code --version} of every brine command and the labels of
 * {@code brine_build_info}.
 */
public final class BrineVersion implements CommandLine.IVersionProvider {

    private static final Properties BUILD = load();

    private static Properties load() {
        Properties properties = new Properties();
        try (InputStream in = BrineVersion.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            // unknown, below
        }
        return properties;
    }

    private static String property(String name) {
        String value = BUILD.getProperty(name, "");
        return value.isBlank() || value.startsWith("${") ? "unknown" : value; // ${...}: built outside a checkout
    }

    /** The version, such as {@code 0.2.0}. */
    public static String get() {
        return property("version");
    }

    /** The abbreviated commit the build was made from, with {@code -modified} for uncommitted changes. */
    public static String commit() {
        String commit = property("commit");
        return commit.equals("unknown") || !"true".equals(BUILD.getProperty("dirty")) ? commit : commit + "-modified";
    }

    @Override
    public String[] getVersion() {
        return new String[] {"brine " + get() + " (commit " + commit() + ")"};
    }
}
