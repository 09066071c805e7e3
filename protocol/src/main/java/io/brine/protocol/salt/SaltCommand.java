package io.brine.protocol.salt;

import io.brine.protocol.codec.Jids;
import io.brine.protocol.codec.MalformedException;
import java.util.Optional;
import java.util.Set;

/**
 * The command of a session request, by its {@code cmd} (the methods Salt's master exposes to minions are
 * {@code AESFuncs.expose_methods} in salt/master.py). The commands a stock minion sends at start-up and for jobs
 * are typed; every other one is {@link Other}, which Salt's master answers with an empty map when it does not
 * serve it.
 */
public sealed interface SaltCommand {

    String cmd();

    /** {@code _return}: a job's result. {@code jid} has passed brine's jid validator; {@code ret} is any value. */
    record Return(
            String jid,
            String fun,
            SaltValue ret,
            Optional<Long> retcode,
            Optional<Boolean> success,
            Optional<SaltValue> funArgs)
            implements SaltCommand {
        @Override
        public String cmd() {
            return "_return";
        }
    }

    /** {@code _minion_event}: one event ({@code tag}, {@code data}) or a batch ({@code events}). */
    record MinionEvent(Optional<String> tag, Optional<SaltValue> data, Optional<SaltValue> events)
            implements SaltCommand {
        @Override
        public String cmd() {
            return "_minion_event";
        }
    }

    /** {@code _pillar}: the minion's grains come with it (claims, not authority). */
    record Pillar(
            Optional<SaltValue.Map> grains, Optional<String> saltenv, Optional<String> pillarenv, Optional<String> ver)
            implements SaltCommand {
        @Override
        public String cmd() {
            return "_pillar";
        }
    }

    /** {@code _register_resources} (Salt 3008): the minion's resources, usually none. */
    record RegisterResources(SaltValue resources, SaltValue resourceGrains) implements SaltCommand {
        @Override
        public String cmd() {
            return "_register_resources";
        }
    }

    /**
     * A file server request (salt/fileserver, {@code AESFuncs}' {@code _file_*}, {@code _serve_file},
     * {@code _master_opts}, {@code _master_tops}, {@code _ext_nodes}): the fields any of them reads, each absent when
     * not sent. {@code loc} is {@code _serve_file}'s offset, {@code gzip} its compression level (1 to 9).
     */
    record FileRequest(
            String cmd,
            Optional<String> path,
            Optional<String> saltenv,
            Optional<String> prefix,
            Optional<Long> loc,
            Optional<Integer> gzip,
            boolean envOnly)
            implements SaltCommand {

        /** The commands read as a {@link FileRequest}. */
        public static final Set<String> COMMANDS = Set.of(
                "_master_opts",
                "_file_envs",
                "_file_list",
                "_file_list_emptydirs",
                "_dir_list",
                "_symlink_list",
                "_file_hash",
                "_file_hash_and_stat",
                "_file_find",
                "_serve_file",
                "_master_tops",
                "_ext_nodes");
        /** A path or prefix longer than this is refused (Linux's PATH_MAX). */
        public static final int MAX_PATH_BYTES = 4096;
        /** A saltenv longer than this is refused. */
        public static final int MAX_SALTENV_BYTES = 255;
    }

    record Other(String cmd) implements SaltCommand {}

    static SaltCommand decode(SaltValue.Map load) throws MalformedException {
        String cmd = SaltFields.text(load, "cmd", 128);
        switch (cmd) {
            case "_return" -> {
                String jid = SaltFields.text(load, "jid", Jids.MAX_LENGTH);
                if (!Jids.isValid(jid)) {
                    throw new MalformedException("jid: " + Jids.problem(jid).orElseThrow());
                }
                return new Return(
                        jid,
                        SaltFields.text(load, "fun", 1024),
                        load.get("return").orElse(SaltValue.nil()),
                        optionalInteger(load, "retcode"),
                        load.has("success") ? Optional.of(SaltFields.bool(load, "success")) : Optional.empty(),
                        load.get("fun_args"));
            }
            case "_minion_event" -> {
                return new MinionEvent(
                        SaltFields.optionalText(load, "tag", 1024), load.get("data"), load.get("events"));
            }
            case "_pillar" -> {
                return new Pillar(
                        SaltFields.optionalMap(load, "grains"),
                        SaltFields.optionalText(load, "saltenv", 1024),
                        SaltFields.optionalText(load, "pillarenv", 1024),
                        SaltFields.optionalText(load, "ver", 16));
            }
            case "_register_resources" -> {
                return new RegisterResources(
                        load.get("resources").orElse(SaltValue.nil()),
                        load.get("resource_grains").orElse(SaltValue.nil()));
            }
            default -> {
                if (FileRequest.COMMANDS.contains(cmd)) {
                    return fileRequest(cmd, load);
                }
                return new Other(cmd);
            }
        }
    }

    private static FileRequest fileRequest(String cmd, SaltValue.Map load) throws MalformedException {
        Optional<Long> loc =
                load.get("loc").filter(v -> !(v instanceof SaltValue.Nil)).isPresent()
                        ? Optional.of(SaltFields.integer(load, "loc"))
                        : Optional.empty();
        if (loc.isPresent() && loc.get() < 0) {
            throw new MalformedException("loc: negative");
        }
        Optional<Integer> gzip = Optional.empty();
        Optional<SaltValue> level = load.get("gzip").filter(v -> !(v instanceof SaltValue.Nil));
        if (level.isPresent()) {
            long value = SaltFields.integer(load, "gzip");
            if (value < 1 || value > 9) {
                throw new MalformedException("gzip: expected a level from 1 to 9, got " + value);
            }
            gzip = Optional.of((int) value);
        }
        boolean envOnly =
                load.get("env_only").filter(v -> v instanceof SaltValue.Bool).isPresent()
                        && SaltFields.bool(load, "env_only");
        return new FileRequest(
                cmd,
                SaltFields.optionalText(load, "path", FileRequest.MAX_PATH_BYTES),
                SaltFields.optionalText(load, "saltenv", FileRequest.MAX_SALTENV_BYTES),
                SaltFields.optionalText(load, "prefix", FileRequest.MAX_PATH_BYTES),
                loc,
                gzip,
                envOnly);
    }

    /** Salt's {@code retcode} is usually an int, but a state run may report a list or nothing. */
    private static Optional<Long> optionalInteger(SaltValue.Map load, String field) {
        return load.get(field)
                .filter(v -> v instanceof SaltValue.Int i && !i.unsigned64())
                .map(v -> ((SaltValue.Int) v).value());
    }
}
