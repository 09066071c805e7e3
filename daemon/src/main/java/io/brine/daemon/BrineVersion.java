package io.brine.daemon;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;

/** brine's version, from the build; also the {@code --version} of every brine command. */
public final class BrineVersion implements CommandLine.IVersionProvider {

    public static String get() {
        Properties properties = new Properties();
        try (InputStream in = BrineVersion.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            return "unknown";
        }
        return properties.getProperty("version", "unknown");
    }

    @Override
    public String[] getVersion() {
        return new String[] {"brine " + get()};
    }
}
