package io.brine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.cluster.ZkTicketKeys.Stored;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.testing.TestKeys;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The ticket keys' znode: only wrapped keys in it, signed; one key past the bound, one byte past the size, another
 * signer or keys wrapped for another key are not used.
 */
class ZkTicketKeysTest {

    private static final KeyPair MASTER_KEY = TestKeys.pair(200);
    private final ZkTicketKeys keys = new ZkTicketKeys(null, MASTER_KEY);

    private static Stored key(int n) {
        return new Stored(new byte[] {0, 0, 0, 0, 0, 0, 0, (byte) n}, SessionKey.random(), n);
    }

    @Test
    void theKeysAreStoredOnlyWrappedAndReadBackWhole() throws Exception {
        Stored one = key(1);
        byte[] node = keys.encode(List.of(one, key(2)));
        assertThat(new String(node, StandardCharsets.UTF_8))
                .doesNotContain(Base64.getEncoder().encodeToString(one.key().bytes()));
        List<Stored> read = keys.decode(node);
        assertThat(read).hasSize(ZkTicketKeys.MAX_KEYS);
        assertThat(read.get(0).key().bytes()).isEqualTo(one.key().bytes());
        assertThat(read.get(0).createdMs()).isEqualTo(1);
    }

    @Test
    void oneKeyPastTheBoundOrOneBytePastTheNodeLimitIsNotUsed() {
        byte[] three = keys.encode(List.of(key(1), key(2), key(3)));
        assertThatThrownBy(() -> keys.decode(three))
                .isInstanceOf(ZkTicketKeys.Unusable.class)
                .hasMessageContaining("1 to 2 ticket keys");
        assertThatThrownBy(() -> keys.decode(new byte[ZkTicketKeys.MAX_NODE_BYTES]))
                .hasMessageContaining("damaged");
        assertThatThrownBy(() -> keys.decode(new byte[ZkTicketKeys.MAX_NODE_BYTES + 1]))
                .hasMessageContaining("over " + ZkTicketKeys.MAX_NODE_BYTES);
    }

    @Test
    void aNodeSignedWithAnotherKeyIsNotUsed() {
        byte[] forged = new ZkTicketKeys(
                        null,
                        new KeyPair(MASTER_KEY.getPublic(), TestKeys.pair(201).getPrivate()))
                .encode(List.of(key(1)));
        assertThatThrownBy(() -> keys.decode(forged))
                .isInstanceOf(ZkTicketKeys.Unusable.class)
                .hasMessageContaining("not signed by this master key")
                .hasMessageNotContaining("damaged");
    }

    @Test
    void aSignedNodeWhoseKeysDoNotUnwrapWithThisMasterKeyIsNotUsed() {
        byte[] wrappedForAnother = new ZkTicketKeys(
                        null, new KeyPair(TestKeys.pair(201).getPublic(), MASTER_KEY.getPrivate()))
                .encode(List.of(key(1)));
        assertThatThrownBy(() -> keys.decode(wrappedForAnother))
                .isInstanceOf(ZkTicketKeys.Unusable.class)
                .hasMessageContaining("does not unwrap with this master's key");
    }
}
