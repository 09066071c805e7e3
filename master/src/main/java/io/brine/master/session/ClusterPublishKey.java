package io.brine.master.session;

import io.brine.cluster.ZkPublishGeneration;
import io.brine.cluster.ZkPublishGeneration.Shared;
import java.io.IOException;
import java.util.function.Consumer;

/** {@link SharedPublishKey} in ZooKeeper ({@link ZkPublishGeneration}: the key wrapped for the master key). */
public final class ClusterPublishKey implements SharedPublishKey {

    private final ZkPublishGeneration generations;

    public ClusterPublishKey(ZkPublishGeneration generations) {
        this.generations = generations;
    }

    @Override
    public PublishKeyring.Generation join(PublishKeyring.Generation own, Consumer<PublishKeyring.Generation> onNewer)
            throws IOException {
        Shared agreed = generations.join(
                new Shared(own.number(), own.key()),
                (number, key) -> onNewer.accept(new PublishKeyring.Generation(number, key)));
        return agreed.number() == own.number() ? own : new PublishKeyring.Generation(agreed.number(), agreed.key());
    }

    @Override
    public PublishKeyring.Generation next(PublishKeyring.Generation current, PublishKeyring.Generation candidate)
            throws IOException {
        Shared agreed = generations.next(current.number(), new Shared(candidate.number(), candidate.key()));
        return agreed.number() == candidate.number() && agreed.key() == candidate.key()
                ? candidate
                : new PublishKeyring.Generation(agreed.number(), agreed.key());
    }

    @Override
    public void close() {
        generations.close();
    }
}
