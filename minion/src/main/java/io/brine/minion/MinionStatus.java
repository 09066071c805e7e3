package io.brine.minion;

import java.time.Instant;

/**
 * The minion's state as written to its status file ({@code cachedir/status.json}) for admins and scripts.
 *
 * @param nextAttempt        when it will ask the master again, for states that retry; null otherwise
 * @param stalePublications  authentic publications refused since the start as older than {@code publish_max_age}
 *                           (withheld on the way, or clocks apart)
 * @param resumableUntil     when the resumption ticket the minion holds expires (PROTOCOL.md 8.9): set once the
 *                           ticket is stored, so a master restart before then costs no RSA operation; null when none
 */
public record MinionStatus(
        String id,
        MinionState state,
        String reason,
        Instant since,
        Instant nextAttempt,
        String fingerprint,
        String masterFingerprint,
        Long generation,
        long stalePublications,
        Instant resumableUntil) {}
