package io.brine.protocol.codec;

import static io.brine.protocol.codec.Samples.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.protocol.crypto.Aead;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.Suite;
import io.brine.protocol.testing.TestKeys;
import java.security.KeyPair;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PublicationsTest {

    private static final KeyPair MASTER = TestKeys.pair(0);
    private static final long ISSUED = 1_700_000_000_000L;
    private final SessionKey publishKey = SessionKey.random();

    @Test
    void theAssociatedDataIsContextGenerationSerialAndJid() {
        assertThat(hex(Publications.associatedData(3, 1000, "j1")))
                .isEqualTo(
                        "6272696e652d7075626c6973682d7631" + "0000000000000003" + "00000000000003e8" + "02" + "6a31");
    }

    @Test
    void aSealedSignedPublicationOpensOnTheOtherSide() throws Exception {
        Publish publish = Publications.seal(publishKey, 3, 1000, ISSUED, Samples.load());
        assertThat(publish.suite()).isEqualTo(Suite.RSA_OAEP_PSS_AES256GCM);
        assertThat(publish.jid()).isEqualTo("j1");
        byte[] frame = Codec.encodeSigned(publish, MASTER.getPrivate());

        Decoded.Ok ok = (Decoded.Ok) Codec.decode(frame, FrameLimits.MAX_FRAME);
        assertThat(ok.verify(MASTER.getPublic())).isTrue();
        PublishLoad load = Publications.open(publishKey, (Publish) ok.message());
        assertThat(load).usingRecursiveComparison().isEqualTo(Samples.load());
    }

    @Test
    void anotherKeyCannotOpen() {
        Publish publish = Publications.seal(publishKey, 3, 1000, ISSUED, Samples.load());
        assertThatThrownBy(() -> Publications.open(SessionKey.random(), publish))
                .isInstanceOf(CryptoException.class);
    }

    @Test
    void anAlteredGenerationSerialOrJidDoesNotOpen() {
        Publish p = Publications.seal(publishKey, 3, 1000, ISSUED, Samples.load());
        for (Publish altered : List.of(
                new Publish(p.suite(), 4, p.serial(), p.issuedMs(), p.jid(), p.box()),
                new Publish(p.suite(), p.generation(), 1001, p.issuedMs(), p.jid(), p.box()),
                new Publish(p.suite(), p.generation(), p.serial(), p.issuedMs(), "j2", p.box()))) {
            assertThatThrownBy(() -> Publications.open(publishKey, altered)).isInstanceOf(CryptoException.class);
        }
    }

    @Test
    void aLoadWhoseJidDiffersFromTheFramesIsRefused() {
        // Authentic (sealed with the right key and associated data) but inconsistent: a master bug, refused.
        byte[] box =
                Aead.seal(publishKey, Publications.associatedData(3, 1000, "j2"), Codec.encodeLoad(Samples.load()));
        Publish publish = new Publish(Suite.RSA_OAEP_PSS_AES256GCM, 3, 1000, ISSUED, "j2", box);
        assertThatThrownBy(() -> Publications.open(publishKey, publish))
                .isInstanceOf(MalformedException.class)
                .hasMessage("PublishLoad.jid differs from Publish.jid");
    }

    @Test
    void sealRefusesNegativeCountersAndInvalidLoads() {
        assertThatThrownBy(() -> Publications.seal(publishKey, -1, 1, ISSUED, Samples.load()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Publications.seal(publishKey, 1, -1, ISSUED, Samples.load()))
                .isInstanceOf(IllegalArgumentException.class);
        PublishLoad badJid = new PublishLoad(
                "../x", new PublishLoad.Target("glob", "*"), "test.ping", List.of(), Map.of(), 0, "root");
        assertThatThrownBy(() -> Publications.seal(publishKey, 1, 1, ISSUED, badJid))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PublishLoad.jid");
    }

    @Test
    void openRefusesAPublishWithAnInvalidJidBeforeDecrypting() {
        Publish publish = new Publish(Suite.RSA_OAEP_PSS_AES256GCM, 1, 1, ISSUED, null, new byte[28]);
        assertThatThrownBy(() -> Publications.open(publishKey, publish)).isInstanceOf(MalformedException.class);
    }
}
