package io.brine.minion;

import io.brine.daemon.http.MetricsServer;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The minion's {@code /metrics} and {@code /readyz}, written by hand in Prometheus' text format: a few lines from the
 * minion's status and the JVM, so that the minion stays lean (no metrics library).
 */
final class MinionMetrics {

    private final Supplier<MinionStatus> status;

    MinionMetrics(Supplier<MinionStatus> status) {
        this.status = status;
    }

    /** Serves {@code /metrics}, {@code /healthz} and {@code /readyz} on {@code host:port}. */
    MetricsServer serve(String host, int port) throws java.io.IOException {
        return MetricsServer.start(host, port, "brine-minion", this::scrape, this::readiness);
    }

    String scrape() {
        MinionStatus now = status.get();
        StringBuilder text = new StringBuilder();
        text.append("# HELP brine_minion_state 1 for the state the minion is in with its master\n")
                .append("# TYPE brine_minion_state gauge\n");
        for (MinionState state : MinionState.values()) {
            text.append("brine_minion_state{state=\"").append(state.name().toLowerCase(Locale.ROOT)).append("\"} ")
                    .append(state == now.state() ? 1 : 0).append('\n');
        }
        if (now.generation() != null) {
            text.append("# HELP brine_minion_publish_key_generation The publish key generation the minion holds\n")
                    .append("# TYPE brine_minion_publish_key_generation gauge\n")
                    .append("brine_minion_publish_key_generation ").append(now.generation()).append('\n');
        }
        Runtime runtime = Runtime.getRuntime();
        text.append("# HELP jvm_memory_used_bytes Heap in use\n# TYPE jvm_memory_used_bytes gauge\n")
                .append("jvm_memory_used_bytes{area=\"heap\"} ").append(runtime.totalMemory() - runtime.freeMemory())
                .append('\n')
                .append("# HELP process_uptime_seconds Time since the JVM started\n")
                .append("# TYPE process_uptime_seconds gauge\n")
                .append("process_uptime_seconds ").append(ManagementFactory.getRuntimeMXBean().getUptime() / 1000.0)
                .append('\n');
        return text.toString();
    }

    /** Ready once the master accepted this minion and its session is up. */
    List<String> readiness() {
        MinionStatus now = status.get();
        return now.state() == MinionState.ACCEPTED ? List.of()
                : List.of("not accepted by the master: " + now.state().name().toLowerCase(Locale.ROOT)
                        + (now.reason() == null ? "" : " (" + now.reason() + ")"));
    }
}
