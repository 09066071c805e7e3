package io.brine.bench;

import io.brine.protocol.salt.SaltValue;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * What a stock Salt minion asks its master's file server during {@code state.apply} (highstate), one request after
 * the other as its one request channel does: {@code _master_opts}, {@code _file_list} of {@code base}, then for
 * {@code top.sls}, the state file and each file it manages {@code _file_hash} and {@code _serve_file} from
 * {@code loc} 0 until a chunk comes back empty (salt/fileclient.py, {@code RemoteClient.get_file}); each file's
 * bytes are checked against the hash the master gave. Rendering and applying the states is the minion's own work and
 * not simulated: the run ends with the return a highstate of these states gives. One run per publication; the
 * {@link SaltSimMinion} seals each request and opens each reply.
 */
final class StateRun {

    /** The function whose publication starts a run. */
    static final String FUNCTION = "state.apply";
    /** The state file {@code top.sls} assigns to every minion. */
    static final String STATE = "bench/init.sls";
    /** The files {@link #STATE} manages from {@code salt://}, with their sizes in bytes (configuration files). */
    static final Map<String, Integer> MANAGED = managed();
    /** The files in the tree, {@code top.sls}, {@link #STATE} and {@link #MANAGED} among them. */
    static final int TREE_FILES = 100;

    private static Map<String, Integer> managed() {
        Map<String, Integer> managed = new LinkedHashMap<>();
        managed.put("bench/files/motd.jinja", 1_024);
        managed.put("bench/files/sshd_config", 3_300);
        managed.put("bench/files/app.conf", 8_192);
        managed.put("bench/files/nginx.conf.jinja", 12_288);
        return managed;
    }

    private enum Step {
        MASTER_OPTS,
        FILE_LIST,
        FILE_HASH,
        SERVE_FILE,
        DONE
    }

    private final List<String> files = new ArrayList<>();
    private Step step = Step.MASTER_OPTS;
    private int file;
    private String hsum;
    private String hashType;
    private final ByteArrayOutputStream content = new ByteArrayOutputStream();
    private int requests;
    private long bytes;
    private Optional<String> failure = Optional.empty();

    StateRun() {
        files.add("top.sls");
        files.add(STATE);
        files.addAll(MANAGED.keySet());
    }

    /** The fields of the request to send now (the minion adds nonce, ts, tok and id); empty once the run is over. */
    Optional<SaltValue.Map> request() {
        SaltValue.Builder load = SaltValue.Map.builder();
        switch (step) {
            case MASTER_OPTS -> load.put("cmd", "_master_opts");
            case FILE_LIST ->
                load.put("cmd", "_file_list").put("saltenv", "base").put("prefix", "");
            case FILE_HASH ->
                load.put("cmd", "_file_hash").put("path", files.get(file)).put("saltenv", "base");
            case SERVE_FILE ->
                load.put("cmd", "_serve_file")
                        .put("path", files.get(file))
                        .put("saltenv", "base")
                        .put("loc", content.size());
            default -> {
                return Optional.empty();
            }
        }
        return Optional.of(load.build());
    }

    /**
     * The opened reply to {@link #request()}: checks it as the minion's state run would read it and moves on. A
     * reply the run cannot use ends it as failed ({@link #failure()}).
     */
    void answered(SaltValue reply) {
        if (step == Step.DONE) {
            return;
        }
        requests++;
        switch (step) {
            case MASTER_OPTS -> {
                if (!(reply instanceof SaltValue.Map opts)
                        || opts.get("renderer").flatMap(SaltValue::text).isEmpty()) {
                    fail("_master_opts: no renderer in the answer (" + reply.kind() + ")");
                    return;
                }
                step = Step.FILE_LIST;
            }
            case FILE_LIST -> {
                List<String> listed = new ArrayList<>();
                if (reply instanceof SaltValue.Array list) {
                    list.items().forEach(item -> item.text().ifPresent(listed::add));
                }
                Optional<String> absent =
                        files.stream().filter(f -> !listed.contains(f)).findFirst();
                if (absent.isPresent()) {
                    fail("_file_list: " + absent.get() + " not listed (" + listed.size() + " files listed)");
                    return;
                }
                step = Step.FILE_HASH;
            }
            case FILE_HASH -> {
                Optional<SaltValue> sum = reply instanceof SaltValue.Map hash ? hash.get("hsum") : Optional.empty();
                Optional<SaltValue> type =
                        reply instanceof SaltValue.Map hash ? hash.get("hash_type") : Optional.empty();
                if (sum.flatMap(SaltValue::text).isEmpty()
                        || type.flatMap(SaltValue::text).isEmpty()) {
                    fail("_file_hash: no hash of " + files.get(file));
                    return;
                }
                hsum = sum.get().text().get();
                hashType = type.get().text().get();
                content.reset();
                step = Step.SERVE_FILE;
            }
            case SERVE_FILE -> serveFile(reply);
            default -> throw new IllegalStateException(step.name());
        }
    }

