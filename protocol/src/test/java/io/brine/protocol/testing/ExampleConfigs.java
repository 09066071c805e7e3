package io.brine.protocol.testing;

import java.io.IOException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads the shipped example configs ({@code conf/*.yaml}) the way their tests need, so that the docs and the code
 * cannot drift apart. The examples follow Salt's convention: a documented default is a line {@code #key: value}
 * at the start of a line, prose is {@code # text}, and an example in prose is the block of {@code #   ...} lines
 * after a line ending in "For example:".
 */
public final class ExampleConfigs {

    private static final Pattern DOCUMENTED_DEFAULT = Pattern.compile("^#([a-z_]+:.*)$", Pattern.MULTILINE);

    private ExampleConfigs() {}

    /** The example file; Surefire runs in the module's directory, and the examples are at the checkout's root. */
    public static Path example(String fileName) {
        return Path.of("..", "conf", fileName);
    }

    /** The example with every documented default uncommented. */
    public static String withDefaultsUncommented(Path example) throws IOException {
        return DOCUMENTED_DEFAULT.matcher(Files.readString(example)).replaceAll("$1");
    }

    /** The prose examples, uncommented and put together as one document. */
    public static String proseExamples(Path example) throws IOException {
        StringBuilder yaml = new StringBuilder();
        boolean inExample = false;
        for (String line : Files.readAllLines(example)) {
            if (line.endsWith("For example:")) {
                inExample = true;
            } else if (inExample && line.startsWith("#   ")) {
                yaml.append(line.substring(4)).append('\n');
            } else {
                inExample = false;
            }
        }
        return yaml.toString();
    }

    /** Whether the example documents {@code key}: {@code #key:} for a top-level key, an indented line for a nested. */
    public static boolean documents(Path example, String key) throws IOException {
        String leaf = Pattern.quote(key.substring(key.lastIndexOf('.') + 1));
        Pattern line = Pattern.compile(key.contains(".") ? "(?m)^#[ -]+" + leaf + ":" : "(?m)^#" + leaf + ":");
        return line.matcher(Files.readString(example)).find();
    }

    /**
     * The config keys behind a config record: its components in snake case (or as {@code renamed}), with the group
     * records in {@code flattened} contributing their components as top-level keys, and other records (held
     * directly, in an Optional, a List or as a Map's values) contributing nested keys such as {@code tls.cert}.
     */
    public static List<String> keys(Class<?> record, Set<Class<?>> flattened, Map<String, String> renamed) {
        List<String> keys = new ArrayList<>();
        for (RecordComponent component : record.getRecordComponents()) {
            String key = renamed.getOrDefault(component.getName(), snakeCase(component.getName()));
            Class<?> nested = nestedRecord(component.getGenericType());
            if (nested != null && flattened.contains(nested)) {
                keys.addAll(keys(nested, flattened, renamed));
            } else {
                keys.add(key);
                if (nested != null) {
                    keys(nested, flattened, renamed).forEach(k -> keys.add(key + "." + k));
                }
            }
        }
        return keys;
    }

    private static Class<?> nestedRecord(Type type) {
        if (type instanceof Class<?> c) {
            return c.isRecord() ? c : null;
        }
        if (type instanceof ParameterizedType p) {
            Type[] args = p.getActualTypeArguments();
            return nestedRecord(args[args.length - 1]);
        }
        return null;
    }

    private static String snakeCase(String camel) {
        return camel.replaceAll("([A-Z])", "_$1").toLowerCase(Locale.ROOT);
    }
}
