package io.brine.master.salt;

import io.brine.protocol.salt.Crypticle;
import io.brine.store.keys.KeyChange;
import io.brine.store.keys.KeyState;
import io.brine.protocol.salt.SaltAuthResponder;
import io.brine.store.keys.SaltMarks;
import java.io.IOException;
import java.security.KeyPair;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;

/**
 * The symmetric keys the master holds for Salt minions (SALT.md §4): the shared {@code aes} key, separate from
 * brine's publish key but rotated with it, and one {@code session} key per accepted Salt minion, dropped with its
 * key. A Salt minion learns a new {@code aes} key only by signing in again.
 */
public final class SaltKeys {

    private static final Logger LOG = LoggerFactory.getLogger(SaltKeys.class);

    private final KeyPair master;
    private final IntSupplier publishPort;
    private final Map<String, Crypticle> sessions = new ConcurrentHashMap<>();
    private final SaltMarks marks;
    /** The ids {@link #marks} holds, read at start and kept here as they change. */
    private final Set<String> marked = ConcurrentHashMap.newKeySet();
    private volatile SaltAuthResponder responder;

    /** @param publishPort the publish port accepted replies name, read once the transport is bound */
    public SaltKeys(KeyPair master, IntSupplier publishPort) {
        this(master, publishPort, null);
    }

    /** @param marks where Salt minions are marked as such ({@code pki_dir/salt_minions}); null for none */
    public SaltKeys(KeyPair master, IntSupplier publishPort, SaltMarks marks) {
        this.master = master;
        this.publishPort = publishPort;
        this.marks = marks;
        if (marks != null) {
            marked.addAll(marks.ids());
        }
    }

    /** The responder of the current {@code aes} generation (made on first use: the port is known by then). */
    public SaltAuthResponder responder() {
        SaltAuthResponder current = responder;
        if (current == null) {
            synchronized (this) {
                if (responder == null) {
                    responder = new SaltAuthResponder(master, Crypticle.generate(), publishPort.getAsInt());
                }
                current = responder;
            }
        }
        return current;
    }

    /** The current {@code aes} key: what publications to Salt minions are sealed with. */
    public Crypticle aes() {
        return responder().aes();
    }

    /** A new {@code aes} key: minions that still hold the old one fail its MAC and sign in again. */
    public synchronized void rotate() {
        responder = new SaltAuthResponder(master, Crypticle.generate(), publishPort.getAsInt());
    }

    /** The session key of an accepted minion, made when it first signs in. */
    public Crypticle sessionFor(String id) {
        return sessions.computeIfAbsent(id, unused -> Crypticle.generate());
    }

    /** The session key of {@code id}, if it signed in since it was last removed. */
    public Optional<Crypticle> session(String id) {
        return Optional.ofNullable(sessions.get(id));
    }

    /** The minion's key left the accepted state: its session key goes with it. */
    public boolean drop(String id) {
        return sessions.remove(id) != null;
    }

    /**
     * A key store change: a key that leaves the accepted state takes its session key along, and a Salt minion's the
     * shared {@code aes} key too; one deleted from every state takes its Salt mark.
     */
    public void onKeyChange(KeyChange change) {
        boolean wasAccepted = change.from().filter(s -> s == KeyState.ACCEPTED).isPresent();
        boolean stillAccepted = change.to().filter(s -> s == KeyState.ACCEPTED).isPresent();
        if (wasAccepted && !stillAccepted) {
            if (isSalt(change.id())) {
                // At once, not when brine's publish key rotates a moment later on the master's timer: a Salt SUB is
                // honoured by address, so the removed minion may share one with minions still served.
                rotate();
            }
            drop(change.id());
        }
        if (change.to().isEmpty() && marked.remove(change.id()) && marks != null) {
            try {
                marks.unmark(change.id());
            } catch (IOException e) {
                LOG.warn("Salt minion {}: its mark in {} not removed: {}", change.id(), SaltMarks.DIRECTORY,
                        e.getMessage());
            }
        }
    }

    /** {@code id} offered its key through Salt's protocol: marked, for brine-key and for a restarted master. */
    public void mark(String id) {
        if (!marked.add(id) || marks == null) {
            return;
        }
        try {
            marks.mark(id);
        } catch (IOException e) {
            LOG.warn("Salt minion {}: not marked in {}: {}", id, SaltMarks.DIRECTORY, e.getMessage());
        }
    }

    /**
     * A Salt minion: one signed in since the master started, or marked when it offered its key (so publications
     * reach it in Salt's envelope after a master restart, before it signs in again).
     */
    public boolean isSalt(String id) {
        return sessions.containsKey(id) || marked.contains(id);
    }

    /** Ids of the Salt minions holding a session key now. */
    public java.util.Set<String> ids() {
        return java.util.Set.copyOf(sessions.keySet());
    }
}
