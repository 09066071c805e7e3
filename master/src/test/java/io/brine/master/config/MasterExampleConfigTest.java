package io.brine.master.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The shipped {@code conf/master.yaml} and the code cannot drift apart: these tests tie them together. */
class MasterExampleConfigTest {

    /** Surefire runs in the module's directory; the examples are at the root of the checkout. */
    private static final Path EXAMPLE = Path.of("..", "conf", "master.yaml");

    /** A documented default is a line {@code #key: value}; prose is {@code # text}. */
    private static final Pattern DOCUMENTED_DEFAULT = Pattern.compile("^#([a-z_]+:.*)$", Pattern.MULTILINE);

    /** Record components whose key is not their name in snake case. */
    private static final Map<String, String> KEY_NAMES = Map.of("interfaceAddress", "interface",
            "keepJobs", "keep_jobs_seconds");

    @Test
    void shippedExampleLoadsWithoutProblems() throws Exception {
        assertThat(MasterConfig.loadFile(EXAMPLE)).isEqualTo(MasterConfig.builder().build());
    }

    @Test
    void everyDocumentedDefaultIsTheRealDefault(@TempDir Path dir) throws Exception {
        String uncommented = DOCUMENTED_DEFAULT.matcher(Files.readString(EXAMPLE)).replaceAll("$1");
        Path file = Files.writeString(dir.resolve("master.yaml"), uncommented);
        assertThat(MasterConfig.loadFile(file)).isEqualTo(MasterConfig.builder().build());
    }

    @Test
    void everyProseExampleLoads(@TempDir Path dir) throws Exception {
        String examples = proseExamples(Files.readString(EXAMPLE));
        assertThat(examples).contains("publisher_acl:", "autosign_tokens:", "tls:", "autosign_claims:");
        Path file = Files.writeString(dir.resolve("master.yaml"), examples);
        MasterConfig config = MasterConfig.loadFile(file);
        assertThat(config.publisherAcl()).isNotEmpty();
        assertThat(config.acceptance().autosignTokens()).isNotEmpty();
    }

    /** The indented blocks after each "For example:", uncommented and put together as one document. */
    static String proseExamples(String example) {
        StringBuilder yaml = new StringBuilder();
        boolean inExample = false;
        for (String line : example.split("\n")) {
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

    @Test
    void everyKeyIsDocumented() throws IOException {
        String example = Files.readString(EXAMPLE);
        List<String> keys = keys(MasterConfig.class);
        assertThat(keys).hasSizeGreaterThan(30);
        for (String key : keys) {
            String leaf = key.substring(key.lastIndexOf('.') + 1);
            String documented = key.contains(".") ? "(?m)^#[\\s-]+" + leaf + ":" : "(?m)^#" + leaf + ":";
            assertThat(Pattern.compile(documented).matcher(example).find())
                    .as("conf/master.yaml documents %s", key).isTrue();
        }
    }

    /**
     * The keys a config record reads: its components, with the groups that map to top-level keys (such as
     * {@code Acceptance}) flattened, and the records that map to nested mappings (such as {@code Tls}) as
     * {@code tls.cert}.
     */
    static List<String> keys(Class<?> record) {
        List<String> keys = new ArrayList<>();
        for (RecordComponent component : record.getRecordComponents()) {
            String key = KEY_NAMES.getOrDefault(component.getName(), snakeCase(component.getName()));
            Class<?> nested = nestedRecord(component.getGenericType());
            if (nested == MasterConfig.Acceptance.class) {
                keys.addAll(keys(nested));
            } else {
                keys.add(key);
                if (nested != null) {
                    keys(nested).forEach(k -> keys.add(key + "." + k));
                }
            }
        }
        return keys;
    }

    /** The config record held by a component of type {@code R}, {@code Optional<R>}, {@code List<R>} or a map to R. */
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
        return camel.replaceAll("([A-Z])", "_$1").toLowerCase(java.util.Locale.ROOT);
    }
}
