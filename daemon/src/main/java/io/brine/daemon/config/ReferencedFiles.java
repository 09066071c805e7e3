package io.brine.daemon.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Optional;
import java.util.Set;

/**
 * The files a config names, checked as the daemon will use them, so that a missing or unusable one is a config
 * problem with its file:line (exit 2) instead of a failure at start with a bare path. Only the daemon asks
 * (MasterConfig.loadChecked): the CLIs read master.yaml as other users, who need not read the daemon's files.
 */
final class ReferencedFiles {

    /** How the daemon uses a file. */
    enum Use {
        /** read: a certificate, a YAML file */
        READ,
        /** read, and a secret: others must not read it */
        PRIVATE_KEY,
        /** read, and decides who is accepted (who may write it is the ownership rule, checked by the master) */
        POLICY,
        /** run, and decides who is accepted: executable (who may write it is the ownership rule, as for POLICY) */
        POLICY_EXECUTABLE
    }

    private final boolean check;

    /** @param check whether to look at the files at all (false: the CLIs' plain load) */
    ReferencedFiles(boolean check) {
        this.check = check;
    }

    /** Records a problem at {@code key} of {@code section} when {@code file} does not suit {@code use}. */
    void check(ConfigSection section, String key, Path file, Use use) {
        if (check) {
            problem(file, use).ifPresent(problem -> section.problem(key, problem));
        }
    }

    static Optional<String> problem(Path file, Use use) {
        if (!Files.exists(file)) {
            return Optional.of(file + " does not exist");
        }
        if (!Files.isRegularFile(file)) {
            return Optional.of(file + " is not a regular file");
        }
        if (!Files.isReadable(file)) {
            return Optional.of(file + " is not readable by " + System.getProperty("user.name", "this user"));
        }
        Set<PosixFilePermission> permissions;
        try {
            permissions = Files.readAttributes(file, PosixFileAttributes.class).permissions();
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty(); // not a POSIX file system: nothing more to say
        }
        return switch (use) {
            case READ -> Optional.empty();
            case PRIVATE_KEY ->
                permissions.contains(PosixFilePermission.OTHERS_READ)
                        ? Optional.of(file + " is readable by others: it is a private key (chmod o-r)")
                        : Optional.empty();
            // Who may write a policy file is the ownership rule (TrustedPath), not a config problem: at start as at a
            // re-read, the master serves with that policy disabled; --check-config names it (AcceptancePolicies).
            case POLICY -> Optional.empty();
            case POLICY_EXECUTABLE ->
                !Files.isExecutable(file) || !permissions.contains(PosixFilePermission.OWNER_EXECUTE)
                        ? Optional.of(file + " is not executable (chmod u+x)")
                        : Optional.empty();
        };
    }
}
