package io.brine.master.metrics;

import com.sun.management.OperatingSystemMXBean;
import io.brine.daemon.BrineVersion;
import io.brine.master.auth.AuthWorkBudget;
import io.brine.master.auth.MasterKeyring;
import io.brine.store.keys.KeyDecision;
import io.brine.store.keys.KeyState;
import io.brine.store.keys.KeyStore;
import io.brine.store.policy.AcceptancePolicies;
import io.brine.store.policy.ExecutablePolicy;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * The master's metrics, in one Prometheus registry: counters the master's parts move through one-line hooks
 * (auth answers, publications, returns, missing minions), and gauges read at scrape time from the parts that hold
 * the state (pending keys, sessions by transport, job cache, queues, publish key generation). Hooks cost a counter
 * increment; nothing here runs on the request path but those. The events of {@code brine events} are the event
 * stream's ({@code events/}), which the same parts tell.
 *
 * <p>Names follow Prometheus' conventions ({@code brine_} prefix, {@code _total} for counters, base units).
 */
public final class MasterMetrics {

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Timer authLatency;
    private final Counter publications;
    private final Counter returns;
    private final Counter missing;
    private final Counter masterKeyRotations;
    private final Counter masterKeyRetirements;
    /** Reads a scrape's gauges share, taken once before it. */
    private final List<Runnable> beforeScrape = new CopyOnWriteArrayList<>();

    public MasterMetrics() {
        // A histogram (buckets from 1 ms to 10 s), not a summary: buckets add up across masters, quantiles do not.
        authLatency = Timer.builder("brine.auth.latency")
                .description("Time to answer one auth request, from the "
                        + "worker picking it up to the reply being handed to the transport")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
        Gauge.builder("brine.build.info", () -> 1)
                .description("The version and commit this master was built from")
                .tag("version", BrineVersion.get())
                .tag("commit", BrineVersion.commit())
                .register(registry);
        publications = Counter.builder("brine.publications")
                .description("Jobs published")
                .register(registry);
        returns = Counter.builder("brine.returns")
                .description("Job returns stored")
                .register(registry);
        missing = Counter.builder("brine.missing.minions")
                .description("Minions a publication did not reach " + "(not connected, queue full, connection lost)")
                .register(registry);
        masterKeyRotations = Counter.builder("brine.master.key.rotations")
                .description("Master key rotations"
                        + " (brine-key --rotate-master-key) this master loaded and sent to its minions")
                .register(registry);
        masterKeyRetirements = Counter.builder("brine.master.key.retirements")
                .description("Previous master keys" + " retired at the end of master_key_grace")
                .register(registry);
    }

    /**
     * Adds the JVM's memory, GC, threads, classes, CPU, open and maximum file descriptors and uptime; the daemon calls
     * it, tests need not. The process's CPU time is {@code process_cpu_seconds_total}, in seconds as Prometheus'
     * own process collectors name it, instead of Micrometer's nanoseconds ({@code process_cpu_time_ns_total}).
     */
    public MasterMetrics withJvm() {
        registry.config().meterFilter(MeterFilter.denyNameStartsWith("process.cpu.time"));
        new JvmMemoryMetrics().bindTo(registry);
        new JvmGcMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
            FunctionCounter.builder("process.cpu", os, bean -> bean.getProcessCpuTime() / 1e9)
                    .baseUnit("seconds")
                    .description("CPU time used by the master's process")
                    .register(registry);
        }
        return this;
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** The Prometheus text exposition of every meter. */
    public String scrape() {
        beforeScrape.forEach(Runnable::run);
        return registry.scrape();
    }

    // ---- hooks: one call where the thing happens ----

    /**
     * An auth request answered ({@code outcome}: accepted, pending, ... or refused) by {@code rule}. Only the rule's
     * kind is a label ({@code autosign_file}, not the file, line and pattern after it), so that labels stay few.
     */
    public void authAnswered(String outcome, String rule) {
        String kind = rule == null || rule.isBlank() ? "none" : rule.strip().split("\\s", 2)[0];
        Counter.builder("brine.auth.answers")
                .description("Auth requests decided, by outcome and by the kind of " + "rule that decided")
                .tag("outcome", outcome)
                .tag("rule", kind)
                .register(registry)
                .increment();
    }

    /** The key store's decision's name as an outcome label. */
    public static String outcome(KeyDecision decision) {
        return decision.getClass().getSimpleName().toLowerCase(Locale.ROOT);
    }

    /** One auth request took {@code nanos} on a worker. */
    public void authLatency(long nanos) {
        authLatency.record(Duration.ofNanos(nanos));
    }

    /** A job was published. */
    public void published() {
        publications.increment();
    }

    /** {@code count} minions were not reached by a publication. */
    public void missing(int count) {
        if (count > 0) {
            missing.increment(count);
        }
    }

    /** A job's return was stored. */
    public void returned() {
        returns.increment();
    }

    /**
     * A minion's request to rotate its key was answered (PROTOCOL.md 6.3).
     *
     * @param result rotated, pending (waits for an admin) or refused
     */
    public void minionKeyRotation(String result) {
        Counter.builder("brine.minion.key.rotations")
                .description("Minion key rotations answered, by result")
                .tag("result", result)
                .register(registry)
                .increment();
    }

    /** A master key rotation was loaded (PROTOCOL.md 6.4). */
    public void masterKeyLoaded() {
        masterKeyRotations.increment();
    }

    /** The previous master key's grace ended: it signs nothing any more. */
    public void masterKeyRetired() {
        masterKeyRetirements.increment();
    }

    // ---- gauges over the parts that hold the state, read at scrape time ----

