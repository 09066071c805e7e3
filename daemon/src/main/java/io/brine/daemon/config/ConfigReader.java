package io.brine.daemon.config;

import io.brine.daemon.config.YamlTree.Mapping;
import io.brine.daemon.config.YamlTree.Mark;
import io.brine.daemon.config.YamlTree.Node;
import io.brine.daemon.config.YamlTree.Scalar;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Reads one YAML config file for a daemon. The daemon's loader asks {@link #root()} for each key it knows with a
 * typed accessor; every bad value, and at {@link #finish()} every key nobody asked for, becomes a located
 * {@link ConfigProblem}, so one run reports all of them. Typical use:
 *
 * <pre>{@code
 * ConfigReader reader = ConfigReader.open(configDir.resolve("master.yaml"));
 * ConfigSection root = reader.root();
 * root.integer("publish_port", 1, 65535).ifPresent(builder::publishPort);
 * ...
 * reader.finish();            // throws ConfigException with every problem
 * return builder.build();
 * }</pre>
 *
 * <p>Not thread-safe: one loader uses it once.
 */
public final class ConfigReader {

    /** A config file is a few KiB; a bigger one is a mistake (or an attack on the parser). */
    public static final int MAX_FILE_BYTES = 1024 * 1024;

    private final Path file;
    private final Path directory;
    private final List<ConfigProblem> problems = new ArrayList<>();
    private final List<ConfigSection> sections = new ArrayList<>();
    private ConfigSection root;
    private boolean finished;

    private ConfigReader(Path file) {
        this.file = file;
        Path parent = file.toAbsolutePath().normalize().getParent();
        this.directory = parent == null ? file.toAbsolutePath().getRoot() : parent;
    }

    /**
     * Reads and parses {@code file}. A file that cannot be read or parsed at all (missing, too large, not UTF-8,
     * bad YAML syntax, more than one document, a top level that is not a mapping) throws at once; anything else is
     * collected. An empty file is an empty mapping: all defaults.
     */
    public static ConfigReader open(Path file) throws ConfigException {
        String text = read(file);
        ConfigReader reader = new ConfigReader(file);
        Node top = YamlTree.parse(file, text, reader::add);
        Mapping mapping;
        if (top == null || top instanceof Scalar scalar && scalar.isNull()) {
            mapping = new Mapping(new Mark(1, 1), List.of());
        } else if (top instanceof Mapping m) {
            mapping = m;
        } else {
            throw YamlTree.fatal(
                    file,
                    top.mark(),
                    "the top level must be a mapping of 'key: value' lines, got " + ConfigSection.describe(top));
        }
        reader.root = reader.section("", Mark.NONE, mapping);
        return reader;
    }

    /** The top-level mapping. */
    public ConfigSection root() {
        return root;
    }

    /** The file as it was named to {@link #open}. */
    public Path file() {
        return file;
    }

    /** The absolute directory that relative paths in the file are resolved against. */
    public Path directory() {
        return directory;
    }

    public boolean hasProblems() {
        return !problems.isEmpty();
    }

    /**
     * Reports every key that no accessor asked for as unknown, then throws if there is any problem, listing all of
     * them in file order. Call it once, after all keys have been read and before building the config.
     */
    public void finish() throws ConfigException {
        if (!finished) {
            finished = true;
            for (ConfigSection section : sections) {
                section.reportUnknownKeys();
            }
            problems.sort(Comparator.comparingInt((ConfigProblem p) -> p.line() == 0 ? Integer.MAX_VALUE : p.line())
                    .thenComparingInt(ConfigProblem::column));
        }
        if (!problems.isEmpty()) {
            throw new ConfigException(problems);
        }
    }

    void add(Mark mark, String key, String message) {
        problems.add(new ConfigProblem(file, mark.line(), mark.column(), Quoting.printable(key), message));
    }

    ConfigSection section(String path, Mark mark, Mapping mapping) {
        ConfigSection section = new ConfigSection(this, path, mark, mapping);
        sections.add(section);
        return section;
    }

    private static String read(Path file) throws ConfigException {
        if (Files.isDirectory(file)) {
            throw YamlTree.fatal(file, Mark.NONE, "is a directory, not a config file");
        }
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            throw YamlTree.fatal(file, Mark.NONE, "is not a regular file"); // a FIFO would block the open
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_FILE_BYTES + 1);
        } catch (NoSuchFileException e) {
            throw YamlTree.fatal(file, Mark.NONE, "file not found");
        } catch (AccessDeniedException e) {
            throw YamlTree.fatal(file, Mark.NONE, "permission denied");
        } catch (IOException e) {
            throw YamlTree.fatal(file, Mark.NONE, "cannot read: " + Quoting.printable(String.valueOf(e.getMessage())));
        }
        if (bytes.length > MAX_FILE_BYTES) {
            throw YamlTree.fatal(file, Mark.NONE, "larger than " + (MAX_FILE_BYTES >> 20) + " MiB");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw YamlTree.fatal(file, Mark.NONE, "not valid UTF-8");
        }
        return text.startsWith("\uFEFF") ? text.substring(1) : text;
    }
}
