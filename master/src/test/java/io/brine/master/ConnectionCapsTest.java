package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.ConnectionLimits;
import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.TransportKind;
import io.brine.protocol.testing.ExampleConfigs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The connection caps fitted to the file limit, with the limit given: defaults that do not fit are lowered and said
 * so, caps the admin set that do not fit refuse the start, naming the limit, the caps and the fix.
 */
class ConnectionCapsTest {

    /** 2 cores: the master's own descriptors are 280. */
    private static final int CORES = 2;

    private static final int OWN = ConnectionCaps.ownDescriptors(CORES);

    @TempDir
    Path dir;

    private MasterConfig config(ConnectionLimits limits, TransportKind... kinds) {
        return MasterConfig.builder(dir)
                .transports(new LinkedHashSet<>(List.of(kinds)))
                .connectionLimits(limits)
                .build();
    }

    private static ConnectionLimits limits(Integer max, Integer unauthenticated, Integer perSource) {
        return new ConnectionLimits(optional(max), optional(unauthenticated), optional(perSource));
    }

    private static OptionalInt optional(Integer value) {
        return value == null ? OptionalInt.empty() : OptionalInt.of(value);
    }

    @Test
    void theDefaultsThatFitAreServedAsTheyAre() {
        ConnectionCaps.Fit fit =
                ConnectionCaps.fit(config(ConnectionLimits.DEFAULTS, TransportKind.ZEROMQ), 100_000 + OWN, CORES);
        assertThat(fit)
                .isEqualTo(new ConnectionCaps.Fits(
                        Map.of(TransportKind.ZEROMQ, new ConnectionCaps.Caps(100_000, 20_000, 10_000))));
    }

    @Test
    void zeroMqDefaultsOverAFileLimitOf20000AreLoweredInProportionAndSaidSo() {
        // Issue 30: the 20,000 unauthenticated cap was the inherited file limit; accept() failed first.
        ConnectionCaps.Fit fit =
                ConnectionCaps.fit(config(ConnectionLimits.DEFAULTS, TransportKind.ZEROMQ), 100_000 + OWN - 1, CORES);
        assertThat(fit).isInstanceOf(ConnectionCaps.Lowered.class);
        assertThat(ConnectionCaps.of(fit, null, TransportKind.ZEROMQ).max()).isEqualTo(99_999);

        fit = ConnectionCaps.fit(config(ConnectionLimits.DEFAULTS, TransportKind.ZEROMQ), 20_000, CORES);
        ConnectionCaps.Lowered lowered = (ConnectionCaps.Lowered) fit;
        assertThat(lowered.caps().get(TransportKind.ZEROMQ))
                .isEqualTo(new ConnectionCaps.Caps(20_000 - OWN, 3_944, 1_972));
        assertThat(lowered.warning())
                .contains(
                        "file limit (RLIMIT_NOFILE) of 20000",
                        "zeromq 19720 (3944 without" + " a session, 1972 of those from one address)",
                        "instead of the defaults (zeromq 100000)",
                        "LimitNOFILE=",
                        "ulimit -n",
                        "set max_connections");
    }

    @Test
    void bothTransportsTogetherFitUnderTheLimit() {
        ConnectionCaps.Lowered lowered = (ConnectionCaps.Lowered) ConnectionCaps.fit(
                config(ConnectionLimits.DEFAULTS, TransportKind.ZEROMQ, TransportKind.TCP), 20_000, CORES);
        int tcp = lowered.caps().get(TransportKind.TCP).max();
        int zeromq = lowered.caps().get(TransportKind.ZEROMQ).max();
        assertThat(tcp + zeromq + OWN).isLessThanOrEqualTo(20_000);
        assertThat(zeromq).isEqualTo(2 * tcp);
    }

