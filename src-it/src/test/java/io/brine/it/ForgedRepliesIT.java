package io.brine.it;

import static io.brine.protocol.testing.SuiteDefaults.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.daemon.config.TransportKind;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.testing.TestKeys;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13 item 5: nothing unauthenticated makes a minion exit. A real {@code bin/brine-minion} process talks TCP to
 * a real master through an on-path attacker ({@link ForgingRelay}) that answers its auth requests with replies of its
 * own, which carry the nonce it read off the wire, its own key, and its own signature.
 */
class ForgedRepliesIT {

    private static final Path ROOT =
            Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final KeyPair FORGER = TestKeys.pair(TestKeys.COUNT - 10);

    @TempDir
    Path tmp;

    private Fleet fleet;
    private ForgingRelay relay;
    private Process minion;

    @BeforeEach
    void startMaster() throws Exception {
        fleet = new Fleet(tmp.resolve("fleet")).transport(TransportKind.TCP);
        fleet.startMaster(b -> b.acceptance(Fleet.autoAccept()));
    }

    @AfterEach
    void stop() throws IOException {
        if (minion != null) {
            minion.destroyForcibly();
        }
        if (relay != null) {
            relay.close();
        }
        fleet.close();
    }

    /**
     * bin/brine-minion over TCP through the relay, with test key 0 and the shortest waits its config takes (1 s each:
     * a request answered only by the forger waits out auth_timeout, then acceptance_wait_time); pinned to the master
     * if asked.
     */
    private Path startMinion(AuthStatus forgedStatus, boolean pinned) throws Exception {
        relay = new ForgingRelay(fleet.tcpPort(), FORGER, forgedStatus);
        Path dir = Files.createDirectories(tmp.resolve("web1"));
        Fleet.seedKey(dir.resolve("pki"), 0);
        if (pinned) {
            Files.copy(fleet.masterConfig.pkiDir().resolve("master.pub"), dir.resolve("pki/minion_master.pub"));
        }
        Files.writeString(
                dir.resolve("minion.yaml"),
                String.join(
                        "\n",
                        "id: web1",
                        "master: 127.0.0.1",
                        "transport: tcp",
                        "tcp_port: " + relay.port(),
                        "pki_dir: pki",
                        "cachedir: cache",
                        "acceptance_wait_time: 1",
                        "auth_timeout: 1",
                        ""));
        minion = new ProcessBuilder("bash", ROOT.resolve("bin/brine-minion").toString(), "-c", dir.toString())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(tmp.resolve("web1.log").toFile())
                .redirectErrorStream(true)
                .start();
        return dir;
    }

    private static JsonNode status(Path dir) {
        try {
            return JSON.readTree(dir.resolve("cache/status.json").toFile());
        } catch (IOException e) {
            return JSON.createObjectNode().put("state", "none");
        }
    }

    private String log() throws IOException {
        return Files.readString(tmp.resolve("web1.log"));
    }

    @Test
    void forgedRepliesUnderAnotherKeyNeverStopAPinnedMinionAndTheMastersOwnReplyStillCounts() throws Exception {
        Path web1 = startMinion(AuthStatus.REJECTED, true);

        // A request answered by the forger alone: shown as a mismatch while it lasts.
        await().until(() -> relay.forged.get() >= 1
                && "master_key_mismatch".equals(status(web1).path("state").asText()));
        assertThat(minion.isAlive())
                .as("the minion is still running; log:%n%s", log())
                .isTrue();
        assertThat(status(web1).path("reason").asText()).startsWith("master key changed");

        // The minion keeps asking; from now on the forger answers first, the master second: the master's reply counts.
        relay.mode(ForgingRelay.Mode.RACE);
        await().until(() -> "accepted".equals(status(web1).path("state").asText()));
        assertThat(minion.isAlive()).isTrue();
        assertThat(Files.readString(web1.resolve("pki/minion_master.pub")))
                .isEqualTo(Files.readString(fleet.masterConfig.pkiDir().resolve("master.pub")));
        assertThat(log()).contains("not signed by the trusted master key dropped");

        minion.destroy();
        assertThat(minion.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(minion.exitValue()).isIn(0, 143);
    }

    @Test
    void aForgedRejectionDoesNotStopAMinionThatHasNotPinnedYet() throws Exception {
        // Nothing pinned, no master_finger: the forger's rejection verifies with the key it carries: it proves nothing.
        Path web1 = startMinion(AuthStatus.REJECTED, false);
        await().until(() -> relay.forged.get() >= 1
                && "rejected".equals(status(web1).path("state").asText()));
        assertThat(minion.isAlive())
                .as("the minion is still running; log:%n%s", log())
                .isTrue();
        assertThat(web1.resolve("pki/minion_master.pub")).doesNotExist();

        // It asks again (a minion that stopped at the rejection is never accepted), and the master answers.
        relay.mode(ForgingRelay.Mode.PASS);
        await().until(() -> "accepted".equals(status(web1).path("state").asText()));
        assertThat(Files.readString(web1.resolve("pki/minion_master.pub")))
                .isEqualTo(Files.readString(fleet.masterConfig.pkiDir().resolve("master.pub")));
    }
}
