package io.brine.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.TransportKind;
import io.brine.minion.MinionDaemon;
import io.brine.minion.MinionState;
import io.brine.protocol.codec.MalformedException;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.salt.Crypticle;
import io.brine.protocol.salt.SaltAuthRequest;
import io.brine.protocol.salt.SaltDialect;
import io.brine.protocol.salt.SaltLimits;
import io.brine.protocol.salt.SaltMsgpack;
import io.brine.protocol.salt.SaltPublication;
import io.brine.protocol.salt.SaltRsa;
import io.brine.protocol.salt.SaltSignIn;
import io.brine.protocol.salt.SaltStreamScanner;
import io.brine.protocol.salt.SaltTcpFrame;
import io.brine.protocol.salt.SaltValue;
import io.brine.protocol.testing.SuiteDefaults;
import io.brine.protocol.testing.TestKeys;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.MinionKind;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * What a Salt peer can claim (issue 30, PROTOCOL.md "What a Salt peer can and cannot claim"): Salt's {@code _auth}
 * proves nothing about the private key, so a raw {@code _auth} naming a brine minion with its public key, on either
 * of Salt's transports, is refused, marks nothing, and the brine minion keeps getting its jobs, on one master and
 * across a cluster; nor does a brine auth take a Salt minion's key.
 */
class SaltClaimsIT {

    private static final int WEB1_KEY = 100;
    private static final int SALT1_KEY = 101;
    private static final SaltRsa.Encryption ENC = SaltRsa.Encryption.OAEP_SHA1;
    private static final SaltRsa.Signing SIG = SaltRsa.Signing.PKCS1V15_SHA1;

    @TempDir
    Path dir;

    @AutoClose
    Fleet fleet;

    @AutoClose
    TwoMasterCluster cluster;

    /**
     * A stock minion's {@code _auth} for {@code id} offering {@code key} over {@code transport} (Salt's "zeromq" on a
     * REQ socket of its own, or "tcp"), and the master's answer as {@code caller} checks it.
     */
    private static SaltSignIn.Outcome saltAuth(
            String transport, int port, String id, PublicKey key, KeyPair caller, RSAPublicKey master)
            throws Exception {
        if (transport.equals("tcp")) {
            return saltAuth(request -> overTcp(port, request), id, key, caller, master);
        }
        try (ZContext zmq = new ZContext(1)) {
            return saltAuth(request -> overZeroMq(requestSocket(zmq, port), request), id, key, caller, master);
        }
    }

    private interface SaltWire {
        SaltValue exchange(SaltValue.Map request) throws Exception;
    }

    private static SaltSignIn.Outcome saltAuth(
            SaltWire wire, String id, PublicKey key, KeyPair caller, RSAPublicKey master) throws Exception {
        String nonce = UUID.randomUUID().toString().replace("-", "");
        SaltValue reply = wire.exchange(SaltAuthRequest.of(id, key, nonce, ENC, SIG, Optional.empty(), Optional.empty())
                .envelope());
        return SaltSignIn.check(
                reply,
                nonce,
                Optional.empty(),
                caller.getPrivate(),
                ENC,
                SIG,
                Optional.of(master),
                SaltLimits.UNAUTHENTICATED);
    }

    /** Salt's ZeroMQ transport: a REQ socket on the request port (a Salt minion keeps it open while it runs). */
    private static ZMQ.Socket requestSocket(ZContext zmq, int port) {
        ZMQ.Socket req = zmq.createSocket(SocketType.REQ);
        req.setReceiveTimeOut((int) SuiteDefaults.WAIT.toMillis());
        req.connect("tcp://127.0.0.1:" + port);
        return req;
    }

    private static SaltValue overZeroMq(ZMQ.Socket req, SaltValue.Map request) throws Exception {
        req.send(SaltMsgpack.write(request, SaltDialect.PAYLOAD));
        byte[] reply = req.recv();
        assertThat(reply).as("the master's answer").isNotNull();
        return SaltMsgpack.read(reply, SaltLimits.UNAUTHENTICATED);
    }