    @Test
    void capsSetBelowAnUnsetTotalAreKeptUnderTheLoweredTotal() {
        // brine-bench's master.yaml from 4,000 minions.
        ConnectionCaps.Lowered lowered = (ConnectionCaps.Lowered)
                ConnectionCaps.fit(config(limits(null, 30_000, 30_000), TransportKind.ZEROMQ), 20_000, CORES);
        assertThat(lowered.caps().get(TransportKind.ZEROMQ)).isEqualTo(new ConnectionCaps.Caps(19_720, 19_720, 19_720));
        lowered = (ConnectionCaps.Lowered)
                ConnectionCaps.fit(config(limits(null, 500, 100), TransportKind.TCP), 20_000, CORES);
        assertThat(lowered.caps().get(TransportKind.TCP)).isEqualTo(new ConnectionCaps.Caps(19_720, 500, 100));
        lowered = (ConnectionCaps.Lowered)
                ConnectionCaps.fit(config(limits(null, null, 300), TransportKind.TCP), 5_000 + OWN, CORES);
        assertThat(lowered.caps().get(TransportKind.TCP)).isEqualTo(new ConnectionCaps.Caps(5_000, 1_000, 300));
    }

    @Test
    void anExplicitTotalThatFitsExactlyIsServedAndOneMoreRefusesTheStartNamingLimitCapsAndFix() {
        MasterConfig both = config(limits(9_000, null, null), TransportKind.ZEROMQ, TransportKind.TCP);
        assertThat(ConnectionCaps.fit(both, 18_000 + OWN, CORES)).isInstanceOf(ConnectionCaps.Fits.class);
        assertThat(ConnectionCaps.of(ConnectionCaps.fit(both, 18_000 + OWN, CORES), both, TransportKind.TCP))
                .isEqualTo(new ConnectionCaps.Caps(9_000, 9_000, 5_000));

        ConnectionCaps.Fit fit = ConnectionCaps.fit(both, 18_000 + OWN - 1, CORES);
        assertThat(fit)
                .isInstanceOfSatisfying(
                        ConnectionCaps.Refused.class,
                        refused -> assertThat(refused.message())
                                .contains(
                                        "max_connections 9000",
                                        "zeromq 9000, tcp 9000",
                                        "own " + OWN + " descriptors",
                                        "file limit (RLIMIT_NOFILE) of 18279",
                                        "LimitNOFILE=",
                                        "ulimit -n",
                                        "lower max_connections to 8999 at most"));
    }

    @Test
    void theShippedSystemdUnitsLimitFitsBothTransportsDefaultsOnA64CoreMachine() throws Exception {
        String unit = Files.readString(ExampleConfigs.example("brine-master.service"));
        Matcher limit = Pattern.compile("(?m)^LimitNOFILE=(\\d+)$").matcher(unit);
        assertThat(limit.find()).as("LimitNOFILE= in conf/brine-master.service").isTrue();
        assertThat(ConnectionCaps.fit(
                        config(ConnectionLimits.DEFAULTS, TransportKind.ZEROMQ, TransportKind.TCP),
                        Long.parseLong(limit.group(1)),
                        64))
                .isInstanceOf(ConnectionCaps.Fits.class);
    }

    @Test
    void aLimitThatLeavesAlmostNothingRefusesEvenTheDefaultsAndAnUnknownLimitFitsAll() {
        MasterConfig defaults = config(ConnectionLimits.DEFAULTS, TransportKind.TCP);
        assertThat(ConnectionCaps.fit(defaults, OWN + ConnectionCaps.MIN_CONNECTIONS - 1, CORES))
                .isInstanceOf(ConnectionCaps.Refused.class);
        assertThat(ConnectionCaps.fit(defaults, OWN + ConnectionCaps.MIN_CONNECTIONS, CORES))
                .isInstanceOfSatisfying(
                        ConnectionCaps.Lowered.class,
                        lowered -> assertThat(
                                        lowered.caps().get(TransportKind.TCP).max())
                                .isEqualTo(ConnectionCaps.MIN_CONNECTIONS));
        assertThat(ConnectionCaps.fit(defaults, -1, CORES)).isInstanceOf(ConnectionCaps.Fits.class);
    }
}
