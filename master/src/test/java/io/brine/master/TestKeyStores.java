package io.brine.master;

import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.FileKeyStore;
import io.brine.store.keys.KeyPairFiles;
import io.brine.store.keys.KeyStoreOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;

/** A real key store for a test of the master's services, without a daemon around it. */
public final class TestKeyStores {

    private TestKeyStores() {}

    /** A store in {@code dir/pki} (mode 0700, created), test key 250 as the master's, read only when asked. */
    public static FileKeyStore open(Path dir) throws Exception {
        Path pki = Files.createDirectories(dir.resolve("pki"));
        Files.setPosixFilePermissions(pki, PosixFilePermissions.fromString("rwx------"));
        KeyPairFiles.writeNew(pki, "master", TestKeys.pair(250));
        return FileKeyStore.open(
                KeyStoreOptions.builder(pki).pollInterval(Duration.ZERO).build());
    }
}
