package io.brine.keytool;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * The settings brine-key needs from {@code master.yaml}: {@code pki_dir}, {@code cachedir} and {@code audit_log}. Deliberately
 * minimal and isolated: the master's full configuration loader replaces it. Relative paths are resolved against
 * the configuration file's directory; command-line options win over the file.
 *
 * @param pkiDir            the pki dir
 * @param cachedir          where the audit log goes
 * @param cachedirFromUser  true when the cachedir was given (option or file) rather than defaulted
 * @param auditLog          the audit log: {@code audit_log} of the file, else {@code audit.log} in the cachedir
 */
record KeytoolConfig(Path pkiDir, Path cachedir, boolean cachedirFromUser, Path auditLog) {

    /** Where brine-key looks when not told: the config dir, and the defaults of pki_dir and cachedir. */
    record Defaults(Path configDir, Path pkiDir, Path cachedir) {
        static final Defaults SYSTEM = new Defaults(Path.of("/etc/brine"), Path.of("/etc/brine/pki/master"),
                Path.of("/var/cache/brine/master"));
    }

    static final String FILE_NAME = "master.yaml";
    private static final int MAX_BYTES = 1 << 20;

    /**
     * @param configDir        {@code -c DIR}, or null for the default (where a missing file is not an error)
     * @param pkiDirOption     {@code --pki-dir}, or null
     * @param cachedirOption   {@code --cachedir}, or null
     */
    static KeytoolConfig resolve(Path configDir, Defaults defaults, Path pkiDirOption, Path cachedirOption) {
        boolean explicit = configDir != null;
        Path dir = explicit ? configDir : defaults.configDir();
        Path file = dir.resolve(FILE_NAME);
        JsonNode root = null;
        if (pkiDirOption == null || cachedirOption == null) {
            root = read(file, explicit);
        }
        Path pkiDir = pkiDirOption != null ? pkiDirOption : path(root, "pki_dir", file, defaults.pkiDir());
        Path cachedir = cachedirOption != null ? cachedirOption : path(root, "cachedir", file, null);
        // The master's audit_log, unless --cachedir says where this run's audit goes.
        Path auditLog = cachedirOption == null ? path(root, "audit_log", file, null) : null;
        boolean fromUser = cachedir != null || auditLog != null;
        Path resolvedCachedir = (cachedir != null ? cachedir : defaults.cachedir()).toAbsolutePath().normalize();
        return new KeytoolConfig(pkiDir.toAbsolutePath().normalize(), resolvedCachedir, fromUser,
                auditLog != null ? auditLog.toAbsolutePath().normalize() : resolvedCachedir.resolve("audit.log"));
    }

    private static JsonNode read(Path file, boolean required) {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        } catch (NoSuchFileException e) {
            if (required) {
                throw UserError.usage(file + " does not exist");
            }
            return null;
        } catch (IOException e) {
            throw UserError.usage("cannot read " + file + ": " + e.getMessage());
        }
        if (bytes.length > MAX_BYTES) {
            throw UserError.usage(file + " is larger than " + MAX_BYTES + " bytes");
        }
        try {
            JsonNode root = new YAMLMapper().readTree(bytes);
            if (root == null || root.isMissingNode() || root.isNull()) {
                return null;
            }
            if (!root.isObject()) {
                throw UserError.usage(file + ": expected a mapping of option names to values");
            }
            return root;
        } catch (JacksonException e) {
            String where = e.getLocation() == null ? "" : ":" + e.getLocation().getLineNr();
            throw UserError.usage(file + where + ": not valid YAML: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw UserError.usage("cannot read " + file + ": " + e.getMessage());
        }
    }

    private static Path path(JsonNode root, String key, Path file, Path fallback) {
        if (root == null || !root.has(key) || root.get(key).isNull()) {
            return fallback;
        }
        JsonNode value = root.get(key);
        if (!value.isTextual() || value.asText().isBlank()) {
            throw UserError.usage(file + ": " + key + " must be a path");
        }
        return file.toAbsolutePath().getParent().resolve(value.asText());
    }
}
