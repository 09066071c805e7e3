package io.brine.store.keys;

import java.io.IOException;
import java.util.List;

/**
 * A batch of key rotation asks ({@link KeyStore#askRotation}) stopped part way, and says exactly where each id stands:
 * {@link #results()} for the ids decided and, when {@code DONE}, recorded and audited as any ask is; {@link
 * #unknown()} for ids whose asks were sent or written but may or may not have been recorded (a connection lost
 * during their commit, a directory that could not be forced); {@link #notAsked()} for the ids not asked (the one that
 * failed and those not tried). The message says why it stopped.
 */
public final class IncompleteBatchException extends IOException {

    private final transient List<AdminResult> results;
    private final List<String> unknown;
    private final List<String> notAsked;

    public IncompleteBatchException(
            String message, Throwable cause, List<AdminResult> results, List<String> unknown, List<String> notAsked) {
        super(message, cause);
        this.results = List.copyOf(results);
        this.unknown = List.copyOf(unknown);
        this.notAsked = List.copyOf(notAsked);
    }

    /** The ids whose outcome is known, in the order asked: each as an ask's result. */
    public List<AdminResult> results() {
        return results;
    }

    /** The ids that may or may not have been asked ({@code brine-key -L} shows which were). */
    public List<String> unknown() {
        return unknown;
    }

    /** The ids not asked. */
    public List<String> notAsked() {
        return notAsked;
    }
}
