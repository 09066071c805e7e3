package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.MinionConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.master.publish.JobPublisher;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.store.keys.AdminResult;
import io.brine.transport.testing.TestCertificates;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What only the TCP transport has: TLS, and a real master's behaviour towards abusive peers. */
class TcpTransportIT {

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    private void acceptAndAwait(MinionDaemon minion) {
        await().until(() -> minion.minion().state() == MinionState.PENDING);
        assertThat(fleet.master
                        .keyStore()
                        .accept(minion.minion().id(), null, "it")
                        .status())
                .isEqualTo(AdminResult.Status.DONE);
        await().until(() -> minion.minion().state() == MinionState.ACCEPTED);
    }

    @Test
    void tlsUnderBrinesOwnCrypto() throws Exception {
        TestCertificates.CertFiles cert = TestCertificates.selfSigned(dir.resolve("tls"), "master", 10);
        fleet = new Fleet(dir).transport(TransportKind.TCP);
        fleet.startMaster(b -> b.tls(new MasterConfig.Tls(cert.cert(), cert.key())));
        MinionDaemon web1 = fleet.startMinion("web1", b -> b.tls(new MinionConfig.Tls(cert.cert(), true)));
        MinionDaemon plain = fleet.startMinion("plain1");

        acceptAndAwait(web1);
        FleetJobs jobs = new FleetJobs(fleet);
        JobPublisher.Published ping = jobs.publish("list", "web1", "test.ping");
        jobs.awaitReturns(ping.jid(), "web1");

        // A minion without TLS never gets through to ask.
        await().during(Duration.ofSeconds(2))
                .atMost(Duration.ofSeconds(5))
                .until(() -> plain.minion().state() != MinionState.PENDING);
        assertThat(fleet.masterConfig.pkiDir().resolve("minions_pre/plain1")).doesNotExist();
    }

    @Test
    void abusivePeersAreCutAndTheFleetCarriesOn() throws Exception {
        fleet = new Fleet(dir).transport(TransportKind.TCP);
        fleet.startMaster(b -> b);
        MinionDaemon web1 = fleet.startMinion("web1");
        acceptAndAwait(web1);

        try (Socket huge = connect();
                Socket halfOpen = connect()) {
            new DataOutputStream(huge.getOutputStream()).writeInt(Integer.MAX_VALUE);
            assertThat(closedWithin(huge, Duration.ofSeconds(5))).isTrue();
            assertThat(closedWithin(halfOpen, Duration.ofMillis(300))).isFalse(); // cut after 60 s; not waited for

            FleetJobs jobs = new FleetJobs(fleet);
            JobPublisher.Published ping = jobs.publish("glob", "*", "test.ping");
            jobs.awaitReturns(ping.jid(), "web1");
        }
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", fleet.tcpPort()), 5_000);
        return socket;
    }

    private static boolean closedWithin(Socket socket, Duration within) throws IOException {
        socket.setSoTimeout((int) within.toMillis());
        InputStream in = socket.getInputStream();
        try {
            while (true) {
                if (in.read() < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }
}
