package io.brine.daemon.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicFilesTest {

    @TempDir
    Path tmp;

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    private static String mode(Path file) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS));
    }

    private List<String> names(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void twoThreadsCreatingTheSameNameExactlyOneWinsAndTheFileHoldsItsBytes() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            // Many rounds: a check-then-write create lets both threads "win" in some of them.
            for (int round = 0; round < 200; round++) {
                Path target = tmp.resolve("key" + round);
                CyclicBarrier start = new CyclicBarrier(2);
                List<Future<Boolean>> results = new ArrayList<>();
                for (String writer : List.of("first", "second")) {
                    results.add(threads.submit(() -> {
                        start.await();
                        try {
                            AtomicFiles.create(target, bytes(writer + "-" + "x".repeat(4096)), AtomicFiles.OWNER_RW);
                            return true;
                        } catch (FileAlreadyExistsException e) {
                            return false;
                        }
                    }));
                }
                boolean firstWon = results.get(0).get();
                boolean secondWon = results.get(1).get();
                assertThat(firstWon ^ secondWon)
                        .as("exactly one winner in round %d", round)
                        .isTrue();
                String winner = firstWon ? "first" : "second";
                assertThat(Files.readString(target)).isEqualTo(winner + "-" + "x".repeat(4096));
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(names(tmp)).noneMatch(AtomicFiles::isTemp);
    }

    @Test
    void createGivesTheModeEvenWhenItHasNoOwnerWrite() throws Exception {
        AtomicFiles.create(tmp.resolve("private.pem"), bytes("secret"), AtomicFiles.OWNER_READ);
        AtomicFiles.create(tmp.resolve("key"), bytes("key"), AtomicFiles.OWNER_RW);
        AtomicFiles.create(tmp.resolve("public.pub"), bytes("public"), AtomicFiles.PUBLIC_READ);

        assertThat(mode(tmp.resolve("private.pem"))).isEqualTo("r--------");
        assertThat(mode(tmp.resolve("key"))).isEqualTo("rw-------");
        assertThat(mode(tmp.resolve("public.pub"))).isEqualTo("rw-r--r--");
        assertThat(Files.readString(tmp.resolve("private.pem"))).isEqualTo("secret");
    }

    @Test
    void createNeverReplacesAnExistingFile() throws Exception {
        Path target = tmp.resolve("key");
        AtomicFiles.create(target, bytes("first"), AtomicFiles.OWNER_RW);

        assertThatThrownBy(() -> AtomicFiles.create(target, bytes("second"), AtomicFiles.OWNER_RW))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThat(Files.readString(target)).isEqualTo("first");
        assertThat(names(tmp)).containsExactly("key");
    }

    @Test
    void aSymlinkAtTheTargetIsRefusedAndNotFollowed() throws Exception {
        Path outside = tmp.resolve("outside");
        Files.writeString(outside, "untouched");
        Path link = tmp.resolve("dir-link");
        Files.createDirectory(tmp.resolve("dir"));
        Path target = tmp.resolve("dir").resolve("key");
        Files.createSymbolicLink(target, outside);
        Path dangling = tmp.resolve("dir").resolve("dangling");
        Files.createSymbolicLink(dangling, tmp.resolve("nowhere"));

        assertThatThrownBy(() -> AtomicFiles.create(target, bytes("evil"), AtomicFiles.OWNER_RW))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> AtomicFiles.create(dangling, bytes("evil"), AtomicFiles.OWNER_RW))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> AtomicFiles.write(target, bytes("evil"), AtomicFiles.OWNER_RW))
                .hasMessageContaining("symlink");
        assertThatThrownBy(() -> AtomicFiles.readSmall(target, 100)).hasMessageContaining("symlink");

        assertThat(Files.readString(outside)).isEqualTo("untouched");
        assertThat(Files.exists(tmp.resolve("nowhere"), LinkOption.NOFOLLOW_LINKS))
                .isFalse();
        assertThat(Files.isSymbolicLink(target)).isTrue();
        assertThat(names(tmp.resolve("dir"))).containsExactly("dangling", "key");
        Files.createSymbolicLink(link, tmp.resolve("dir"));
        assertThatThrownBy(() -> AtomicFiles.ensureDirectory(link)).hasMessageContaining("symlink");
    }

    @Test
    void writeReplacesTheContentWholeWithTheNewMode() throws Exception {
        Path target = tmp.resolve("status.json");
        AtomicFiles.write(target, bytes("old"), AtomicFiles.OWNER_RW);
        AtomicFiles.write(target, bytes("new"), AtomicFiles.PUBLIC_READ);

        assertThat(Files.readString(target)).isEqualTo("new");
        assertThat(mode(target)).isEqualTo("rw-r--r--");
        assertThat(names(tmp)).containsExactly("status.json");
    }

    @Test
    void leftoversOfAnInterruptedWriteAreRemovedAndNothingElse() throws Exception {
        Files.writeString(tmp.resolve(AtomicFiles.TEMP_PREFIX + "0123456789abcdef"), "half a key");
        Files.writeString(tmp.resolve(AtomicFiles.TEMP_PREFIX + "fedcba9876543210"), "");
        Files.writeString(tmp.resolve("web1"), "a key");
        Files.writeString(tmp.resolve("tmp-web2"), "another key");

        assertThat(AtomicFiles.removeLeftovers(tmp)).isEqualTo(2);
        assertThat(names(tmp)).containsExactly("tmp-web2", "web1");
    }

    @Test
    void ensureDirectoryCreatesParentsAndAPrivateDirectory() throws Exception {
        Path dir = tmp.resolve("a/b/pki");
        AtomicFiles.ensureDirectory(dir);
        AtomicFiles.ensureDirectory(dir);

        assertThat(mode(dir)).isEqualTo("rwx------");
        Files.writeString(tmp.resolve("file"), "");
        assertThatThrownBy(() -> AtomicFiles.ensureDirectory(tmp.resolve("file")))
                .hasMessageContaining("not a directory");
    }

    @Test
    void readSmallRefusesWhatIsTooLargeOrNotARegularFile() throws Exception {
        Path file = tmp.resolve("grant");
        Files.writeString(file, "12345");

        assertThat(AtomicFiles.readSmall(file, 5)).isEqualTo(bytes("12345"));
        assertThatThrownBy(() -> AtomicFiles.readSmall(file, 4)).hasMessageContaining("larger than 4 bytes");
        assertThatThrownBy(() -> AtomicFiles.readSmall(tmp, 4)).hasMessageContaining("not a regular file");
    }
}
