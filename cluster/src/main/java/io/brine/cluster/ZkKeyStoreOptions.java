package io.brine.cluster;

import io.brine.store.audit.AuditLog;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * How to open a {@link ZkKeyStore}.
 *
 * @param pkiDir        this master's own directory (its key pair, trust anchors); the minion keys are in ZooKeeper
 * @param masterKeyPair the cluster's master key pair, installed by the admin on every master; null for brine-key
 * @param auditLog      this master's local audit log, appended after each change it commits; {@link AuditLog#none()}
 *                      for none (the cluster's trail in ZooKeeper is written either way)
 * @param clock         the time stamped on audit events
 * @param maxPending    as {@code max_pending}; 0 = unlimited
 * @param maxMinions    as {@code max_minions}; 0 = unlimited
 * @param maxRejected   most rejected keys an autoreject may lead to; 0 = unlimited
 * @param reconnectGrace how long a write waits for a lost ZooKeeper connection to come back before it is answered
 *                      without the cluster ({@link #RECONNECT_GRACE}; zero: at once)
 */
public record ZkKeyStoreOptions(
        Path pkiDir,
        KeyPair masterKeyPair,
        AuditLog auditLog,
        Clock clock,
        int maxPending,
        int maxMinions,
        int maxRejected,
        Duration reconnectGrace) {

    /**
     * The reconnect grace of a master: one ZooKeeper server of three stopping costs a reconnect to another, which
     * nobody should see.
     */
    public static final Duration RECONNECT_GRACE = Duration.ofSeconds(5);

    public ZkKeyStoreOptions {
        Objects.requireNonNull(pkiDir, "pkiDir");
        Objects.requireNonNull(auditLog, "auditLog");
        Objects.requireNonNull(clock, "clock");
        if (maxPending < 0 || maxMinions < 0 || maxRejected < 0) {
            throw new IllegalArgumentException("limits must be >= 0");
        }
        Objects.requireNonNull(reconnectGrace, "reconnectGrace");
        if (reconnectGrace.isNegative()) {
            throw new IllegalArgumentException("reconnectGrace must be >= 0");
        }
    }

    /** The defaults of {@code master.yaml}: 1000 pending, unlimited minions, 1000 rejected, a 5 s reconnect grace. */
    public static ZkKeyStoreOptions of(Path pkiDir, KeyPair masterKeyPair, AuditLog auditLog, Clock clock) {
        return new ZkKeyStoreOptions(pkiDir, masterKeyPair, auditLog, clock, 1000, 0, 1000, RECONNECT_GRACE);
    }

    /** These options with {@code grace} as the reconnect grace. */
    public ZkKeyStoreOptions withReconnectGrace(Duration grace) {
        return new ZkKeyStoreOptions(
                pkiDir, masterKeyPair, auditLog, clock, maxPending, maxMinions, maxRejected, grace);
    }
}
