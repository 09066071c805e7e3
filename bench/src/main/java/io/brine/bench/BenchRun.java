package io.brine.bench;

import io.brine.client.BrineClient;
import io.brine.client.ClientException;
import io.brine.daemon.config.TransportKind;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What every scenario works with: the run's options, the master and the swarm it measures, the machine's RSA limits
 * that figures are judged against, the profiler, and where figures and failures go.
 *
 * @param minions the N measured (the requested N, or the largest that fits the master's open-files limit)
 * @param scenarios each scenario's figures by name, for the JSON
 * @param failures what went wrong, one line each; a run with any fails
 */
record BenchRun(
        Bench.Options options,
        MasterProcess master,
        RsaLimits limits,
        Path runDir,
        int minions,
        Swarm swarm,
        Profiler profiler,
        Map<String, Object> scenarios,
        List<String> failures) {

    /** A publisher session as the master's local root (its root key). */
    BrineClient publisher() throws ClientException {
        KeyPair root = BrineClient.readPrivate(master.rootKey(), "the master's root key");
        RSAPublicKey masterKey = BrineClient.readPublic(master.masterPub(), "the master key");
        TransportKind kind = options.transport() == Transport.TCP ? TransportKind.TCP : TransportKind.ZEROMQ;
        return BrineClient.connect(
                kind, "127.0.0.1", Swarm.requestPort(options, master), "root", root, masterKey, Duration.ofSeconds(60));
    }
}