    /** Salt's TCP transport, which shares the ZeroMQ request port: one {head, body} frame each way. */
    private static SaltValue overTcp(int port, SaltValue.Map request) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout((int) SuiteDefaults.WAIT.toMillis());
            SaltValue.Map head = SaltValue.Map.builder()
                    .put("mid", UUID.randomUUID().toString())
                    .build();
            socket.getOutputStream().write(SaltTcpFrame.encode(new SaltTcpFrame(head, request)));
            SaltStreamScanner scanner = new SaltStreamScanner(SaltLimits.UNAUTHENTICATED);
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[64 * 1024];
            int length = 0;
            int frame = -1;
            while (frame < 0) {
                int read = in.read(buffer, length, buffer.length - length);
                assertThat(read).as("the master's answer").isPositive();
                length += read;
                frame = scanner.scan(buffer, 0, length);
            }
            return SaltTcpFrame.decode(Arrays.copyOf(buffer, frame), SaltLimits.UNAUTHENTICATED)
                    .body();
        }
    }

    private static RSAPublicKey masterKey(Fleet on) {
        return (RSAPublicKey) on.master.keyStore().masterKeyPair().getPublic();
    }

    private static void assertJobsReach(Fleet through, String id) throws Exception {
        FleetJobs jobs = new FleetJobs(through);
        var ping = jobs.publishTo(List.of(id), "list", id, "test.ping");
        assertThat(jobs.awaitReturns(ping.jid(), id).get(id).returnValue()).isEqualTo(true);
    }

    @ParameterizedTest(name = "Salt transport: {0}")
    @ValueSource(strings = {"zeromq", "tcp"})
    void aSaltSignInWithABrineMinionsPublicKeyIsRefusedMarksNothingAndItsJobsStillReachIt(String transport)
            throws Exception {
        fleet = new Fleet(dir).transport(TransportKind.ZEROMQ);
        fleet.startMaster(b -> b.saltMinions(true).acceptance(Fleet.autoAccept()));
        MinionDaemon web1 = fleet.startMinion("web1", WEB1_KEY, b -> b);
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        fleet.awaitSubscribed("web1");
        int port = fleet.master.master().addresses().request().getPort();

        SaltSignIn.Outcome answer = saltAuth(
                transport,
                port,
                "web1",
                TestKeys.pair(WEB1_KEY).getPublic(),
                TestKeys.pair(SALT1_KEY),
                masterKey(fleet));

        assertThat(answer).isInstanceOf(SaltSignIn.Refused.class);
        assertThat(fleet.masterConfig.pkiDir().resolve("salt_minions/web1")).doesNotExist();
        assertThat(fleet.master.keyStore().kind("web1")).isEqualTo(MinionKind.BRINE);
        assertThat(Files.readString(fleet.masterConfig.cachedir().resolve("audit.log")))
                .contains("auth-otherkind");
        assertJobsReach(fleet, "web1");
        // And after a restart, which reads the kinds from the disk.
        fleet.restartMaster();
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        fleet.awaitSubscribed("web1");
        assertJobsReach(fleet, "web1");
    }

    @Test
    void aBrineAuthWithASaltMinionsKeyIsDeniedAndTheKeyStaysASaltMinions() throws Exception {
        fleet = new Fleet(dir).transport(TransportKind.ZEROMQ);
        fleet.startMaster(b -> b.saltMinions(true).acceptance(Fleet.autoAccept()));
        int port = fleet.master.master().addresses().request().getPort();
        KeyPair salt1 = TestKeys.pair(SALT1_KEY);
        assertThat(saltAuth("zeromq", port, "salt1", salt1.getPublic(), salt1, masterKey(fleet)))
                .isInstanceOf(SaltSignIn.Accepted.class);
        assertThat(fleet.masterConfig.pkiDir().resolve("salt_minions/salt1")).exists();

        // The same id and key through brine's auth: refused with the reason, the key untouched.
        MinionDaemon brine = fleet.startMinion("salt1", SALT1_KEY, b -> b);
        Fleet.awaitState(brine, MinionState.DENIED);

        assertThat(fleet.master.keyStore().kind("salt1")).isEqualTo(MinionKind.SALT);
        assertThat(fleet.master.keyStore().list().find("salt1", KeyState.ACCEPTED))
                .isPresent();
        assertThat(fleet.sessionIds()).doesNotContainKey("salt1");
        assertThat(Files.readString(fleet.masterConfig.cachedir().resolve("audit.log")))
                .contains("held by a salt minion");
    }

    @Test
    void inAClusterASaltSignInThroughOneMasterTakesNoBrineMinionOfTheOther() throws Exception {
        cluster = TwoMasterCluster.onOneServer(dir, b -> b.saltMinions(true).acceptance(Fleet.autoAccept()));
        MinionDaemon web1 = cluster.a.startMinion("web1", WEB1_KEY, b -> b);
        Fleet.awaitState(web1, MinionState.ACCEPTED);
        cluster.a.awaitSubscribed("web1");
        var addressesOfB = cluster.b.master.master().addresses();
        RSAPublicKey master = masterKey(cluster.b);
        KeyPair salt1 = TestKeys.pair(SALT1_KEY);
        try (ZContext zmq = new ZContext(1)) {
            // An accepted Salt minion on master b, listening to b's publications with the shared aes key.
            ZMQ.Socket salt1Requests = requestSocket(zmq, addressesOfB.request().getPort());
            SaltSignIn.Outcome signedIn =
                    saltAuth(request -> overZeroMq(salt1Requests, request), "salt1", salt1.getPublic(), salt1, master);
            assertThat(signedIn).isInstanceOf(SaltSignIn.Accepted.class);
            ZMQ.Socket sub = zmq.createSocket(SocketType.SUB);
            sub.setReceiveTimeOut((int) SuiteDefaults.WAIT.toMillis());
            sub.subscribe(new byte[0]);
            sub.connect("tcp://127.0.0.1:" + addressesOfB.publish().getPort());
            cluster.b.awaitSubscribed("salt1");

            for (String transport : List.of("zeromq", "tcp")) {
                assertThat(saltAuth(
                                transport,
                                addressesOfB.request().getPort(),
                                "web1",
                                TestKeys.pair(WEB1_KEY).getPublic(),
                                salt1,
                                master))
                        .as(transport)
                        .isInstanceOf(SaltSignIn.Refused.class);
            }

            assertThat(cluster.a.master.keyStore().kind("web1")).isEqualTo(MinionKind.BRINE);
            assertThat(cluster.b.master.keyStore().kind("web1")).isEqualTo(MinionKind.BRINE);
            // Through the master the Salt peer spoke to, and through the other.
            assertJobsReach(cluster.b, "web1");
            assertJobsReach(cluster.a, "web1");
            // Nothing for web1 went out in Salt's envelope on b: what salt1 reads up to a job of its own.
            String marker = new FleetJobs(cluster.b)
                    .publishTo(List.of("salt1"), "list", "salt1", "test.ping")
                    .jid();
            Crypticle aes = ((SaltSignIn.Accepted) signedIn).aes();
            while (true) {
                byte[] envelope = sub.recv();
                assertThat(envelope).as("salt1's own job reaches it").isNotNull();
                Optional<SaltPublication> read;
                try {
                    read = SaltPublication.open(envelope, master, aes, -1, SaltLimits.SESSION);
                } catch (CryptoException | MalformedException e) {
                    continue; // not Salt's envelope, or not for salt1's aes
                }
                if (read.isEmpty()) {
                    continue;
                }
                assertThat(read.get().tgt().toString()).as(read.get().jid()).doesNotContain("web1");
                if (read.get().jid().equals(marker)) {
                    break;
                }
            }
        }
    }
}
