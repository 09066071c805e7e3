package io.brine.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.encoder.Encoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.brine.daemon.config.LogFormat;
import io.brine.daemon.config.LogLevel;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class DaemonLoggingTest {

    @Test
    void theZooKeeperClientAndCuratorSayOnlyTheirErrorsUnlessDebugging() throws Exception {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        Level before = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).getLevel();
        try {
            DaemonLogging.configure(LogLevel.INFO, Optional.empty());
            assertThat(context.getLogger("org.apache.zookeeper.ClientCnxn").getEffectiveLevel())
                    .isEqualTo(Level.ERROR);
            assertThat(context.getLogger("org.apache.curator.framework").getEffectiveLevel())
                    .isEqualTo(Level.ERROR);
            assertThat(context.getLogger("com.example.other").getEffectiveLevel())
                    .isEqualTo(Level.INFO);

            DaemonLogging.configure(LogLevel.DEBUG, Optional.empty());
            assertThat(context.getLogger("org.apache.zookeeper.ClientCnxn").getEffectiveLevel())
                    .isEqualTo(Level.DEBUG);
        } finally {
            context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(before);
            DaemonLogging.CHATTY_LIBRARIES.forEach(
                    name -> context.getLogger(name).setLevel(null));
        }
    }

    @Test
    void jsonLinesCarryTheFormattedMessageNotThePatternAndItsArguments() throws Exception {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        Encoder<ILoggingEvent> encoder = DaemonLogging.encoder(context, LogFormat.JSON);
        Logger logger = context.getLogger("io.brine.test");
        LoggingEvent event = new LoggingEvent(
                Logger.class.getName(), logger, Level.WARN, "Key of {} bits in {}", null, new Object[] {
                    1024, "minions_pre/\"web1\""
                });

        String line = new String(encoder.encode(event), StandardCharsets.UTF_8);

        assertThat(line).endsWith("\n");
        JsonNode json = new ObjectMapper().readTree(line);
        assertThat(json.path("formattedMessage").asText()).isEqualTo("Key of 1024 bits in minions_pre/\"web1\"");
        assertThat(json.has("message")).isFalse();
        assertThat(json.has("arguments")).isFalse();
        assertThat(json.path("level").asText()).isEqualTo("WARN");
        assertThat(json.path("loggerName").asText()).isEqualTo("io.brine.test");
    }
}
