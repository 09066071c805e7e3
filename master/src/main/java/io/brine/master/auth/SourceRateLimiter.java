package io.brine.master.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;

/**
 * A token bucket per source address for the unauthenticated path (auth requests, unknown-session frames): each
 * source may spend {@code burst} at once and then {@code perSecond}. Past it, a source has a second bucket of the
 * same size for the signed "try later" answers to its auth requests (PROTOCOL.md 8.1 step 3), so that many minions
 * behind one address are told when to ask again instead of waiting out {@code auth_timeout}; past both, nothing. The
 * table of sources is bounded, so a flood of spoofed sources costs memory only up to that bound.
 */
public final class SourceRateLimiter {

    private final double perSecond;
    private final double burst;
    private final Ticker ticker;
    private final Cache<String, Bucket> buckets;

    public SourceRateLimiter(double perSecond, int burst, int maxSources, Ticker ticker) {
        if (perSecond <= 0 || burst < 1) {
            throw new IllegalArgumentException("rate and burst must be positive");
        }
        this.perSecond = perSecond;
        this.burst = burst;
        this.ticker = ticker;
        // A bucket idle long enough to refill completely is the same as no bucket.
        long refillNanos = (long) Math.ceil(burst / perSecond * 1e9);
        this.buckets = Caffeine.newBuilder()
                .maximumSize(maxSources)
                .expireAfterAccess(Duration.ofNanos(Math.max(refillNanos, 1_000_000_000L)))
                .ticker(ticker)
                .build();
    }

    /** Takes one token for {@code source}; false when the source is over its rate. */
    public boolean tryAcquire(String source) {
        Bucket bucket = buckets.get(source, s -> new Bucket(burst, ticker.read()));
        synchronized (bucket) {
            long now = ticker.read();
            bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.lastNanos) / 1e9 * perSecond);
            bucket.lastNanos = now;
            if (bucket.tokens >= 1) {
                bucket.tokens -= 1;
                return true;
            }
            return false;
        }
    }

    /**
     * For a request {@link #tryAcquire} refused: takes one of {@code source}'s "try later" answers and returns the
     * seconds after which to ask again (at least 1), spread over the refill so that the askers told at once do not
     * all come back in the same second; -1 when those answers are spent too (then the request gets none).
     */
    public int tryLater(String source) {
        Bucket bucket = buckets.get(source, s -> new Bucket(burst, ticker.read()));
        synchronized (bucket) {
            long now = ticker.read();
            bucket.laterTokens = Math.min(burst, bucket.laterTokens + (now - bucket.laterNanos) / 1e9 * perSecond);
            bucket.laterNanos = now;
            if (bucket.laterTokens < 1) {
                return -1;
            }
            bucket.laterTokens -= 1;
            // The askers told before this one (within the bucket) take the tokens of the first seconds.
            return (int) Math.max(1, Math.ceil((burst - bucket.laterTokens) / perSecond));
        }
    }

    private static final class Bucket {
        double tokens;
        long lastNanos;
        double laterTokens;
        long laterNanos;

        Bucket(double tokens, long lastNanos) {
            this.tokens = tokens;
            this.lastNanos = lastNanos;
            this.laterTokens = tokens;
            this.laterNanos = lastNanos;
        }
    }
}
