package io.brine.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.SessionKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.util.Base64;
import java.util.Optional;
import java.util.function.BiConsumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's one publish key generation, {@code /publish}: its number and its key wrapped (RSA-OAEP) with the
 * cluster's master public key, which only the masters can unwrap. So every master publishes under the same
 * generation and a minion that moves to another master keeps reading; the key itself is never in ZooKeeper
 * unwrapped. A rotation is a versioned write: of masters rotating at once (each heard the same key removal) one
 * wins and the others adopt its generation instead of making another.
 */
public final class ZkPublishGeneration implements AutoCloseable {

    static final String PATH = "/publish";

    private static final Logger log = LoggerFactory.getLogger(ZkPublishGeneration.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One generation: its number and (unwrapped, in this master's memory only) key. */
    public record Shared(long number, SessionKey key) {
        @Override
        public String toString() {
            return "Shared[" + number + "]";
        }
    }

    private final CuratorFramework client;
    private final KeyPair masterKeys;
    private CuratorCache cache;

    public ZkPublishGeneration(CuratorFramework client, KeyPair masterKeys) {
        this.client = client;
        this.masterKeys = masterKeys;
    }

    /**
     * The cluster's generation if there is one newer than {@code own}, else {@code own} made the cluster's (the
     * first master to start). Then calls {@code onNewer} (on Curator's thread) with every newer generation another
     * master makes.
     */
    public Shared join(Shared own, BiConsumer<Long, SessionKey> onNewer) throws IOException {
        Shared agreed = next(Long.MIN_VALUE, own);
        cache = CuratorCache.build(client, PATH, CuratorCache.Options.SINGLE_NODE_CACHE);
        cache.listenable()
                .addListener(CuratorCacheListener.builder()
                        .forCreatesAndChanges((old, node) -> {
                            try {
                                Shared heard = decode(node.getData());
                                onNewer.accept(heard.number(), heard.key());
                            } catch (IOException e) {
                                log.error("Cluster publish key generation unreadable: {}", e.getMessage());
                            }
                        })
                        .build());
        cache.start();
        return agreed;
    }

    /**
     * The generation after {@code basedOn}: {@code candidate} when this master's write wins, or the newer one
     * another master wrote meanwhile (then {@code candidate} is wiped).
     */
    public Shared next(long basedOn, Shared candidate) throws IOException {
        Shared written = ZkVersionedNode.replace(
                client,
                PATH,
                "the cluster's publish key generation",
                data -> {
                    Shared stored = decode(data);
                    if (stored.number() > basedOn) {
                        return Optional.of(stored);
                    }
                    stored.key().wipe();
                    return Optional.empty();
                },
                candidate,
                () -> encode(candidate));
        if (written != candidate) {
            candidate.key().wipe();
        }
        return written;
    }

    private byte[] encode(Shared generation) {
        byte[] wrapped = Rsa.wrap(masterKeys.getPublic(), generation.key().bytes());
        return JSON.createObjectNode()
                .put("generation", generation.number())
                .put("wrapped", Base64.getEncoder().encodeToString(wrapped))
                .toString()
                .getBytes(StandardCharsets.UTF_8);
    }

    private Shared decode(byte[] data) throws IOException {
        try {
            JsonNode node = JSON.readTree(data);
            byte[] key = Rsa.unwrap(
                    masterKeys.getPrivate(),
                    Base64.getDecoder().decode(node.path("wrapped").asText("")));
            return new Shared(node.path("generation").asLong(), SessionKey.of(key));
        } catch (CryptoException | IllegalArgumentException e) {
            throw new IOException(
                    "the publish key in the cluster does not unwrap with this master's key (is the"
                            + " same master key pair installed on every master?): " + e.getMessage(),
                    e);
        }
    }

    /** The generation the cluster holds now, if any. */
    public Optional<Shared> current() throws IOException {
        try {
            return Optional.of(decode(client.getData().forPath(PATH)));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
    }

    @Override
    public void close() {
        if (cache != null) {
            cache.close();
        }
    }
}
