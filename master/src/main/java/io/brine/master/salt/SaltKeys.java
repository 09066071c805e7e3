package io.brine.master.salt;

import io.brine.protocol.salt.Crypticle;
import io.brine.store.keys.KeyChange;
import io.brine.store.keys.KeyState;
import io.brine.protocol.salt.SaltAuthResponder;
import java.security.KeyPair;
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

    private final KeyPair master;
    private final IntSupplier publishPort;
    private final Map<String, Crypticle> sessions = new ConcurrentHashMap<>();
    private volatile SaltAuthResponder responder;

    /** @param publishPort the publish port accepted replies name, read once the transport is bound */
    public SaltKeys(KeyPair master, IntSupplier publishPort) {
        this.master = master;
        this.publishPort = publishPort;
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

    /** A key store change: a key that leaves the accepted state takes its session key along. */
    public void onKeyChange(KeyChange change) {
        boolean wasAccepted = change.from().filter(s -> s == KeyState.ACCEPTED).isPresent();
        boolean stillAccepted = change.to().filter(s -> s == KeyState.ACCEPTED).isPresent();
        if (wasAccepted && !stillAccepted) {
            drop(change.id());
        }
    }

    /** Ids of the Salt minions holding a session key now. */
    public java.util.Set<String> ids() {
        return java.util.Set.copyOf(sessions.keySet());
    }
}
