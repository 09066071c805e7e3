package io.brine.store.keys;

import io.brine.daemon.config.KeyRotationPolicy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link KeyStore} that hands every call to a real store and records the name of each read and write of minion
 * keys, so a test can pin how often a caller consults the store. Override a method to make the store misbehave at a
 * chosen moment. Closing it closes the real store.
 */
public class RecordingKeyStore implements KeyStore {

    private final KeyStore delegate;
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private volatile UncheckedIOException offerFailure;

    public RecordingKeyStore(KeyStore delegate) {
        this.delegate = delegate;
    }

    /** The store calls were handed to. */
    public KeyStore delegate() {
        return delegate;
    }

    /** The names of the calls since the last {@link #forget()}, in order. */
    public List<String> calls() {
        return List.copyOf(calls);
    }

    public void forget() {
        calls.clear();
    }

    private void record(String call) {
        calls.add(call);
    }

    @Override
    public Path pkiDir() {
        return delegate.pkiDir();
    }

    @Override
    public KeyPair masterKeyPair() {
        return delegate.masterKeyPair();
    }

    @Override
    public Optional<RSAPublicKey> masterPublicKey() throws IOException, KeyStoreException {
        return delegate.masterPublicKey();
    }

    @Override
    public MinionKind kind(String id) {
        return delegate.kind(id);
    }

    @Override
    public KeyLookup lookup(String id, RSAPublicKey offered) {
        record("lookup");
        return delegate.lookup(id, offered);
    }

    @Override
    public Optional<RSAPublicKey> acceptedKey(String id) {
        record("acceptedKey");
        return delegate.acceptedKey(id);
    }

    @Override
    public Set<String> acceptedIds() {
        record("acceptedIds");
        return delegate.acceptedIds();
    }

    @Override
    public KeyListing list() {
        record("list");
        return delegate.list();
    }

    @Override
    public void refresh() throws IOException {
        record("refresh");
        delegate.refresh();
    }

    /** Makes every offer from now on fail as a store on a full disk does (null: offers work again). */
    public void failOffersWith(UncheckedIOException failure) {
        this.offerFailure = failure;
    }

    @Override
    public Offer offer(String id, RSAPublicKey offered, MinionKind kind, Policies policies) {
        record("offer");
        if (offerFailure != null) {
            throw offerFailure;
        }
        return delegate.offer(id, offered, kind, policies);
    }

    @Override
    public AdminResult accept(String id, KeyState from, String expectedFingerprint, String actor) {
        record("accept");
        return delegate.accept(id, from, expectedFingerprint, actor);
    }

    @Override
    public AdminResult reject(String id, KeyState from, String expectedFingerprint, String actor) {
        record("reject");
        return delegate.reject(id, from, expectedFingerprint, actor);
    }

    @Override
    public AdminResult reject(String id, String expectedFingerprint, String actor) {
        record("reject");
        return delegate.reject(id, expectedFingerprint, actor);
    }

    @Override
    public AdminResult delete(String id, String actor) {
        record("delete");
        return delegate.delete(id, actor);
    }

    @Override
    public AdminResult delete(String id, KeyState from, String expectedFingerprint, String actor) {
        record("delete");
        return delegate.delete(id, from, expectedFingerprint, actor);
    }

    @Override
    public RotationDecision rotate(
            String id, RSAPublicKey oldKey, RSAPublicKey newKey, KeyRotationPolicy policy, String actor) {
        return delegate.rotate(id, oldKey, newKey, policy, actor);
    }

    @Override
    public long requestRotation(String actor) {
        return delegate.requestRotation(actor);
    }

    @Override
    public long rotationRequests() {
        return delegate.rotationRequests();
    }

    @Override
    public AutoCloseable addListener(KeyChangeListener listener) {
        return delegate.addListener(listener);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
