package io.brine.daemon.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.tuple;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** master.yaml's referenced files, checked by the master's --check-config and at its start (loadChecked). */
class ReferencedFilesTest {

    private static final String YAML = """
            transport: [tcp]
            tls:
              cert: tls.crt
              key: tls.key
            autosign_file: autosign.conf
            autoreject_file: autoreject.conf
            autosign_policy: policy.sh
            inventory_file: inventory.yaml
            """;

    @TempDir
    Path dir;

    private void file(String name, String mode) throws Exception {
        Path file = Files.writeString(dir.resolve(name), "x\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
    }

    private List<ConfigProblem> problems() {
        return catchThrowableOfType(ConfigException.class, () -> MasterConfig.loadChecked(dir))
                .problems();
    }

    @Test
    void everyMissingReferencedFileIsAProblemAtItsLine() throws Exception {
        Files.writeString(dir.resolve("master.yaml"), YAML);
        assertThat(problems())
                .extracting(ConfigProblem::line, ConfigProblem::key)
                .containsExactly(
                        tuple(3, "tls.cert"),
                        tuple(4, "tls.key"),
                        tuple(5, "autosign_file"),
                        tuple(6, "autoreject_file"),
                        tuple(7, "autosign_policy"),
                        tuple(8, "inventory_file"));
        assertThat(problems().get(2).toString())
                .isEqualTo(dir.resolve("master.yaml") + ":5: autosign_file: " + dir.resolve("autosign.conf")
                        + " does not exist");
        // What brine and brine-key read (they run as other users) does not look at the files.
        assertThat(MasterConfig.load(dir).acceptance().autosignFile()).contains(dir.resolve("autosign.conf"));
    }

    @Test
    void filesThatExistAreCheckedForWhatTheMasterNeeds() throws Exception {
        Files.writeString(dir.resolve("master.yaml"), YAML);
        file("tls.crt", "rw-r--r--");
        file("tls.key", "rw----r--");
        file("autosign.conf", "rw-rw-r--"); // the ownership rule: the master's policies, not its start, enforce it
        Files.createDirectory(dir.resolve("autoreject.conf"));
        file("policy.sh", "rw-r--r--");
        file("inventory.yaml", "rw-r--r--");
        assertThat(problems())
                .extracting(ConfigProblem::key, ConfigProblem::message)
                .containsExactly(
                        tuple(
                                "tls.key",
                                dir.resolve("tls.key") + " is readable by others: it is a private key (chmod o-r)"),
                        tuple("autoreject_file", dir.resolve("autoreject.conf") + " is not a regular file"),
                        tuple("autosign_policy", dir.resolve("policy.sh") + " is not executable (chmod u+x)"));
    }

    @Test
    void aConfigWhoseFilesAreFineLoads() throws Exception {
        Files.writeString(dir.resolve("master.yaml"), YAML);
        file("tls.crt", "rw-r--r--");
        file("tls.key", "rw-------");
        file("autosign.conf", "rw-r--r--");
        file("autoreject.conf", "rw-------");
        file("policy.sh", "rwxr-xr-x");
        file("inventory.yaml", "r--------");
        assertThat(MasterConfig.loadChecked(dir).acceptance().inventoryFile()).contains(dir.resolve("inventory.yaml"));
    }
}