    /**
     * Keys by state, from one listing of the key store per scrape (in memory; the store first catches up with what
     * other processes changed), so it costs a scrape, not a request.
     */
    public void keys(KeyStore keyStore) {
        KeyCounts counts = new KeyCounts(keyStore);
        beforeScrape.add(counts::refresh);
        for (KeyState state : KeyState.values()) {
            Gauge.builder("brine.keys", counts, c -> c.count(state))
                    .description("Keys in the key store, by state")
                    .tag("state", state.dirName())
                    .register(registry);
        }
        Gauge.builder("brine.oldest.accepted.key.age.seconds", counts, KeyCounts::oldestAcceptedAgeSeconds)
                .description("Age of the oldest accepted minion key (since accepted or last rotated); 0 when none"
                        + " or unknown (a cluster)")
                .register(registry);
    }

    /** Key counts by state, from one listing of the key store, taken by {@link #scrape()} before it reads them. */
    private static final class KeyCounts {
        private final KeyStore keyStore;
        private volatile Map<KeyState, Integer> counts = Map.of();

        KeyCounts(KeyStore keyStore) {
            this.keyStore = keyStore;
        }

        void refresh() {
            var listing = keyStore.list();
            var fresh = new EnumMap<KeyState, Integer>(KeyState.class);
            for (KeyState each : KeyState.values()) {
                fresh.put(each, listing.keys(each).size());
            }
            counts = fresh;
            oldestAccepted = keyStore.oldestAcceptedSince().orElse(null);
        }

        private volatile Instant oldestAccepted;

        double oldestAcceptedAgeSeconds() {
            Instant oldest = oldestAccepted;
            return oldest == null
                    ? 0
                    : Math.max(0, Duration.between(oldest, Instant.now()).toSeconds());
        }

        int count(KeyState state) {
            return counts.getOrDefault(state, 0);
        }
    }

    /**
     * The master key in force: when it was last rotated ({@code 0} before the first rotation; alert on {@code time()
     * - brine_master_key_last_rotation_timestamp_seconds}), how long the previous key still signs publications, how
     * many succession records minions are shown.
     */
    public void masterKeys(MasterKeyring keyring) {
        gauge(
                "brine.master.key.last.rotation.timestamp.seconds",
                "When the master key in force was made by a" + " rotation, Unix time; 0 before the first rotation",
                keyring,
                k -> k.lastRotationMs() / 1000.0);
        gauge(
                "brine.master.key.grace.remaining.seconds",
                "How much longer the previous master key signs"
                        + " publications (master_key_grace); 0 when it is retired or there is none",
                keyring,
                k -> k.graceRemaining().toMillis() / 1000.0);
        gauge(
                "brine.master.key.chain.records",
                "Succession records shown to minions (master_key_chain)",
                keyring,
                k -> k.chain().size());
    }

    /** Connected minions, by transport, as {@code sessionTransports} names each session's transport. */
    public void sessions(Collection<String> transports, Supplier<Collection<String>> sessionTransports) {
        for (String transport : transports) {
            Gauge.builder(
                            "brine.minions.connected",
                            () -> sessionTransports.get().stream()
                                    .filter(transport::equals)
                                    .count())
                    .description("Minions with a live session, by transport")
                    .tag("transport", transport)
                    .register(registry);
        }
    }

    /** Rotations: the publish key generation, which each rotation moves by one, less the first one. */
    public <T> void rotations(T keyring, ToDoubleFunction<T> generation) {
        double first = generation.applyAsDouble(keyring);
        Gauge.builder("brine.publish.key.generation", keyring, generation)
                .description("The current publish key generation")
                .register(registry);
        FunctionCounter.builder("brine.key.rotations", keyring, k -> generation.applyAsDouble(k) - first)
                .description("Publish key rotations since the master started")
                .register(registry);
    }

    public <T> void gauge(String name, String description, T holder, ToDoubleFunction<T> value) {
        Gauge.builder(name, holder, value).description(description).register(registry);
    }

    public <T> void counter(String name, String description, T holder, ToDoubleFunction<T> value) {
        FunctionCounter.builder(name, holder, value).description(description).register(registry);
    }

    /**
     * What the auth work budget paid for and what it left unanswered: {@code brine_auth_unanswered_total} by reason,
     * {@code budget} (spent) and {@code bad_signature} (a request not signed by the key it offers is never answered).
     */
    public void authWorkBudget(AuthWorkBudget budget) {
        counter(
                "brine.auth.budget.answers",
                "Answers paid from the auth work budget (refusals, pending and unknown "
                        + "keys, Salt's _auth, SessionUnknown)",
                budget,
                AuthWorkBudget::spent);
        FunctionCounter.builder("brine.auth.unanswered", budget, AuthWorkBudget::unanswered)
                .description("Unauthenticated requests left unanswered, by reason")
                .tag("reason", "budget")
                .register(registry);
        FunctionCounter.builder("brine.auth.unanswered", budget, AuthWorkBudget::badSignatures)
                .description("Unauthenticated requests left unanswered, by reason")
                .tag("reason", "bad_signature")
                .register(registry);
    }

    /** The autosign_policy executable's runs and timeouts, when one is configured. */
    public void policies(AcceptancePolicies policies) {
        policies.all().stream()
                .filter(ExecutablePolicy.class::isInstance)
                .map(ExecutablePolicy.class::cast)
                .findFirst()
                .ifPresent(executable -> {
                    counter("brine.policy.executable.runs", "autosign_policy runs", executable, ExecutablePolicy::runs);
                    counter(
                            "brine.policy.executable.timeouts",
                            "autosign_policy runs killed at the timeout",
                            executable,
                            ExecutablePolicy::timeouts);
                });
    }
}
