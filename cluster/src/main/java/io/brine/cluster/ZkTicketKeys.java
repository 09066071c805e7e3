package io.brine.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.Rsa;
import io.brine.protocol.crypto.SessionKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's resumption ticket keys, {@code /ticket_keys}: the key that seals new tickets and the one it replaced,
 * each wrapped (RSA-OAEP) with the cluster's master public key as the publish key is, and the whole signed with the
 * master private key. Wrapping keeps the keys from whoever reads the ensemble; the signature keeps out keys of
 * anybody else's making, since whoever can write the znode (anyone who reaches the ensemble under {@code
 * insecure_open_acl}) could otherwise plant a key and forge tickets for any minion. A node that does not verify or
 * unwrap is not used ({@link Unusable}). A rotation is a versioned write: of masters rotating at once one wins and
 * the others adopt its keys.
 */
public final class ZkTicketKeys implements AutoCloseable {

    static final String PATH = "/ticket_keys";
    /** What the signature covers says what it is for: no other signed blob of the masters' passes for ticket keys. */
    private static final String PURPOSE = "brine-ticket-keys 1";
    /** The current key and the one it replaced. */
    public static final int MAX_KEYS = 2;

    static final int MAX_NODE_BYTES = 8192;
    private static final int ID_LENGTH = 8;

    private static final Logger log = LoggerFactory.getLogger(ZkTicketKeys.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One ticket key: its id, its key (unwrapped, in this master's memory only) and when it began sealing. */
    public record Stored(byte[] id, SessionKey key, long createdMs) {
        @Override
        public String toString() {
            return "Stored[" + HexFormat.of().formatHex(id) + "]";
        }
    }

    /** The znode holds something that is not the masters' ticket keys: not signed by the master key, damaged. */
    public static final class Unusable extends IOException {
        Unusable(String message) {
            super(message);
        }
    }

    private final CuratorFramework client;
    private final KeyPair masterKeys;
    private CuratorCache cache;

    public ZkTicketKeys(CuratorFramework client, KeyPair masterKeys) {
        this.client = client;
        this.masterKeys = masterKeys;
    }

    /**
     * The cluster's keys after this master's write: {@code candidate} when the znode's first key is {@code basedOn}
     * ({@code null}: when there is no usable znode), or the keys another master wrote meanwhile. An unusable znode is
     * replaced (an ERROR says why).
     */
    public List<Stored> replace(byte[] basedOn, List<Stored> candidate) throws IOException {
        if (candidate.isEmpty() || candidate.size() > MAX_KEYS) {
            throw new IllegalArgumentException(candidate.size() + " ticket keys");
        }
        return ZkVersionedNode.replace(
                client,
                PATH,
                "the cluster's ticket keys",
                data -> {
                    try {
                        List<Stored> stored = decode(data);
                        return basedOn == null || !Arrays.equals(stored.get(0).id(), basedOn)
                                ? Optional.of(stored)
                                : Optional.empty();
                    } catch (Unusable e) {
                        log.error(
                                "Cluster ticket keys not used: {}. This master's replace them: minions holding tickets "
                                        + "authenticate in full once",
                                e.getMessage());
                        return Optional.empty();
                    }
                },
                candidate,
                () -> encode(candidate));
    }

    /**
     * Calls {@code onChange} (on Curator's thread) with the keys each write to the znode leaves, or {@code
     * onUnusable} with why a write that does not verify or unwrap is not used (which whoever may write the znode can
     * repeat at will: the caller logs it at a bounded rate).
     */
    public void watch(Consumer<List<Stored>> onChange, Consumer<String> onUnusable) {
        cache = CuratorCache.build(client, PATH, CuratorCache.Options.SINGLE_NODE_CACHE);
        cache.listenable()
                .addListener(CuratorCacheListener.builder()
                        .forCreatesAndChanges((old, node) -> {
                            try {
                                onChange.accept(decode(node.getData()));
                            } catch (Unusable e) {
                                onUnusable.accept(e.getMessage());
                            }
                        })
                        .build());
        cache.start();
    }

    byte[] encode(List<Stored> keys) {
        ObjectNode body = JSON.createObjectNode().put("purpose", PURPOSE);
        ArrayNode list = body.putArray("keys");
        for (Stored key : keys) {
            byte[] bytes = key.key().bytes();
            try {
                list.addObject()
                        .put("id", HexFormat.of().formatHex(key.id()))
                        .put("created", key.createdMs())
                        .put("wrapped", Base64.getEncoder().encodeToString(Rsa.wrap(masterKeys.getPublic(), bytes)));
            } finally {
                Arrays.fill(bytes, (byte) 0);
            }
        }
        byte[] signed = body.toString().getBytes(StandardCharsets.UTF_8);
        return JSON.createObjectNode()
                .put("body", Base64.getEncoder().encodeToString(signed))
                .put("signature", Base64.getEncoder().encodeToString(Rsa.sign(masterKeys.getPrivate(), signed)))
                .toString()
                .getBytes(StandardCharsets.UTF_8);
    }

    /** The keys, once the signature verifies and every key unwraps; else {@link Unusable}, saying why. */
    List<Stored> decode(byte[] data) throws Unusable {
        if (data == null || data.length > MAX_NODE_BYTES) {
            throw new Unusable(
                    PATH + " holds " + (data == null ? "nothing" : data.length + " bytes, over " + MAX_NODE_BYTES));
        }
        byte[] signed;
        JsonNode body;
        try {
            JsonNode node = JSON.readTree(data);
            signed = Base64.getDecoder().decode(node.path("body").asText(""));
            byte[] signature = Base64.getDecoder().decode(node.path("signature").asText(""));
            if (!Rsa.verify(masterKeys.getPublic(), signed, signature)) {
                throw new Unusable(PATH + " is not signed by this master key (written by someone else, or is the "
                        + "same master key pair not installed on every master?)");
            }
            body = JSON.readTree(signed);
        } catch (Unusable e) {
            throw e;
        } catch (IOException | IllegalArgumentException e) {
            throw new Unusable(PATH + " is damaged: " + e.getMessage());
        }
        if (!PURPOSE.equals(body.path("purpose").asText())
                || !body.path("keys").isArray()
                || body.path("keys").isEmpty()
                || body.path("keys").size() > MAX_KEYS) {
            throw new Unusable(PATH + " does not hold 1 to " + MAX_KEYS + " ticket keys");
        }
        List<Stored> keys = new ArrayList<>();
        for (JsonNode key : body.path("keys")) {
            try {
                byte[] id = HexFormat.of().parseHex(key.path("id").asText(""));
                if (id.length != ID_LENGTH || !key.path("created").canConvertToLong()) {
                    throw new Unusable(PATH + " holds a damaged ticket key");
                }
                byte[] unwrapped = Rsa.unwrap(
                        masterKeys.getPrivate(),
                        Base64.getDecoder().decode(key.path("wrapped").asText("")));
                try {
                    keys.add(new Stored(
                            id, SessionKey.of(unwrapped), key.path("created").asLong()));
                } finally {
                    Arrays.fill(unwrapped, (byte) 0);
                }
            } catch (CryptoException | IllegalArgumentException e) {
                throw new Unusable(
                        PATH + " holds a ticket key that does not unwrap with this master's key: " + e.getMessage());
            }
        }
        return keys;
    }

    @Override
    public void close() {
        if (cache != null) {
            cache.close();
        }
    }
}
