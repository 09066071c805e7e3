package io.brine.store.policy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;
import java.util.regex.Pattern;

/** IP address literals, parsed without ever asking DNS; IPv4-mapped IPv6 addresses become IPv4. */
public final class IpAddresses {

    private static final Pattern IPV4 = Pattern.compile(
            "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]{2,45}");

    private IpAddresses() {}

    /** The address {@code text} is a literal of, or empty; a host name is never resolved. */
    static Optional<InetAddress> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        String literal = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
        boolean v4 = IPV4.matcher(literal).matches();
        boolean v6 = !v4 && literal.indexOf(':') >= 0 && IPV6.matcher(literal).matches();
        if (!v4 && !v6) {
            return Optional.empty();
        }
        try {
            // Only a literal reaches here, and InetAddress parses literals without a lookup.
            return Optional.of(InetAddress.getByName(literal));
        } catch (UnknownHostException e) {
            return Optional.empty();
        }
    }

    /** Whether {@code text} is a literal of a loopback address (127.0.0.0/8, ::1); a host name never is. */
    public static boolean isLoopback(String text) {
        return parse(text).map(InetAddress::isLoopbackAddress).orElse(false);
    }

    /** Addresses every host has, that say nothing about which host it is: loopback, link-local, unspecified. */
    static boolean isHostLocal(InetAddress address) {
        return address.isLoopbackAddress()
                || address.isLinkLocalAddress()
                || address.isAnyLocalAddress()
                || address.isMulticastAddress();
    }
}
