package io.brine.master.salt;

import io.brine.protocol.salt.Crypticle;
import io.brine.protocol.salt.SaltAuthResponder;
import io.brine.protocol.salt.SaltPubkeySignature;
import io.brine.store.keys.KeyChange;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.keys.MinionKind;
import java.security.KeyPair;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * The symmetric keys the master holds for Salt minions (SALT.md §4): the shared {@code aes} key, separate from
 * brine's publish key but rotated with it, and one {@code session} key per accepted Salt minion, dropped with its
 * key. A Salt minion learns a new {@code aes} key only by signing in again. Who is a Salt minion is the key store's
 * to say ({@link KeyStore#kind}), never a session's: a Salt sign-in proves nothing about the private key.
 */
public final class SaltKeys {

    private final Supplier<KeyPair> master;
    private final Supplier<Optional<SaltPubkeySignature>> pubSig;
    private final IntSupplier publishPort;
    private final Map<String, Crypticle> sessions = new ConcurrentHashMap<>();
    private final KeyStore keyStore;
    private volatile SaltAuthResponder responder;

    /**
     * @param master the master key pair in force, read for each new {@code aes} generation ({@link #rotate} after a
     *               master key rotation, so that Salt minions sign in again and see the new key)
     * @param pubSig Salt's {@code pub_sig} of that key ({@code master_sign_pubkey}), or empty
     * @param publishPort the publish port accepted replies name, read once the transport is bound
     * @param keyStore whose {@linkplain KeyStore#kind kinds} say which minions are Salt minions
     */
    public SaltKeys(
            Supplier<KeyPair> master,
            Supplier<Optional<SaltPubkeySignature>> pubSig,
            IntSupplier publishPort,
            KeyStore keyStore) {
        this.master = master;
        this.pubSig = pubSig;
        this.publishPort = publishPort;
        this.keyStore = keyStore;
    }

    /** The responder of the current {@code aes} generation (made on first use: the port is known by then). */
    public SaltAuthResponder responder() {
        SaltAuthResponder current = responder;
        if (current == null) {
            synchronized (this) {
                if (responder == null) {
                    responder = new SaltAuthResponder(
                            master.get(), Crypticle.generate(), publishPort.getAsInt(), pubSig.get());
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

    /**
     * A new {@code aes} key: minions that still hold the old one fail its MAC and sign in again. Made on next use, so
     * a rotation before the transport is bound (a master joining a cluster installs its publish generation first)
     * does not ask for the port.
     */
    public synchronized void rotate() {
        responder = null;
    }

    /**
     * Salt's {@code pub_sig} of the key in force changed without a rotation ({@code brine-key
     * --master-pubkey-signature}): answers from now on carry it, with the same {@code aes} key, so no minion has to
     * sign in again.
     */
    public synchronized void pubSigChanged() {
        if (responder != null) {
            responder = new SaltAuthResponder(master.get(), responder.aes(), publishPort.getAsInt(), pubSig.get());
        }
    }

    /** The session key of an accepted Salt minion (the store filed its key as a Salt minion's), made on first use. */
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
     * shared {@code aes} key too. (Its kind goes with the key, in the store.)
     */
    public void onKeyChange(KeyChange change) {
        boolean wasAccepted = change.from().filter(s -> s == KeyState.ACCEPTED).isPresent();
        boolean stillAccepted = change.to().filter(s -> s == KeyState.ACCEPTED).isPresent();
        if (wasAccepted && !stillAccepted && drop(change.id())) {
            // At once, not when brine's publish key rotates a moment later on the master's timer: a Salt SUB is
            // honoured by address, so the removed minion may share one with minions still served.
            rotate();
        }
    }

    /**
     * A Salt minion: its key was filed by Salt's {@code _auth}, as the key store holds it (so publications reach it
     * in Salt's envelope after a master restart, before it signs in again). Never true for a brine minion's key,
     * whatever signed in through Salt's protocol.
     */
    public boolean isSalt(String id) {
        return keyStore.kind(id) == MinionKind.SALT;
    }

    /** Ids of the Salt minions holding a session key now. */
    public Set<String> ids() {
        return Set.copyOf(sessions.keySet());
    }
}
