package io.brine.daemon;

import io.brine.daemon.config.LogLevel;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.FileAppender;
import java.nio.file.Path;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a daemon's {@code log_level} and {@code log_file} to Logback once its config is loaded. Until then the
 * packaged {@code logback.xml} logs INFO to standard error.
 */
public final class DaemonLogging {

    public static final String PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{0}: %msg%n";

    private DaemonLogging() {
    }

    public static void configure(LogLevel level, Optional<Path> file) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            return;
        }
        ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.toLevel(level.name(), Level.INFO));
        if (file.isPresent()) {
            PatternLayoutEncoder encoder = new PatternLayoutEncoder();
            encoder.setContext(context);
            encoder.setPattern(PATTERN);
            encoder.start();
            FileAppender<ILoggingEvent> appender = new FileAppender<>();
            appender.setContext(context);
            appender.setName("file");
            appender.setFile(file.get().toString());
            appender.setAppend(true);
            appender.setEncoder(encoder);
            appender.start();
            root.detachAndStopAllAppenders();
            root.addAppender(appender);
        }
    }
}
