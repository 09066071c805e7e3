package io.brine.store.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.testing.TestKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** brine-key's lean reading of a pki dir lists what the store lists, without holding a parsed key. */
class KeyScanTest {

    @TempDir
    Path tmp;

    private static RSAPublicKey key(int i) {
        return (RSAPublicKey) TestKeys.pair(i).getPublic();
    }

    private FileKeyStore open(Path pki) throws Exception {
        return FileKeyStore.open(KeyStoreOptions.builder(pki)
                .masterKey(false)
                .pollInterval(Duration.ZERO)
                .build());
    }

    private static void write(Path pki, KeyState state, String name, String content) throws Exception {
        Path file = pki.resolve(state.dirName()).resolve(name);
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    }

    @Test
    void listsTheKeysAndProblemsTheStoreLists() throws Exception {
        Path pki = tmp.resolve("pki");
        try (FileKeyStore store = open(pki)) {
            store.offer("web1", key(1), PolicyVerdict.NONE);
            store.offer("web2", key(2), PolicyVerdict.ACCEPT);
            store.offer("web2", key(3), PolicyVerdict.NONE); // denied
            store.offer("evil", key(4), PolicyVerdict.REJECT);
        }
        write(pki, KeyState.PENDING, "Bad_Name", TestKeys.publicPem(5));
        write(pki, KeyState.PENDING, "junk", "hello");
        write(pki, KeyState.PENDING, "web2", TestKeys.publicPem(2)); // also accepted, which takes precedence
        Files.createSymbolicLink(
                pki.resolve("minions").resolve("link1"), pki.resolve("minions").resolve("web2"));

        KeyScan.Result scan = KeyScan.scan(pki);
        KeyListing expected;
        try (FileKeyStore store = open(pki)) {
            expected = store.list();
        }

        for (KeyState state : KeyState.values()) {
            assertThat(scan.listing().keys(state))
                    .as(state.dirName())
                    .extracting(StoredKey::id, StoredKey::state, StoredKey::fingerprint)
                    .containsExactlyElementsOf(expected.keys(state).stream()
                            .map(k -> Tuple.tuple(k.id(), k.state(), k.fingerprint()))
                            .toList());
            assertThat(scan.listing().keys(state)).allMatch(k -> k.key() == null);
        }
        assertThat(scan.listing().problems()).isEqualTo(expected.problems()).hasSize(4);
        assertThat(scan.listing().ids(KeyState.ACCEPTED)).containsExactly("web2");
        assertThat(scan.listing().ids(KeyState.DENIED)).containsExactly("web2");
        assertThat(scan.shared().sameKeyAs(Fingerprints.of(key(2)), "web2")).isEmpty();
    }

    @Test
    void aKeyUnderManyIdsIsMarkedWithTheFirstFewAndACount() throws Exception {
        Path pki = tmp.resolve("pki");
        open(pki).close();
        for (int i = 1; i <= 12; i++) {
            write(
                    pki,
                    i % 2 == 0 ? KeyState.ACCEPTED : KeyState.PENDING,
                    String.format("web%02d", i),
                    TestKeys.publicPem(7));
        }
        write(pki, KeyState.ACCEPTED, "db1", TestKeys.publicPem(8));
        write(pki, KeyState.DENIED, "db1", TestKeys.publicPem(8)); // the same id again: counted once

        KeyScan.Result scan = KeyScan.scan(pki);
        String shared = Fingerprints.of(key(7));

        assertThat(scan.shared().sameKeyAs(shared, "web03"))
                .contains("same key as web01, web02, web04, web05, web06 and 6 more");
        assertThat(scan.shared().sameKeyAs(shared, "web12"))
                .contains("same key as web01, web02, web03, web04, web05 and 6 more");
        assertThat(scan.shared().sameKeyAs(Fingerprints.of(key(8)), "db1")).isEmpty();
        // The store's own marks say the same.
        try (FileKeyStore store = open(pki)) {
            KeyListing listing = store.list();
            assertThat(SharedKeys.of(listing).sameKeyAs(shared, "web03"))
                    .contains(KeyListing.sameKeyAs(KeyListing.otherIds(
                            listing.sharedKeys(),
                            listing.find("web03", KeyState.PENDING).orElseThrow())));
        }
    }

    @Test
    void aMissingStateDirectoryIsEmptyAndAMissingPkiDirAnError() throws Exception {
        Path pki = Files.createDirectory(
                tmp.resolve("pki"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        assertThat(KeyScan.scan(pki).listing().keys(KeyState.ACCEPTED)).isEmpty();
        assertThatThrownBy(() -> KeyScan.scan(tmp.resolve("nowhere")))
                .isInstanceOf(KeyStoreException.class)
                .hasMessageContaining("does not exist");
    }
}
