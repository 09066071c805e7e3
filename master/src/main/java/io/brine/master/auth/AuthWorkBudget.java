package io.brine.master.auth;

import io.brine.daemon.WarnInterval;
import io.brine.protocol.MinionIds;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The auth work budget (PROTOCOL.md 8.1, "The auth work budget"): the private-key operations a second the master
 * spends, in total over every source, on answers to peers that have not shown they hold an accepted key. Those are
 * refusals (a bad key, a clock skew, a full store), the answers to unknown, pending, rejected and denied keys (brine's
 * and Salt's), refused publishers, and {@code SessionUnknown}. An answer the budget has no room for is not sent: its
 * asker sees a master too busy to answer, times out and asks again after its back-off, as a brine minion and a stock
 * Salt minion do. The answers to accepted keys (minions and publishers) are never counted against it.
 *
 * <p>A token bucket of {@code perSecond} tokens holding at most {@code perSecond}, refilled by {@code clock}. What
 * it leaves unanswered is counted for the metrics and logged, one WARN per interval with the count.
 */
public final class AuthWorkBudget {

    private static final Logger LOG = LoggerFactory.getLogger(AuthWorkBudget.class);
    /** One WARN per this many milliseconds at most about answers left unsent, and one about bad signatures. */
    static final long WARN_INTERVAL_MS = 60_000;

    private final int perSecond;
    private final Clock clock;
    private double tokens;
    private long lastMs;
    private final AtomicLong spent = new AtomicLong();
    private final AtomicLong unanswered = new AtomicLong();
    private final AtomicLong badSignatures = new AtomicLong();
    private final WarnInterval unansweredWarnings;
    private final WarnInterval badSignatureWarnings;

    /** @param perSecond {@code auth_work_budget}: private-key operations a second, and at most at once */
    public AuthWorkBudget(int perSecond, Clock clock) {
        if (perSecond < 1) {
            throw new IllegalArgumentException("the auth work budget must be at least 1 a second");
        }
        this.perSecond = perSecond;
        this.clock = clock;
        this.tokens = perSecond;
        this.lastMs = clock.millis();
        this.unansweredWarnings = new WarnInterval(clock, WARN_INTERVAL_MS);
        this.badSignatureWarnings = new WarnInterval(clock, WARN_INTERVAL_MS);
    }

    /** Private-key operations a second. */
    public int perSecond() {
        return perSecond;
    }

    /**
     * Takes one private-key operation for an answer to {@code source} about {@code what}; false when the budget is
     * spent, and then the answer is not to be sent (counted and logged here).
     */
    public boolean trySpend(String source, String what) {
        synchronized (this) {
            long now = clock.millis();
            // A clock set back refills nothing; it does not empty the bucket either.
            tokens = Math.min(perSecond, tokens + Math.max(0, now - lastMs) * perSecond / 1000.0);
            lastMs = now;
            if (tokens >= 1) {
                tokens -= 1;
                spent.incrementAndGet();
                return true;
            }
        }
        unanswered.incrementAndGet();
        long suppressed = unansweredWarnings.due();
        if (suppressed >= 0) {
            LOG.warn(
                    "Auth work budget ({} private-key operations a second) spent: {} from {} not answered; the "
                            + "asker times out and asks again{}",
                    perSecond,
                    what,
                    source,
                    suppressed > 0 ? " (and " + suppressed + " more not answered since the last line)" : "");
        }
        return false;
    }

    /**
     * A request not signed by the key it offers, left unanswered: only the key's holder can use an answer, and the
     * holder never sends one (a real minion takes the silence for a timeout and asks again).
     */
    public void badSignature(String source, String id) {
        badSignatures.incrementAndGet();
        long suppressed = badSignatureWarnings.due();
        if (suppressed >= 0) {
            LOG.warn(
                    "Minion {} ({}): auth request not signed by the key it offers: not answered{}",
                    MinionIds.printable(id),
                    source,
                    suppressed > 0 ? " (and " + suppressed + " more since the last line)" : "");
        }
    }

    /** Answers the budget paid for. */
    public long spent() {
        return spent.get();
    }

    /** Answers not sent because the budget was spent. */
    public long unanswered() {
        return unanswered.get();
    }

    /** Auth requests not answered because they were not signed by the key they offer. */
    public long badSignatures() {
        return badSignatures.get();
    }
}
