package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.Snapshot.FileStamp;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The full rescan ({@code rescanInterval}, driven here by the ticker and {@link FileKeyStore#poll}) reads only the key
 * files whose stamp (inode, size, mtime, ctime) changed since the store read them, and still hears every change.
 */
class KeyRescanTest {

    private static final int KEYS = 20;
    private static final Duration RESCAN = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    private Path pki;
    private final AtomicLong now = new AtomicLong();

    @BeforeEach
    void keys() throws Exception {
        pki = tmp.resolve("pki");
        Files.createDirectories(pki.resolve("minions"));
        Files.setPosixFilePermissions(pki, PosixFilePermissions.fromString("rwx------"));
        for (int i = 0; i < KEYS; i++) {
            handWrite(accepted("web" + i), TestKeys.publicPem(i));
        }
    }

    private FileKeyStore open() throws Exception {
        return FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .rescanInterval(RESCAN)
                .ticker(now::get)
                .build());
    }

    private Path accepted(String id) {
        return pki.resolve("minions").resolve(id);
    }

    private static void handWrite(Path file, String pem) throws Exception {
        Files.writeString(file, pem);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    }

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    /** A full rescan, as the watcher's poll runs it once {@code rescanInterval} passed; the files it read. */
    private long rescan(FileKeyStore store) {
        long before = store.filesRead();
        now.addAndGet(RESCAN.toNanos());
        store.poll();
        return store.filesRead() - before;
    }

    @Test
    void aRescanOfUnchangedKeysReadsNone() throws Exception {
        try (FileKeyStore store = open()) {
            store.offer("db1", key(KEYS), PolicyVerdict.ACCEPT);
            assertThat(store.filesRead()).isEqualTo(KEYS);

            assertThat(rescan(store)).isZero();
            assertThat(rescan(store)).isZero();
            assertThat(store.acceptedIds()).hasSize(KEYS + 1);
        }
    }

    @Test
    void aKeyEditedInPlaceWithItsMtimePutBackIsReadAtTheNextRescan() throws Exception {
        try (FileKeyStore store = open()) {
            Path file = accepted("web1");
            FileTime mtime = Files.getLastModifiedTime(file);
            long size = Files.size(file);
            Object inode = Files.readAttributes(file, "unix:ino").get("ino");

            Files.writeString(file, TestKeys.publicPem(KEYS)); // in place: the same inode, the same size
            Files.setLastModifiedTime(file, mtime);
            assertThat(Files.size(file)).isEqualTo(size);
            assertThat(Files.readAttributes(file, "unix:ino").get("ino")).isEqualTo(inode);

            assertThat(rescan(store)).isEqualTo(1);
            assertThat(store.acceptedKey("web1")).contains(key(KEYS));
            assertThat(rescan(store)).isZero();
        }
    }

    @Test
    void aKeyReplacedByARenameAndAKeyDeletedAreHeard() throws Exception {
        try (FileKeyStore store = open()) {
            Path file = accepted("web2");
            FileTime mtime = Files.getLastModifiedTime(file);
            Path replacement = pki.resolve("web2.new");
            handWrite(replacement, TestKeys.publicPem(KEYS));
            Files.setLastModifiedTime(replacement, mtime);
            Files.move(replacement, file, StandardCopyOption.ATOMIC_MOVE);
            Files.delete(accepted("web3"));

            assertThat(rescan(store)).isEqualTo(1);
            assertThat(store.acceptedKey("web2")).contains(key(KEYS));
            assertThat(store.acceptedKey("web3")).isEqualTo(Optional.empty());
            assertThat(store.acceptedIds()).hasSize(KEYS - 1);
        }
    }

    @Test
    void aStampWithoutACtimeMatchesNothingSoItsFileIsAlwaysRead() {
        FileStamp without = new FileStamp("inode", 451, FileTime.fromMillis(1), null);
        FileStamp with = new FileStamp("inode", 451, FileTime.fromMillis(1), FileTime.fromMillis(2));

        assertThat(without.matches(without)).isFalse();
        assertThat(with.matches(without)).isFalse();
        assertThat(without.matches(with)).isFalse();
        assertThat(with.matches(new FileStamp("inode", 451, FileTime.fromMillis(1), FileTime.fromMillis(2))))
                .isTrue();
        assertThat(with.matches(new FileStamp("other", 451, FileTime.fromMillis(1), FileTime.fromMillis(2))))
                .isFalse();
    }
}
