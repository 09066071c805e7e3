package io.brine.protocol.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Free loopback ports, distinct from each other, for servers that cannot bind port 0 themselves (ZooKeeper's
 * quorum and election ports in curator-test's {@code TestingCluster}). All {@code count} sockets are held open at
 * once and then closed, so one call never returns a port twice: curator-test's own choice binds and closes one
 * socket per port, and gave one ensemble the same port for two roles ("Client and election port must be
 * different"). Another process may still take a port between the close and the server's bind.
 */
public final class LoopbackPorts {

    private LoopbackPorts() {}

    public static int[] distinct(int count) {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            for (ServerSocket socket : held) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // a socket that will not close still keeps its port from the others
                }
            }
        }
    }
}
