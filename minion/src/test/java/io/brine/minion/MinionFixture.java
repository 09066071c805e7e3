package io.brine.minion;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.files.AtomicFiles;
import io.brine.minion.auth.MasterPin;
import io.brine.minion.auth.MinionKeyring;
import io.brine.minion.auth.MinionKeys;
import io.brine.protocol.crypto.Pem;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.testing.MovableClock;
import io.brine.protocol.testing.TestKeys;
import io.brine.transport.ClientTransport;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A minion wired as the daemon wires it, on a {@link ManualScheduler}: its key is test key 101, its jobs are only
 * recorded ({@link #ran}), and time moves when the test says ({@link #advance}).
 */
final class MinionFixture implements AutoCloseable {

    static final int MINION_KEY = 101;
    /** acceptance_wait_time in {@link #settings}; the maximum is twice that. */
    static final Duration ACCEPTANCE_WAIT = Duration.ofSeconds(10);

    static final Duration AUTH_TIMEOUT = Duration.ofSeconds(30);
    static final Duration HEARTBEAT = Duration.ofHours(1);
    /** publish_max_age in {@link #settings}: the daemon's default. */
    static final Duration PUBLISH_MAX_AGE = Duration.ofMinutes(5);
    /** A wait stretched by its most jitter (25 %), and a millisecond more. */
    static final double MOST_JITTER = 1.25;

    final MovableClock clock = new MovableClock(Instant.now());
    final ManualScheduler scheduler = new ManualScheduler(clock);
    final List<String> ran = new CopyOnWriteArrayList<>();
    private final Path pkiDir;
    private Minion minion;
    private FakeMaster master;
    private int barriers;
    private Optional<Duration> keyMaxAge = Optional.empty();
    /** Key pairs to make for a rotation, held until {@link #makeKeys} when {@link #holdKeyMaking} was called. */
    private final List<Runnable> keyMaking = new CopyOnWriteArrayList<>();

    private volatile boolean holdKeyMaking;
    /** The threads key pairs were made on. */
    final List<String> keyMakers = new CopyOnWriteArrayList<>();

    MinionFixture(Path pkiDir) {
        this.pkiDir = pkiDir;
    }

    /** acceptance_wait_time 10 s (20 s at most), auth timeout 30 s, heartbeats hourly. */
    static Minion.Settings settings(boolean rejectedRetry) {
        return settings(rejectedRetry, HEARTBEAT);
    }

    static Minion.Settings settings(boolean rejectedRetry, Duration heartbeat) {
        return new Minion.Settings(
                "web1",
                ACCEPTANCE_WAIT,
                ACCEPTANCE_WAIT.multipliedBy(2),
                rejectedRetry,
                AUTH_TIMEOUT,
                heartbeat,
                null,
                Map.of("role", "web"),
                null,
                null,
                16,
                Duration.ofMinutes(1),
                PUBLISH_MAX_AGE);
    }

    /**
     * Starts a minion with {@code settings} against {@code master}, pinned to nothing unless the pki dir says so.
     * On {@link #close}, {@code master} must have been able to read every frame the minion sent.
     */
    Minion start(FakeMaster master, Minion.Settings settings, String masterFinger) throws Exception {
        return start(master, master, settings, masterFinger);
    }

    /** As {@link #start(FakeMaster, Minion.Settings, String)}, over {@code transport} (one that leads to it). */
    Minion start(FakeMaster master, ClientTransport transport, Minion.Settings settings, String masterFinger)
            throws Exception {
        this.master = master;
        AtomicFiles.ensureDirectory(pkiDir);
        AtomicFiles.write(
                pkiDir.resolve(MinionKeys.PRIVATE_FILE),
                Pem.bytes(TestKeys.privatePem(MINION_KEY)),
                AtomicFiles.OWNER_READ);
        MinionKeyring keys = MinionKeyring.load(pkiDir, 2048);
        MasterPin pin = new MasterPin(pkiDir, masterFinger);
        Minion.Parts parts =
                Minion.Parts.wire(settings, keys, pin, transport, scheduler, clock, 2048, keyMaxAge, task -> {
                    Runnable recorded = () -> {
                        keyMakers.add(Thread.currentThread().getName());
                        task.run();
                    };
                    if (holdKeyMaking) {
                        keyMaking.add(recorded);
                    } else {
                        recorded.run();
                    }
                });
        minion = new Minion(settings, transport, scheduler, parts, load -> ran.add(load.jid()));
        minion.start();
        scheduler.idle();
        return minion;
    }

    /** {@code key_max_age} for the next {@link #start}. */
    void keyMaxAge(Duration keyMaxAge) {
        this.keyMaxAge = Optional.of(keyMaxAge);
    }

    /** Pins {@code key} as though an earlier run had been accepted by its master. */
    void pin(KeyPair key) throws Exception {
        AtomicFiles.ensureDirectory(pkiDir);
        AtomicFiles.write(
                pkiDir.resolve(MasterPin.FILE), Pem.bytes(Pem.publicKeySpki(key.getPublic())), AtomicFiles.PUBLIC_READ);
    }

    /** From now on a rotation's key pair is made only when the test calls {@link #makeKeys}. */
    void holdKeyMaking() {
        holdKeyMaking = true;
    }

    /** Makes the key pairs asked for since {@link #holdKeyMaking}, on the test's thread, then settles. */
    void makeKeys() {
        List<Runnable> due = List.copyOf(keyMaking);
        keyMaking.removeAll(due);
        due.forEach(Runnable::run);
        settle();
    }

    Path pkiDir() {
        return pkiDir;
    }

    /** Waits until the minion's event thread has handled everything handed to it. */
    void settle() {
        scheduler.idle();
    }

    /** Moves time by {@code by}, firing every timer that falls due. */
    void advance(Duration by) {
        scheduler.advance(by);
    }

    /** Moves time past a wait of {@code wait} stretched by its most jitter. */
    void advancePast(Duration wait) {
        scheduler.advance(Duration.ofMillis((long) (wait.toMillis() * MOST_JITTER) + 1));
    }

    /**
     * Settles, then checks that the session still carries frames both ways: a grains report goes out sealed on the
     * current session and reaches {@code master}.
     */
    void barrier(FakeMaster master) {
        long n = ++barriers; // integers come back from the wire as longs
        minion.reportGrains(Map.of("barrier", n));
        settle();
        assertThat(master.received(SessionMessage.Grains.class))
                .as("a grains report sent after the frames under test")
                .anyMatch(g -> Long.valueOf(n).equals(g.grains().get("barrier")));
    }

    @Override
    public void close() {
        if (minion != null) {
            minion.close();
        }
        assertThat(scheduler.failures())
                .as("events that failed on the minion's event thread")
                .isEmpty();
        if (master != null) {
            assertThat(master.unreadable())
                    .as("frames from the minion the master could not read")
                    .isEmpty();
        }
    }
}
