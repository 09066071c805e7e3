package io.brine.transport;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** Host names and ports as socket libraries spell them: IPv6 literals in brackets, here only. */
public final class Endpoints {

    private Endpoints() {}

    /** True for an IPv6 literal, bracketed or not (a name or an IPv4 address has no colon). */
    public static boolean isIpv6(String host) {
        return host.indexOf(':') >= 0;
    }

    /** {@code [::1]} for an IPv6 literal (bracketed once), the host unchanged otherwise. */
    public static String bracketed(String host) {
        return isIpv6(host) && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    /** {@code tcp://host:port}, the host bracketed if it is an IPv6 literal (ZeroMQ's endpoint form). */
    public static String tcp(String host, int port) {
        return "tcp://" + bracketed(host) + ":" + port;
    }

    /** {@code tcp://127.0.0.1:4506} or {@code tcp://[::1]:4506} to a socket address, without a name lookup. */
    public static InetSocketAddress parseTcp(String endpoint) {
        String hostPort = endpoint.substring(endpoint.indexOf("://") + 3);
        int colon = hostPort.lastIndexOf(':');
        String host = hostPort.substring(0, colon);
        int port = Integer.parseInt(hostPort.substring(colon + 1));
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            return InetSocketAddress.createUnresolved(host, port);
        }
    }
}
