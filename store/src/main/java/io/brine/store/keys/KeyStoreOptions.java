package io.brine.store.keys;

import com.github.benmanes.caffeine.cache.Ticker;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.store.audit.AuditLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How to open a {@link FileKeyStore}; immutable, validated once by {@link Builder#build()}.
 *
 * @param pkiDir         the pki dir ({@code pki_dir})
 * @param auditLog       where changes are audited, owned by the caller (the store never closes it);
 *                       {@link AuditLog#none()} for none
 * @param keysize        bits of a newly generated master key
 * @param maxPending     most keys in {@code minions_pre/} an offer may lead to; 0 = unlimited
 * @param maxMinions     most accepted keys an offer or accept may lead to; 0 = unlimited
 * @param maxRejected    most keys in {@code minions_rejected/} an autoreject may lead to; 0 = unlimited
 * @param masterKey      load the master key pair, creating it on first use (the daemon); false for brine-key
 * @param createPkiDir   create a missing pki dir; when false, a missing pki dir is an error
 * @param pollInterval   how often to look for changes by other processes; zero for never (brine-key)
 * @param rescanInterval how often to stat every file and read those changed, to notice edits by hand in place
 * @param ticker         the monotonic time {@code rescanInterval} is measured on (tests move it by hand)
 */
public record KeyStoreOptions(
        Path pkiDir,
        AuditLog auditLog,
        int keysize,
        int maxPending,
        int maxMinions,
        int maxRejected,
        boolean masterKey,
        boolean createPkiDir,
        Duration pollInterval,
        Duration rescanInterval,
        Ticker ticker) {

    public static final int DEFAULT_MAX_PENDING = 1000;
    public static final int DEFAULT_MAX_REJECTED = 1000;
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(200);
    public static final Duration DEFAULT_RESCAN_INTERVAL = Duration.ofSeconds(10);

    public static Builder builder(Path pkiDir) {
        return new Builder(pkiDir);
    }

    public static final class Builder {
        private final Path pkiDir;
        private AuditLog auditLog = AuditLog.none();
        private int keysize = RsaKeys.DEFAULT_BITS;
        private int maxPending = DEFAULT_MAX_PENDING;
        private int maxMinions;
        private int maxRejected = DEFAULT_MAX_REJECTED;
        private boolean masterKey = true;
        private boolean createPkiDir = true;
        private Duration pollInterval = DEFAULT_POLL_INTERVAL;
        private Duration rescanInterval = DEFAULT_RESCAN_INTERVAL;
        private Ticker ticker = Ticker.systemTicker();

        private Builder(Path pkiDir) {
            this.pkiDir = Objects.requireNonNull(pkiDir, "pkiDir");
        }

        public Builder auditLog(AuditLog auditLog) {
            this.auditLog = Objects.requireNonNull(auditLog, "auditLog");
            return this;
        }

        public Builder keysize(int keysize) {
            this.keysize = keysize;
            return this;
        }

        public Builder maxPending(int maxPending) {
            this.maxPending = maxPending;
            return this;
        }

        public Builder maxMinions(int maxMinions) {
            this.maxMinions = maxMinions;
            return this;
        }

        public Builder maxRejected(int maxRejected) {
            this.maxRejected = maxRejected;
            return this;
        }

        public Builder masterKey(boolean masterKey) {
            this.masterKey = masterKey;
            return this;
        }

        public Builder createPkiDir(boolean createPkiDir) {
            this.createPkiDir = createPkiDir;
            return this;
        }

        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
            return this;
        }

        public Builder rescanInterval(Duration rescanInterval) {
            this.rescanInterval = rescanInterval;
            return this;
        }

        public Builder ticker(Ticker ticker) {
            this.ticker = ticker;
            return this;
        }

        /** @throws IllegalArgumentException naming every bad value */
        public KeyStoreOptions build() {
            StringBuilder errors = new StringBuilder();
            try {
                RsaKeys.checkGenerateSize(keysize);
            } catch (IllegalArgumentException e) {
                errors.append("; ").append(e.getMessage());
            }
            if (maxPending < 0) {
                errors.append("; maxPending must be >= 0");
            }
            if (maxMinions < 0) {
                errors.append("; maxMinions must be >= 0");
            }
            if (maxRejected < 0) {
                errors.append("; maxRejected must be >= 0");
            }
            if (pollInterval == null || pollInterval.isNegative()) {
                errors.append("; pollInterval must be >= 0");
            }
            if (rescanInterval == null || rescanInterval.isNegative() || rescanInterval.isZero()) {
                errors.append("; rescanInterval must be > 0");
            }
            if (ticker == null) {
                errors.append("; ticker is required");
            }
            if (errors.length() > 0) {
                throw new IllegalArgumentException("invalid key store options: " + errors.substring(2));
            }
            return new KeyStoreOptions(
                    pkiDir,
                    auditLog,
                    keysize,
                    maxPending,
                    maxMinions,
                    maxRejected,
                    masterKey,
                    createPkiDir,
                    pollInterval,
                    rescanInterval,
                    ticker);
        }
    }
}
