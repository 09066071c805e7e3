package io.brine.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.brine.daemon.config.MasterConfig;
import io.brine.daemon.config.MinionConfig;
import io.brine.protocol.testing.ExampleConfigs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The shipped units make the directories the shipped configuration and logrotate file use (a daemon refuses to
 * start when it cannot open its log), none inside another unit's (systemd gives a unit's directories to its user,
 * recursively), and reload with the SIGHUP the daemons handle by reopening their logs.
 */
class SystemdUnitsTest {

    private static String setting(String unit, String key) throws IOException {
        Matcher matcher =
                Pattern.compile("(?m)^" + key + "=(.+)$").matcher(Files.readString(ExampleConfigs.example(unit)));
        assertThat(matcher.find()).as("%s= in conf/%s", key, unit).isTrue();
        return matcher.group(1).trim();
    }

    /** The directory of each log file conf/brine.logrotate rotates, by the daemon whose unit it signals. */
    private static Path loggedIn(String logFile) throws IOException {
        String logrotate = Files.readString(ExampleConfigs.example("brine.logrotate"));
        Matcher matcher = Pattern.compile("(?m)^(\\S+/" + Pattern.quote(logFile) + ") \\{$")
                .matcher(logrotate);
        assertThat(matcher.find()).as("%s in conf/brine.logrotate", logFile).isTrue();
        return Path.of(matcher.group(1)).getParent();
    }

    @Test
    void theMasterUnitMakesTheDefaultCachedirAndTheLogDirectoryLogrotateExpects() throws Exception {
        assertThat(Path.of("/var/cache", setting("brine-master.service", "CacheDirectory")))
                .isEqualTo(MasterConfig.builder().build().cachedir());
        assertThat(Path.of("/var/log", setting("brine-master.service", "LogsDirectory")))
                .isEqualTo(loggedIn("master.log"));
        assertThat(MasterConfig.builder().build().pkiDir())
                .startsWithRaw(Path.of(setting("brine-master.service", "ReadWritePaths")));
        assertThat(setting("brine-master.service", "ExecReload")).isEqualTo("/bin/kill -HUP $MAINPID");
    }

    @Test
    void theMinionUnitMakesTheDefaultCachedirAndTheLogDirectoryLogrotateExpects() throws Exception {
        assertThat(Path.of("/var/cache", setting("brine-minion.service", "CacheDirectory")))
                .isEqualTo(MinionConfig.builder().id("web1").build().cachedir());
        assertThat(Path.of("/var/log", setting("brine-minion.service", "LogsDirectory")))
                .isEqualTo(loggedIn("minion.log"));
        assertThat(setting("brine-minion.service", "ExecReload")).isEqualTo("/bin/kill -HUP $MAINPID");
    }

    @Test
    void noUnitsDirectoryIsInsideTheOthers() throws Exception {
        for (String kind : List.of("CacheDirectory", "LogsDirectory")) {
            Path master = Path.of(setting("brine-master.service", kind));
            Path minion = Path.of(setting("brine-minion.service", kind));
            assertThat(master.startsWith(minion) || minion.startsWith(master))
                    .as("%s %s and %s", kind, master, minion)
                    .isFalse();
        }
    }
}
