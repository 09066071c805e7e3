package io.brine.daemon;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.FileAppender;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.Encoder;
import io.brine.daemon.config.LogFormat;
import io.brine.daemon.config.LogLevel;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a daemon's {@code log_level}, {@code log_file} and {@code log_format} to Logback once its config is loaded.
 * Until then the packaged {@code logback.xml} logs INFO to standard error. With {@code log_format: json} each event
 * is one JSON object a line (Logback's {@link JsonEncoder}: timestamp, level, logger, thread, formattedMessage).
 */
public final class DaemonLogging {

    public static final String PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{0}: %msg%n";
    private static final String FILE_APPENDER = "file";
    /** Logged at ERROR only unless the daemon's level is debug or trace. */
    static final List<String> CHATTY_LIBRARIES = List.of("org.apache.zookeeper", "org.apache.curator");

    private DaemonLogging() {}

    public static void configure(LogLevel level, Optional<Path> file) throws IOException {
        configure(level, file, LogFormat.TEXT);
    }

    /**
     * @throws IOException when Logback cannot open {@code file} (the daemons check it first with
     *     {@link io.brine.daemon.files.WritableFile}; this is the race after that check): the log stays on standard
     *     error, and the daemon must not start logging nowhere
     */
    public static void configure(LogLevel level, Optional<Path> file, LogFormat format) throws IOException {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            return;
        }
        ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.toLevel(level.name(), Level.INFO));
        // The ZooKeeper client and Curator narrate every connection attempt (about 150 lines and stack traces for an
        // ensemble that is down, before the master's one line naming it): their errors only, unless debugging.
        boolean debugging = level == LogLevel.DEBUG || level == LogLevel.TRACE;
        for (String library : CHATTY_LIBRARIES) {
            context.getLogger(library).setLevel(debugging ? null : Level.ERROR);
        }
        if (file.isEmpty() && format == LogFormat.TEXT) {
            return; // logback.xml's text to standard error
        }
        OutputStreamAppender<ILoggingEvent> appender;
        if (file.isPresent()) {
            FileAppender<ILoggingEvent> fileAppender = new FileAppender<>();
            fileAppender.setFile(file.get().toString());
            fileAppender.setAppend(true);
            fileAppender.setName(FILE_APPENDER);
            appender = fileAppender;
        } else {
            ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
            console.setTarget("System.err");
            console.setName("stderr");
            appender = console;
        }
        appender.setContext(context);
        appender.setEncoder(encoder(context, format));
        appender.start();
        if (!appender.isStarted()) {
            throw new IOException("log_file " + file.orElseThrow() + " cannot be opened for writing");
        }
        root.detachAndStopAllAppenders();
        root.addAppender(appender);
    }

    /**
     * Reopens {@code log_file} (after logrotate moved it: SIGHUP); nothing to do when the log goes to standard
     * error.
     */
    public static void reopen() {
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context
                && context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender(FILE_APPENDER)
                        instanceof FileAppender<ILoggingEvent> file) {
            file.stop();
            file.start();
        }
    }

    static Encoder<ILoggingEvent> encoder(LoggerContext context, LogFormat format) {
        if (format == LogFormat.JSON) {
            JsonEncoder json = new JsonEncoder();
            json.setContext(context);
            json.setWithSequenceNumber(false);
            json.setWithContext(false);
            // The message as a reader wants it, its arguments in place: not the pattern and an arguments array.
            json.setWithMessage(false);
            json.setWithArguments(false);
            json.setWithFormattedMessage(true);
            json.start();
            return json;
        }
        PatternLayoutEncoder pattern = new PatternLayoutEncoder();
        pattern.setContext(context);
        pattern.setPattern(PATTERN);
        pattern.start();
        return pattern;
    }
}
