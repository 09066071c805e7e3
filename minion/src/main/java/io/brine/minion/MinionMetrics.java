package io.brine.minion;

import com.sun.management.OperatingSystemMXBean;
import com.sun.management.UnixOperatingSystemMXBean;
import io.brine.daemon.BrineVersion;
import io.brine.daemon.http.MetricsServer;
import io.brine.minion.jobs.JobRunner;
import java.io.IOException;
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
    private final JobRunner jobs;
    private final ReturnQueue returns;

    MinionMetrics(Supplier<MinionStatus> status, JobRunner jobs, ReturnQueue returns) {
        this.status = status;
        this.jobs = jobs;
        this.returns = returns;
    }

    /** Serves {@code /metrics}, {@code /healthz} and {@code /readyz} on {@code host:port}. */
    MetricsServer serve(String host, int port) throws IOException {
        return MetricsServer.start(host, port, "brine-minion", this::scrape, this::readiness);
    }

    String scrape() {
        MinionStatus now = status.get();
        StringBuilder text = new StringBuilder();
        text.append("# HELP brine_minion_state 1 for the state the minion is in with its master\n")
                .append("# TYPE brine_minion_state gauge\n");
        for (MinionState state : MinionState.values()) {
            text.append("brine_minion_state{state=\"")
                    .append(state.name().toLowerCase(Locale.ROOT))
                    .append("\"} ")
                    .append(state == now.state() ? 1 : 0)
                    .append('\n');
        }
        if (now.generation() != null) {
            text.append("# HELP brine_minion_publish_key_generation The publish key generation the minion holds\n")
                    .append("# TYPE brine_minion_publish_key_generation gauge\n")
                    .append("brine_minion_publish_key_generation ")
                    .append(now.generation())
                    .append('\n');
        }
        metric(
                text,
                "brine_minion_jobs_total",
                "counter",
                "Jobs answered since the start (run, timed out or " + "refused as busy)",
                jobs.jobsReturned());
        metric(
                text,
                "brine_minion_jobs_failed_total",
                "counter",
                "Jobs whose return says they failed",
                jobs.jobsFailed());
        metric(
                text,
                "brine_minion_returns_queued",
                "gauge",
                "Returns waiting for the master's acknowledgement",
                returns.queued());
        metric(
                text,
                "brine_minion_returns_resent_total",
                "counter",
                "Returns sent again, unacknowledged",
                returns.resent());
        metric(
                text,
                "brine_minion_returns_dropped_total",
                "counter",
                "Unacknowledged returns dropped to make room",
                returns.evicted());
        metric(
                text,
                "brine_minion_stale_publications_total",
                "counter",
                "Authentic publications refused as older " + "than publish_max_age",
                now.stalePublications());
        text.append("# HELP brine_build_info The version and commit this minion was built from\n")
                .append("# TYPE brine_build_info gauge\n")
                .append("brine_build_info{commit=\"")
                .append(BrineVersion.commit())
                .append("\",version=\"")
                .append(BrineVersion.get())
                .append("\"} 1\n");
        if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
            metric(
                    text,
                    "process_cpu_seconds_total",
                    "counter",
                    "CPU time used by the minion's process",
                    os.getProcessCpuTime() / 1e9);
        }
        if (ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean unix) {
            metric(
                    text,
                    "process_files_open_files",
                    "gauge",
                    "Open file descriptors",
                    unix.getOpenFileDescriptorCount());
            metric(
                    text,
                    "process_files_max_files",
                    "gauge",
                    "The maximum of open file descriptors",
                    unix.getMaxFileDescriptorCount());
        }
        Runtime runtime = Runtime.getRuntime();
        text.append("# HELP jvm_memory_used_bytes Heap in use\n# TYPE jvm_memory_used_bytes gauge\n")
                .append("jvm_memory_used_bytes{area=\"heap\"} ")
                .append(runtime.totalMemory() - runtime.freeMemory())
                .append('\n')
                .append("# HELP process_uptime_seconds Time since the JVM started\n")
                .append("# TYPE process_uptime_seconds gauge\n")
                .append("process_uptime_seconds ")
                .append(ManagementFactory.getRuntimeMXBean().getUptime() / 1000.0)
                .append('\n');
        return text.toString();
    }

    private static void metric(StringBuilder text, String name, String type, String help, Number value) {
        text.append("# HELP ")
                .append(name)
                .append(' ')
                .append(help)
                .append('\n')
                .append("# TYPE ")
                .append(name)
                .append(' ')
                .append(type)
                .append('\n')
                .append(name)
                .append(' ')
                .append(value)
                .append('\n');
    }

    /** Ready once the master accepted this minion and its session is up. */
    List<String> readiness() {
        MinionStatus now = status.get();
        return now.state() == MinionState.ACCEPTED
                ? List.of()
                : List.of("not accepted by the master: " + now.state().name().toLowerCase(Locale.ROOT)
                        + (now.reason() == null ? "" : " (" + now.reason() + ")"));
    }
}
