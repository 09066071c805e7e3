package io.brine.master.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.client.channel.TcpClientChannel;
import io.brine.daemon.config.MasterConfig;
import io.brine.master.WiredMaster;
import io.brine.protocol.codec.Codec;
import io.brine.protocol.codec.Decoded;
import io.brine.protocol.codec.FrameLimits;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Nodegroups of master.yaml, expanded by the master before a target is resolved and sent to minions. */
class NodegroupPublishTest {

    @TempDir
    Path dir;

    WiredMaster master;

    @BeforeEach
    void start() throws Exception {
        Map<String, String> nodegroups = new LinkedHashMap<>();
        nodegroups.put("web", "web*");
        nodegroups.put("dbs", "L@db1");
        nodegroups.put("all", "N@web or N@dbs");
        master = WiredMaster.start(
                dir,
                config -> config.nodegroups(nodegroups)
                        .acceptance(MasterConfig.Acceptance.builder()
                                .autoAccept(true)
                                .build()));
        int key = 1;
        for (String id : List.of("web1", "web2", "db1")) {
            try (TcpClientChannel minion = master.connect()) {
                minion.send(WiredMaster.authRequest(id, key++, WiredMaster.nonce()));
                Decoded.Ok ok =
                        (Decoded.Ok) Codec.decode(minion.receive(Duration.ofSeconds(10)), FrameLimits.MAX_FRAME);
                assertThat(((AuthReply) ok.message()).status()).isEqualTo(AuthStatus.ACCEPTED);
            }
        }
    }

    @AfterEach
    void stop() {
        master.close();
    }

    @Test
    void aNodegroupTermTargetsWhatItsDefinitionSelects() throws Exception {
        try (BrineClient root = master.root()) {
            BrineClient.Published published =
                    root.publish(BrineClient.Job.of("compound", "N@all and not web2", "test.ping"));

            assertThat(published.minions()).containsExactly("db1", "web1");
            // What the minions got, and the job cache keeps: compound terms they know.
            assertThat(root.job(published.jid()))
                    .containsEntry("target_type", "compound")
                    .containsEntry("target", "( ( web* ) or ( L@db1 ) ) and not web2");
        }
    }

    @Test
    void brineDashNSendsOneNodegroupByName() throws Exception {
        try (BrineClient root = master.root()) {
            assertThat(root.publish(BrineClient.Job.of("nodegroup", "web", "test.ping"))
                            .minions())
                    .containsExactly("web1", "web2");
        }
    }

    @Test
    void anUnknownNodegroupIsARefusalThatNamesIt() throws Exception {
        try (BrineClient root = master.root()) {
            assertThatThrownBy(() -> root.publish(BrineClient.Job.of("compound", "N@web or N@nowhere", "test.ping")))
                    .isInstanceOf(ClientException.class)
                    .hasMessage("bad target: unknown nodegroup nowhere");
        }
    }
}
