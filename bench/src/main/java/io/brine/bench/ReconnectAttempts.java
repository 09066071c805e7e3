package io.brine.bench;

import io.brine.transport.ClientTransport;
import io.brine.transport.tcp.TcpClientOptions;
import io.brine.transport.tcp.TcpClientTransport;
import io.brine.transport.zmq.ZmqClientOptions;
import io.brine.transport.zmq.ZmqClientTransport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What a master that is down, then comes back, sees of N minions' reconnection back-off (issue 26): N of the real
 * minion's transports ({@link ZmqClientTransport}, jeromq, a DEALER and a SUB each; or {@link TcpClientTransport}),
 * with their default options, connected to nothing for a while: the connection attempts per minion per minute once
 * their back-off has grown (the kernel's {@code ActiveOpens} over the last minute), then a listener on the ports,
 * and how long after it each minion's connection came (the last, and the median).
 *
 * <p>Run it in a network namespace of its own, so that the kernel's counters are its alone:
 * {@code unshare -n sh -c 'ip link set lo up && java -cp "bench/target/brine-bench.jar:bench/target/lib/*"
 * io.brine.bench.ReconnectAttempts zeromq 200 60'} (transport, minions, seconds down before the minute counted).
 * The handshake and idle timeouts are lifted: the listener accepts and holds connections, and speaks no protocol.
 */
public final class ReconnectAttempts {

    private static final int REQUEST_PORT = 4506;
    private static final int PUBLISH_PORT = 4505;
    private static final Duration MINUTE = Duration.ofMinutes(1);

    private ReconnectAttempts() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3 || !(args[0].equals("zeromq") || args[0].equals("tcp"))) {
            System.err.println("usage: ReconnectAttempts zeromq|tcp MINIONS SECONDS_DOWN_BEFORE_THE_COUNTED_MINUTE");
            System.exit(2);
        }
        boolean zmq = args[0].equals("zeromq");
        int minions = Integer.parseInt(args[1]);
        Duration before = Duration.ofSeconds(Long.parseLong(args[2]));
        List<ClientTransport> transports = new ArrayList<>();
        ClientTransport.Listener listener = new ClientTransport.Listener() {
            @Override
            public void onReply(byte[] frame) {}

            @Override
            public void onPublication(byte[] frame) {}
        };
        for (int i = 0; i < minions; i++) {
            ClientTransport transport = zmq
                    ? new ZmqClientTransport(
                            "127.0.0.1",
                            REQUEST_PORT,
                            ZmqClientOptions.defaults().withHandshakeTimeout(Duration.ofMinutes(10)))
                    : new TcpClientTransport(
                            "127.0.0.1",
                            REQUEST_PORT,
                            TcpClientOptions.defaults().withIdleTimeout(Duration.ofMinutes(10)),
                            null,
                            null);
            transport.start(listener);
            transport.subscribe("minion" + i, PUBLISH_PORT);
            transports.add(transport);
        }
        ZmqClientOptions zmqOptions = ZmqClientOptions.defaults();
        TcpClientOptions tcpOptions = TcpClientOptions.defaults();
        System.out.printf(
                "%s: %d minions, reconnect %d ms doubling to %d ms; the master down%n",
                args[0],
                minions,
                (zmq ? zmqOptions.reconnectInterval() : tcpOptions.reconnectInterval()).toMillis(),
                (zmq ? zmqOptions.reconnectIntervalMax() : tcpOptions.reconnectIntervalMax()).toMillis());
        Thread.sleep(before.toMillis());
        long opens0 = activeOpens();
        Thread.sleep(MINUTE.toMillis());
        long attempts = activeOpens() - opens0;
        int sockets = zmq ? 2 : 1;
        System.out.printf(
                "%s: %,d connection attempts in the minute after %d s down: %.1f per minion per minute (%d socket%s"
                        + " each)%n",
                args[0], attempts, before.toSeconds(), attempts / (double) minions, sockets, sockets == 1 ? "" : "s");

        List<Long> request = new CopyOnWriteArrayList<>();
        List<Long> publish = new CopyOnWriteArrayList<>();
        long listening = System.nanoTime();
        try (ServerSocket requests = listen(REQUEST_PORT, request, listening);
                ServerSocket publications = zmq ? listen(PUBLISH_PORT, publish, listening) : null) {
            long deadline = System.nanoTime() + MINUTE.toNanos();
            while ((request.size() < minions || (zmq && publish.size() < minions)) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            System.out.printf(
                    "%s: the master listening again: every minion's request connection back after %s (median %s),"
                            + " %d of %d%s%n",
                    args[0],
                    seconds(request, minions, 1.0),
                    seconds(request, minions, 0.5),
                    request.size(),
                    minions,
                    zmq
                            ? String.format(
                                    "; publish connections after %s (median %s)",
                                    seconds(publish, minions, 1.0), seconds(publish, minions, 0.5))
                            : "");
        }
        transports.forEach(ClientTransport::close);
        System.exit(0);
    }

    /** Accepts and holds connections on {@code port}, noting when each came (nanoseconds after {@code since}). */
    private static ServerSocket listen(int port, List<Long> arrivals, long since) throws IOException {
        ServerSocket server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 4096);
        List<Socket> held = new CopyOnWriteArrayList<>();
        Thread accepter = new Thread(
                () -> {
                    try {
                        while (true) {
                            held.add(server.accept());
                            arrivals.add(System.nanoTime() - since);
                        }
                    } catch (IOException e) {
                        // closed
                    }
                },
                "accept-" + port);
        accepter.setDaemon(true);
        accepter.start();
        return server;
    }

    /** The quantile of the first {@code minions} arrivals, in seconds; "-" when not every one came. */
    private static String seconds(List<Long> arrivals, int minions, double quantile) {
        if (arrivals.size() < minions) {
            return "-";
        }
        long[] sorted =
                arrivals.stream().mapToLong(Long::longValue).limit(minions).toArray();
        Arrays.sort(sorted);
        int index = Math.min(minions - 1, (int) Math.ceil(quantile * minions) - 1);
        return String.format("%.2f s", sorted[Math.max(0, index)] / 1e9);
    }

    /** The kernel's count of connect() calls made (TCP {@code ActiveOpens}), in this network namespace. */
    private static long activeOpens() throws IOException {
        List<String> tcp = Files.readAllLines(Path.of("/proc/self/net/snmp")).stream()
                .filter(line -> line.startsWith("Tcp:"))
                .toList();
        List<String> names = Arrays.asList(tcp.get(0).split(" "));
        return Long.parseLong(tcp.get(1).split(" ")[names.indexOf("ActiveOpens")]);
    }
}
