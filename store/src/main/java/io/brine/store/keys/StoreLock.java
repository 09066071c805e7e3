package io.brine.store.keys;

import io.brine.daemon.files.AtomicFiles;
import io.brine.daemon.files.WritableFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.FileSystemException;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The advisory lock every writer of a pki dir holds ({@code pki_dir/.lock}): the master and any number of
 * brine-key runs. The file also holds a change counter that each writer bumps, so other processes notice a change
 * by reading eight bytes.
 *
 * <p>POSIX record locks belong to a process, and closing any descriptor of the file drops all of them; the JDK
 * also throws {@link OverlappingFileLockException} for a second lock in one JVM. So every {@code KeyStore} of one
 * pki dir in this JVM shares one channel and one {@link ReentrantLock}: this per-JVM table is the one static
 * registry the store needs.
 */
final class StoreLock implements AutoCloseable {

    static final String FILE_NAME = ".lock";

    private static final Map<Path, Shared> OPEN = new HashMap<>();

    private final Shared shared;
    private boolean closed;

    private StoreLock(Shared shared) {
        this.shared = shared;
    }

    /** Opens the lock of the pki dir {@code realPkiDir} (a real path: links resolved). */
    static StoreLock open(Path realPkiDir) throws IOException {
        Path file = realPkiDir.resolve(FILE_NAME);
        synchronized (OPEN) {
            Shared shared = OPEN.get(file);
            if (shared == null) {
                shared = new Shared(file);
                OPEN.put(file, shared);
            }
            shared.references++;
            return new StoreLock(shared);
        }
    }

    /** Takes the lock, waiting for other threads and processes; reentrant. */
    Held acquire() throws IOException {
        shared.jvmLock.lock();
        try {
            if (shared.jvmLock.getHoldCount() == 1) {
                shared.fileLock = shared.channel().lock();
            }
            return new Held(shared);
        } catch (IOException | RuntimeException e) {
            shared.jvmLock.unlock();
            throw e;
        }
    }

    boolean heldByCurrentThread() {
        return shared.jvmLock.isHeldByCurrentThread();
    }

    /** The change counter; -1 when it cannot be read (callers then rescan). Needs no lock. */
    long generation() {
        try {
            ByteBuffer buffer = ByteBuffer.allocate(Long.BYTES);
            FileChannel channel = shared.channel;
            while (buffer.hasRemaining()) {
                if (channel.read(buffer, buffer.position()) < 0) {
                    return 0;
                }
            }
            return buffer.flip().getLong();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Bumps the change counter; the caller holds the lock. Returns the new value. */
    long bumpGeneration() throws IOException {
        if (!heldByCurrentThread()) {
            throw new IllegalStateException("the store lock is not held");
        }
        long next = Math.max(0, generation()) + 1;
        ByteBuffer buffer = ByteBuffer.allocate(Long.BYTES).putLong(next).flip();
        FileChannel channel = shared.channel();
        while (buffer.hasRemaining()) {
            channel.write(buffer, buffer.position());
        }
        return next;
    }

    @Override
    public void close() throws IOException {
        synchronized (OPEN) {
            if (closed) {
                return;
            }
            closed = true;
            if (--shared.references == 0) {
                OPEN.remove(shared.file);
                shared.channel.close();
            }
        }
    }

    /** The lock, held until closed. */
    static final class Held implements AutoCloseable {
        private final Shared shared;
        private boolean released;

        private Held(Shared shared) {
            this.shared = shared;
        }

        @Override
        public void close() {
            if (released) {
                return;
            }
            released = true;
            try {
                if (shared.jvmLock.getHoldCount() == 1 && shared.fileLock != null) {
                    shared.fileLock.release();
                    shared.fileLock = null;
                }
            } catch (IOException e) {
                // The channel was closed (e.g. by an interrupt), which released the lock with it.
            } finally {
                shared.jvmLock.unlock();
            }
        }
    }

    private static final class Shared {
        final Path file;
        final ReentrantLock jvmLock = new ReentrantLock();
        volatile FileChannel channel;
        FileLock fileLock;
        int references;

        Shared(Path file) throws IOException {
            this.file = file;
            this.channel = openChannel(file);
            allocateCounter(channel);
        }

        /**
         * Gives the change counter its 8 bytes when the store is created (or first opened by this version), so that
         * bumping it later overwrites blocks the file already has: on a full disk a rename that succeeded is never
         * followed by a counter write that fails for want of space.
         */
        private static void allocateCounter(FileChannel channel) throws IOException {
            if (channel.size() >= Long.BYTES) {
                return;
            }
            try (FileLock held = channel.lock()) {
                if (channel.size() < Long.BYTES) {
                    ByteBuffer zero = ByteBuffer.allocate(Long.BYTES);
                    while (zero.hasRemaining()) {
                        channel.write(zero, zero.position());
                    }
                    channel.force(true);
                }
            }
        }

        /**
         * The channel, reopened if an interrupt closed it (FileChannel is interruptible); called with
         * {@code jvmLock} held, when no lock of this JVM can be lost by the reopening.
         */
        FileChannel channel() throws IOException {
            FileChannel current = channel;
            if (!current.isOpen()) {
                current = openChannel(file);
                channel = current;
            }
            return current;
        }

        private static FileChannel openChannel(Path file) throws IOException {
            try {
                return open(file);
            } catch (FileSystemException e) {
                throw new IOException(WritableFile.cannotOpen("pki_dir", file, e), e);
            }
        }

        private static FileChannel open(Path file) throws IOException {
            return FileChannel.open(
                    file,
                    Set.<OpenOption>of(
                            StandardOpenOption.CREATE,
                            StandardOpenOption.READ,
                            StandardOpenOption.WRITE,
                            LinkOption.NOFOLLOW_LINKS),
                    PosixFilePermissions.asFileAttribute(AtomicFiles.OWNER_RW));
        }
    }
}
