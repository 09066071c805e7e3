package io.brine.master.session;

import java.io.IOException;
import java.util.function.Consumer;

/**
 * The publish key generation a cluster of masters shares (Salt's {@code aes} on a shared cluster): each master
 * publishes under it, so a minion moving between masters keeps reading. {@link #alone} for a master alone: its own
 * generations are the only ones.
 */
public interface SharedPublishKey extends AutoCloseable {

    /**
     * The cluster's generation, or {@code own} once it became the cluster's (the first master); then calls
     * {@code onNewer} with each generation another master makes.
     */
    PublishKeyring.Generation join(PublishKeyring.Generation own, Consumer<PublishKeyring.Generation> onNewer)
            throws IOException;

    /**
     * The generation after {@code current}: {@code candidate} when this master's rotation wins, or the one another
     * master made meanwhile (for the same reason: every master hears every key removal).
     */
    PublishKeyring.Generation next(PublishKeyring.Generation current, PublishKeyring.Generation candidate)
            throws IOException;

    @Override
    void close();

    /** A master alone: it keeps its own generation, and each rotation's candidate wins. */
    static SharedPublishKey alone() {
        return new SharedPublishKey() {
            @Override
            public PublishKeyring.Generation join(
                    PublishKeyring.Generation own, Consumer<PublishKeyring.Generation> onNewer) {
                return own;
            }

            @Override
            public PublishKeyring.Generation next(
                    PublishKeyring.Generation current, PublishKeyring.Generation candidate) {
                return candidate;
            }

            @Override
            public void close() {}
        };
    }
}