    private void serveFile(SaltValue reply) {
        Optional<SaltValue> data = reply instanceof SaltValue.Map chunk ? chunk.get("data") : Optional.empty();
        // A salt-master reads files in binary and sends bytes; an empty chunk may come as "" either way.
        Optional<byte[]> chunk = data.flatMap(SaltValue::bytes)
                .or(() -> data.flatMap(SaltValue::text).map(t -> t.getBytes(StandardCharsets.UTF_8)));
        if (chunk.isEmpty()) {
            fail("_serve_file: no data for " + files.get(file));
            return;
        }
        if (chunk.get().length > 0) {
            content.writeBytes(chunk.get());
            bytes += chunk.get().length;
            return;
        }
        String path = files.get(file);
        Optional<String> got = digest(hashType, content.toByteArray());
        if (got.isEmpty() || !got.get().equals(hsum)) {
            fail("_serve_file: " + path + " (" + content.size() + " bytes) does not have the " + hashType
                    + " the master gave");
            return;
        }
        file++;
        step = file < files.size() ? Step.FILE_HASH : Step.DONE;
    }

    private void fail(String why) {
        failure = Optional.of(why);
        step = Step.DONE;
    }

    boolean over() {
        return step == Step.DONE;
    }

    Optional<String> failure() {
        return failure;
    }

    /** Requests answered so far. */
    int requests() {
        return requests;
    }

    /** File bytes served so far (the {@code data} of every chunk, as the minion received it). */
    long bytes() {
        return bytes;
    }

    /** The return of the run: each state's result as a highstate returns it, or the failure as Salt gives one. */
    SaltValue stateReturn() {
        if (failure.isPresent()) {
            return new SaltValue.Array(List.of(SaltValue.str("bench: " + failure.get())));
        }
        SaltValue.Builder states = SaltValue.Map.builder();
        int order = 0;
        for (String source : MANAGED.keySet()) {
            String name = "/etc/bench/"
                    + source.substring(source.lastIndexOf('/') + 1).replace(".jinja", "");
            states.put(
                    "file_|-" + name + "_|-" + name + "_|-managed", result(name, "File " + name + " updated", order++));
        }
        states.put("cmd_|-reload_|-true_|-run", result("true", "Command \"true\" run", order));
        return states.build();
    }

    private static SaltValue result(String name, String comment, int order) {
        return SaltValue.Map.builder()
                .put("name", name)
                .put("changes", SaltValue.Map.builder().build())
                .put("result", true)
                .put("comment", comment)
                .put("__run_num__", order)
                .build();
    }

    /** Salt's {@code hash_type} names, hex digest of {@code bytes}; empty for a name it does not have. */
    static Optional<String> digest(String hashType, byte[] bytes) {
        String algorithm = switch (hashType) {
            case "md5" -> "MD5";
            case "sha1" -> "SHA-1";
            case "sha224", "sha256", "sha384", "sha512" -> "SHA-" + hashType.substring(3);
            default -> null;
        };
        if (algorithm == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(HexFormat.of()
                    .formatHex(MessageDigest.getInstance(algorithm).digest(bytes)));
        } catch (NoSuchAlgorithmException e) {
            return Optional.empty();
        }
    }

    /**
     * Writes the benchmark's tree of {@link #TREE_FILES} files under {@code root}: {@code top.sls} assigning
     * {@link #STATE} to every minion, the state file, the files it manages, and other configuration files of 1 to
     * 16 KiB that a run lists but does not fetch. The same bytes every time (one seed).
     */
    static void writeTree(Path root) throws IOException {
        Random random = new Random(27);
        write(root.resolve("top.sls"), "base:\n  '*':\n    - bench\n");
        StringBuilder state = new StringBuilder();
        for (String source : MANAGED.keySet()) {
            String name = "/etc/bench/"
                    + source.substring(source.lastIndexOf('/') + 1).replace(".jinja", "");
            state.append(name)
                    .append(":\n  file.managed:\n    - source: salt://")
                    .append(source)
                    .append('\n')
                    .append("    - user: root\n    - group: root\n    - mode: '0644'\n    - makedirs: True\n")
                    .append(source.endsWith(".jinja") ? "    - template: jinja\n" : "")
                    .append('\n');
        }
        state.append("reload:\n  cmd.run:\n    - name: 'true'\n    - onchanges:\n");
        MANAGED.keySet()
                .forEach(s -> state.append("      - file: /etc/bench/")
                        .append(s.substring(s.lastIndexOf('/') + 1).replace(".jinja", ""))
                        .append('\n'));
        write(root.resolve(STATE), state.toString());
        MANAGED.forEach((source, size) -> write(root.resolve(source), text(random, size, source.endsWith(".jinja"))));
        for (int i = files(root); i < TREE_FILES; i++) {
            write(
                    root.resolve(String.format("bench/extra/conf-%02d.conf", i)),
                    text(random, 1024 + random.nextInt(15 * 1024), false));
        }
    }

    private static int files(Path root) throws IOException {
        try (var walk = Files.walk(root)) {
            return (int) walk.filter(Files::isRegularFile).count();
        }
    }

    /** Configuration-like lines ({@code key = value}, a Jinja grain now and then) of exactly {@code size} bytes. */
    private static String text(Random random, int size, boolean template) {
        StringBuilder text = new StringBuilder(size + 64);
        int line = 0;
        while (text.length() < size) {
            if (template && line % 8 == 0) {
                text.append("# on {{ grains['id'] }} ({{ grains['os'] }})\n");
            } else {
                text.append("option_")
                        .append(line)
                        .append(" = ")
                        .append(Long.toString(random.nextLong() >>> 1, 36))
                        .append('\n');
            }
            line++;
        }
        text.setLength(size - 1);
        return text.append('\n').toString();
    }

    private static void write(Path file, String text) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
