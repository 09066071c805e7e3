package io.brine.store.keys;

import io.brine.daemon.config.KeyRotationPolicy;
import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.store.audit.AuditEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The minion keys the master trusts, in DESIGN.md §2's states, and its own key pair. {@link FileKeyStore} keeps them
 * in Salt's pki dir layout; a second backend (e.g. a cluster's) is another implementation of this interface.
 *
 * <p>Reads answer from memory. Every change, made here or by another process (brine-key), reaches the
 * {@linkplain #addListener listeners}. State changes are audited with the actor that made them.
 */
public interface KeyStore extends AutoCloseable {

    /** The actor of changes the master makes by itself (offers, policy promotions). */
    String MASTER_ACTOR = "master";

    /**
     * The master's own directory: its key pair and its trust anchors ({@code provisioners/}, {@code publishers/}),
     * whichever backend holds the minion keys.
     */
    Path pkiDir();

    /**
     * The master's key pair.
     *
     * @throws IllegalStateException when the store was opened without it (brine-key)
     */
    KeyPair masterKeyPair();

    /** The master's public key; empty when there is none yet. */
    Optional<RSAPublicKey> masterPublicKey() throws IOException, KeyStoreException;

    // ---------------------------------------------------------------- reads

    /** What the store holds for {@code id} relative to {@code offered}. */
    KeyLookup lookup(String id, RSAPublicKey offered);

    /** The accepted key of {@code id}. */
    Optional<RSAPublicKey> acceptedKey(String id);

    /** The ids with an accepted key, sorted. */
    Set<String> acceptedIds();

    /** Every valid key and every problem, caught up with what other processes changed. */
    KeyListing list();

    /**
     * When the oldest accepted key was filed (accepted, or last rotated): the key file's modification time in the
     * file store; empty when no key is accepted, or when the backend does not know (a cluster).
     */
    default Optional<Instant> oldestAcceptedSince() {
        return Optional.empty();
    }

    /** Rereads everything now. */
    void refresh() throws IOException;

    // ---------------------------------------------------------------- the master's offer

    /**
     * What the acceptance policies conclude about an offered key. Asked by {@link #offer} at most once, before any
     * lock is taken, and only when the id is unknown or pending with the offered key: in every other state the
     * answer cannot change what the store does, so a single-use grant or token is never spent on it.
     */
    @FunctionalInterface
    interface Policies {
        PolicyVerdict decide(KeyLookup current);
    }

    /**
     * Applies DESIGN.md §2's table to a key offered by a minion and answers with what it stored; changes are
     * audited as actor {@value #MASTER_ACTOR}. This is the store's one read for an auth: the answer carries the
     * stored key and whether it stays current ({@link Offer#current()}).
     *
     * @throws UncheckedIOException when the store cannot be read or written (the caller must refuse the minion)
     * @throws IllegalArgumentException for a key brine does not accept (under 2048 bits, ...)
     */
    default Offer offer(String id, RSAPublicKey offered, Policies policies) {
        return offer(id, offered, MinionKind.BRINE, policies);
    }

    /**
     * {@link #offer(String, RSAPublicKey, Policies)} for a minion of {@code kind}. When the id holds a key (pending,
     * accepted or rejected) filed for the other kind, the answer is {@link KeyDecision.OtherKind}: nothing is
     * written and no policy is asked. A key the offer files carries {@code kind}, written in the same atomic step as
     * the key (a minion's kind changes only when an admin deletes its key).
     */
    Offer offer(String id, RSAPublicKey offered, MinionKind kind, Policies policies);

    /**
     * The kind of minion the id's pending, accepted or rejected key was filed for, from memory; {@link
     * MinionKind#BRINE} when the id holds no key. What decides the envelope of its publications.
     */
    MinionKind kind(String id);

    /**
     * The checks every backend's {@link #offer(String, RSAPublicKey, Policies)} makes before it reads anything: a
     * valid id, a key and policies, and the key's shape (a key the store could not read back is never written).
     *
     * @throws IllegalArgumentException for an invalid id or a key brine does not accept, naming the id
     */
    static void checkOffer(String id, RSAPublicKey offered, Policies policies) {
        MinionIds.requireValid(id);
        Objects.requireNonNull(offered, "offered");
        Objects.requireNonNull(policies, "policies");
        try {
            RsaKeys.checkShape(offered);
        } catch (KeyFormatException e) {
            throw new IllegalArgumentException(id + ": " + e.getMessage(), e);
        }
    }

    /**
     * The offered key's factor check, once per offer, before any policy runs; a backend skips it for the key it
     * already holds under the id (checked when it was stored).
     *
     * @throws IllegalArgumentException for a key with a small factor, naming the id
     */
    static void checkFactors(String id, RSAPublicKey offered) {
        try {
            RsaKeys.checkFactors(offered);
        } catch (KeyFormatException e) {
            throw new IllegalArgumentException(id + ": " + e.getMessage(), e);
        }
    }

    /** {@link #offer(String, RSAPublicKey, Policies)} with a verdict known in advance; answers the decision alone. */
    default KeyDecision offer(String id, RSAPublicKey offered, PolicyVerdict verdict) {
        // A verdict given in advance never displaces a pending key: only a grant or token asked about it does.
        return offer(id, offered, current -> current == KeyLookup.PENDING_OTHER ? PolicyVerdict.NONE : verdict)
                .decision();
    }

    // ---------------------------------------------------------------- admin operations

    /** Accepts the pending key of {@code id}; see {@link #accept(String, KeyState, String, String)}. */
    default AdminResult accept(String id, String expectedFingerprint, String actor) {
        return accept(id, KeyState.PENDING, expectedFingerprint, actor);
    }

    /**
     * Moves the key of {@code id} in state {@code from} (pending, rejected or denied) to accepted. When
     * {@code expectedFingerprint} is given (any case, colons optional), the key must have it. A denied key is
     * accepted only when the id holds no other key: a stored key is never replaced.
     *
     * @throws IllegalArgumentException for an invalid id, state or fingerprint
     */
    AdminResult accept(String id, KeyState from, String expectedFingerprint, String actor);

    /** Moves the key of {@code id} in state {@code from} (pending, accepted or denied) to rejected. */
    AdminResult reject(String id, KeyState from, String expectedFingerprint, String actor);

    /**
     * Rejects the key of {@code id} wherever it is, pending or accepted (the master's "revoke"); a rejected id is
     * left as it is.
     */
    AdminResult reject(String id, String expectedFingerprint, String actor);

    /**
     * Deletes every key of {@code id}: its pending, accepted or rejected key, and its denied key. Returns the result
     * for the former, or for the denied key when that was the only one.
     */
    AdminResult delete(String id, String actor);

    /** Deletes the key of {@code id} in state {@code from}. */
    AdminResult delete(String id, KeyState from, String expectedFingerprint, String actor);

    // ---------------------------------------------------------------- a minion's key rotation

    /**
     * Replaces the accepted key {@code oldKey} of brine minion {@code id} by {@code newKey}, as {@link
     * KeyTransitions#planRotation} decides on what the store holds where it commits: in one atomic change (the file
     * store: one rename under the lock; the cluster: one transaction that also moves the fingerprint record), the old
     * key retired for the id (offered again, it is denied) and one audit line {@code key-rotated} naming both
     * fingerprints, as {@code actor}. The caller has verified that the minion holds both keys.
     *
     * @throws IllegalArgumentException for an invalid id or a new key brine does not accept (size, exponent,
     *     encoding, a small factor), naming the id
     * @throws UncheckedIOException when the store cannot be read or written and cannot tell whether the change was
     *     made (a write that failed half way; a cluster whose connection was lost during the commit): the caller
     *     must not answer the minion as refused, since the store may hold the new key now
     */
    RotationDecision rotate(
            String id, RSAPublicKey oldKey, RSAPublicKey newKey, KeyRotationPolicy policy, String actor);

    /**
     * The rotations waiting for an admin ({@code key_rotation: pending}): id to the new key's fingerprint, sorted
     * by id. A backend without pending rotations has none.
     */
    default Map<String, String> pendingRotations() {
        return Map.of();
    }

    /**
     * Accepts the rotation of {@code id} waiting with the new key {@code expectedFingerprint} (required: an admin
     * accepts the key that was shown): the new key replaces the accepted one as {@link #rotate} with {@code allow}
     * would, checked again where it commits (the old key still accepted, the new one held by no other id and not
     * retired), the old key retired, audited {@code key-rotated} as {@code actor}.
     *
     * @throws IllegalArgumentException for an invalid id or fingerprint
     */
    default AdminResult acceptRotation(String id, String expectedFingerprint, String actor) {
        return AdminResult.of(
                id, AdminResult.Status.NOT_FOUND, id + ": no key rotation waits (this key store keeps" + " none)");
    }

    /**
     * Rejects the rotation of {@code id} waiting with the new key {@code expectedFingerprint}: the old key stays
     * accepted, the new one is retired for the id (the minion's next ask is refused and it drops the new key),
     * audited {@code key-rotation-rejected} as {@code actor}.
     */
    default AdminResult rejectRotation(String id, String expectedFingerprint, String actor) {
        return AdminResult.of(
                id, AdminResult.Status.NOT_FOUND, id + ": no key rotation waits (this key store keeps" + " none)");
    }

    /** The checks of {@link #rotate} before anything is read: the arguments and the new key's shape and factors. */
    static void checkRotation(
            String id, RSAPublicKey oldKey, RSAPublicKey newKey, KeyRotationPolicy policy, String actor) {
        Objects.requireNonNull(oldKey, "oldKey");
        Objects.requireNonNull(actor, "actor");
        Objects.requireNonNull(policy, "policy");
        checkOffer(id, newKey, current -> PolicyVerdict.NONE);
        checkFactors(id, newKey);
    }

    /** The audit line of a rotation: the new key's fingerprint, and the old one's in the reason. */
    static AuditEvent rotationEvent(String id, String actor, RotationDecision.Rotated rotated) {
        return AuditEvent.builder("key-rotated", actor)
                .id(id)
                .from(KeyState.ACCEPTED.label())
                .to(KeyState.ACCEPTED.label())
                .fingerprint(rotated.newFingerprint())
                .reason(rotated.reason() + "; old key " + rotated.oldFingerprint() + " retired")
                .build();
    }

    /** The audit line of a rotation filed to wait for an admin. */
    static AuditEvent rotationPendingEvent(String id, String actor, RotationDecision.Pending pending) {
        return AuditEvent.builder("key-rotation-pending", actor)
                .id(id)
                .from(KeyState.ACCEPTED.label())
                .to(KeyState.PENDING.label())
                .fingerprint(pending.newFingerprint())
                .reason(pending.reason() + "; accepted key " + pending.oldFingerprint() + " unchanged")
                .build();
    }

    // ---------------------------------------------------------------- rotations admins ask for

    /**
     * Asks the brine minions {@code ids} to rotate their accepted keys at their next heartbeat ({@code brine-key
     * --rotate-keys}, PROTOCOL.md 6.3): for each, one ask naming its accepted key, audited {@code key-rotation-asked}
     * as {@code actor}. Per id: DONE; UNCHANGED when the same key is asked already (the first ask's time stays);
     * NOT_FOUND without an accepted key; REFUSED for a Salt minion's key (Salt has no such message) or an unreadable
     * one ({@link RotationAsks#decide}, for every backend). The ask is dropped with the key (a delete or a reject);
     * the minion's rotation fulfils it.
     *
     * @throws UncheckedIOException when the store cannot be read or written before anything was asked; caused by an
     *         {@link IncompleteBatchException} when it stopped part way, naming the ids asked, those that may or may
     *         not have been (a cluster's connection lost during a commit) and those not asked
     */
    default List<AdminResult> askRotation(List<String> ids, String actor) {
        throw new UnsupportedOperationException("this key store keeps no key rotation asks");
    }

    /** Every ask, outstanding or done, by id: what {@code brine-key -L} shows. */
    default Map<String, RotationAsks.Ask> rotationAsks() {
        return Map.of();
    }

    /**
     * The fingerprint of {@code id}'s accepted key when an admin asked to rotate it and it still is the accepted key;
     * empty otherwise. From memory, as of the store's last poll (a cluster's: its watch): asked at every heartbeat.
     */
    default Optional<String> rotationAsked(String id) {
        return Optional.empty();
    }

    /** The audit line of an admin's ask to rotate {@code id}'s accepted key {@code fingerprint}. */
    static AuditEvent rotationAskedEvent(String id, String actor, String fingerprint) {
        return AuditEvent.builder("key-rotation-asked", actor)
                .id(id)
                .from(KeyState.ACCEPTED.label())
                .to(KeyState.ACCEPTED.label())
                .fingerprint(fingerprint)
                .reason("the minion is asked to rotate this key at its next heartbeat")
                .build();
    }

    // ---------------------------------------------------------------- rotation requests

    /**
     * Asks the master (in this process or another) to rotate the publish key now, and audits the request.
     *
     * @return how many rotations were asked for, this one included
     * @throws UncheckedIOException when the request cannot be recorded
     */
    long requestRotation(String actor);

    /** How many rotations admins have asked for: 0 when never, -1 when it cannot be read. Cheap enough to poll. */
    long rotationRequests();

    // ---------------------------------------------------------------- change notification

    /**
     * Calls {@code listener} on the store's thread for every change, including those made by other processes.
     * Closing the returned handle removes the listener.
     */
    AutoCloseable addListener(KeyChangeListener listener);

    /**
     * The ids of changes this store made that could not be written to the audit log (a full disk), since the last
     * call; the changes stand. brine-key exits non-zero naming them.
     */
    default List<String> unauditedChanges() {
        return List.of();
    }

    @Override
    void close();
}
