package io.brine.master;

import com.sun.management.UnixOperatingSystemMXBean;
import io.brine.daemon.config.ConnectionLimits;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.transport.tcp.TcpServerOptions;
import io.brine.transport.zmtp.ZmtpServerOptions;
import java.lang.management.ManagementFactory;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The connection caps each served transport gets: master.yaml's ({@link ConnectionLimits}) over the transport's own
 * defaults, fitted at start to the process's file limit (the soft {@code RLIMIT_NOFILE}), so that accepting a
 * connection never fails with "Too many open files". Every connection is a descriptor, and the master needs its own
 * beside them ({@link #ownDescriptors}). When the total caps of the transports served and those do not fit:
 * <ul>
 * <li>{@code max_connections} set: the master does not start ({@link Refused}, exit 2), since the admin asked for
 *     more than the process may hold;
 * <li>{@code max_connections} unset: each transport's caps are lowered in proportion until the totals fit (so the
 *     defaults keep their shape: ZeroMQ two thirds of the room and TCP one third when both are served, a fifth of
 *     each without a session, half of those from one address); a cap set in master.yaml is kept if it fits under the
 *     lowered total, else lowered to it; the master says so once ({@link Lowered}).
 * </ul>
 * {@code brine-master --check-config} decides the same.
 */
final class ConnectionCaps {

    /**
     * The descriptors the master holds beside its connections: jars, logs, the key store's lock, ZooKeeper, the
     * metrics port, the listening sockets, and three per event loop (Netty's epoll: epoll, event and timer
     * descriptors; two loops per core in each of up to two transports). Measured: 107 in a test JVM on 2 cores with
     * both transports (24 of them the loops); this allows 280 there, 1,024 on 64 cores.
     */
    static int ownDescriptors(int cores) {
        return 256 + 12 * cores;
    }

    /** Below this many connections in all, lowering is not serving: the master refuses to start instead. */
    static final int MIN_CONNECTIONS = 64;

    /** The caps one transport serves. */
    record Caps(int max, int unauthenticated, int perSource) {}

    /** What the file limit makes of master.yaml's caps. */
    sealed interface Fit permits Fits, Lowered, Refused {}

    /** They fit (or the limit is not known here): served as configured. */
    record Fits(Map<TransportKind, Caps> caps) implements Fit {}

    /** The defaults did not fit and are lowered: {@code warning} says so, once, at start. */
    record Lowered(Map<TransportKind, Caps> caps, String warning) implements Fit {}

    /** The caps set in master.yaml do not fit: the master does not start; {@code message} says why and what to do. */
    record Refused(String message) implements Fit {}

    private ConnectionCaps() {}

    /** {@code config}'s caps fitted to this process's file limit, with this machine's cores. */
    static Fit fit(MasterConfig config) {
        return fit(config, fileLimit(), Runtime.getRuntime().availableProcessors());
    }

    /**
     * @param fileLimit the process's soft limit of open files; negative when unknown (then nothing is fitted)
     * @param cores the cores the event loops are sized by
     */
    static Fit fit(MasterConfig config, long fileLimit, int cores) {
        ConnectionLimits limits = config.connectionLimits();
        Map<TransportKind, Caps> configured = new EnumMap<>(TransportKind.class);
        long total = 0;
        for (TransportKind kind : config.transports()) {
            Caps caps = resolve(limits, kind);
            configured.put(kind, caps);
            total += caps.max();
        }
        if (fileLimit < 0) {
            return new Fits(configured);
        }
        int own = ownDescriptors(cores);
        long room = fileLimit - own;
        if (total <= room) {
            return new Fits(configured);
        }
        String served = configured.entrySet().stream()
                .map(entry -> entry.getKey().name().toLowerCase(Locale.ROOT) + " "
                        + entry.getValue().max())
                .collect(Collectors.joining(", "));
        String fix = "raise it (LimitNOFILE= in the systemd unit, ulimit -n before starting the master)";
        if (room < MIN_CONNECTIONS) {
            return new Refused("the file limit (RLIMIT_NOFILE) of " + fileLimit + " open files leaves no room for"
                    + " connections beside the master's own " + own + " descriptors: " + fix);
        }
        if (limits.maxConnections().isPresent()) {
            return new Refused("max_connections " + limits.maxConnections().getAsInt() + " (" + served
                    + " connections in all) and the master's own " + own + " descriptors do not fit the file limit"
                    + " (RLIMIT_NOFILE) of " + fileLimit + " open files: " + fix + ", or lower max_connections to "
                    + room / configured.size() + " at most");
        }
        Map<TransportKind, Caps> lowered = new EnumMap<>(TransportKind.class);
        for (Map.Entry<TransportKind, Caps> entry : configured.entrySet()) {
            // Each cap not set in master.yaml lowered in proportion, so the defaults' shape stays: a fifth of the
            // connections without a session, half of those from one address. One set there is kept under the rest.
            Caps caps = entry.getValue();
            int max = scaled(caps.max(), room, total);
            int unauthenticated = Math.min(
                    max,
                    limits.maxUnauthenticatedConnections().isPresent()
                            ? caps.unauthenticated()
                            : scaled(caps.unauthenticated(), room, total));
            int perSource = Math.min(
                    unauthenticated,
                    limits.maxUnauthenticatedPerSource().isPresent()
                            ? caps.perSource()
                            : scaled(caps.perSource(), room, total));
            lowered.put(entry.getKey(), new Caps(max, unauthenticated, perSource));
        }
        String now = lowered.entrySet().stream()
                .map(entry -> entry.getKey().name().toLowerCase(Locale.ROOT) + " "
                        + entry.getValue().max() + " (" + entry.getValue().unauthenticated()
                        + " without a session, " + entry.getValue().perSource() + " of those from one address)")
                .collect(Collectors.joining(", "));
        return new Lowered(
                lowered,
                "Connection caps lowered to fit the file limit (RLIMIT_NOFILE) of " + fileLimit
                        + " open files beside the master's own " + own + " descriptors: " + now
                        + " instead of the defaults ("
                        + served + "); " + fix + " to serve the defaults, or set max_connections");
    }

    /** The caps {@code fit} decided for {@code kind}; the configured ones when it refused. */
    static Caps of(Fit fit, MasterConfig config, TransportKind kind) {
        if (fit instanceof Fits fits) {
            return fits.caps().get(kind);
        }
        if (fit instanceof Lowered lowered) {
            return lowered.caps().get(kind);
        }
        return resolve(config.connectionLimits(), kind);
    }

    /** {@code cap} times {@code room / total}, rounded down, at least 1. */
    private static int scaled(int cap, long room, long total) {
        return (int) Math.max(1, cap * room / total);
    }

    /** The soft limit of open files of this process; -1 where the JVM cannot tell. */
    static long fileLimit() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean unix
                ? unix.getMaxFileDescriptorCount()
                : -1;
    }

    private static Caps resolve(ConnectionLimits limits, TransportKind kind) {
        int[] caps = switch (kind) {
            case ZEROMQ -> {
                ZmtpServerOptions defaults = ZmtpServerOptions.defaults();
                yield limits.resolve(
                        defaults.maxConnections(),
                        defaults.maxUnauthenticatedConnections(),
                        defaults.maxUnauthenticatedPerSource());
            }
            case TCP -> {
                TcpServerOptions defaults = TcpServerOptions.defaults();
                yield limits.resolve(
                        defaults.maxConnections(),
                        defaults.maxUnauthenticatedConnections(),
                        defaults.maxUnauthenticatedPerSource());
            }
        };
        return new Caps(caps[0], caps[1], caps[2]);
    }
}
