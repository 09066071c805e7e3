package io.brine.minion;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.ContextInitializer;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import io.brine.daemon.DaemonLogging;
import org.slf4j.Logger;

/**
 * The minion's logging until {@link DaemonLogging} applies its config: INFO to standard error, ZeroMQ and Netty at
 * WARN. Set up in code, found by Logback as a service, because its XML configurator loads some 500 classes that
 * would then stay in every idle minion. A {@code -Dlogback.configurationFile} (or a {@code logback-test.xml} on
 * the class path, in tests) still wins.
 */
public final class StartupLogging extends ContextAwareBase implements Configurator {

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        ClassLoader loader = StartupLogging.class.getClassLoader();
        if (System.getProperty(ContextInitializer.CONFIG_FILE_PROPERTY) != null
                || loader.getResource(ContextInitializer.TEST_AUTOCONFIG_FILE) != null) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern(DaemonLogging.PATTERN);
        encoder.start();
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("stderr");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();
        context.getLogger("org.zeromq").setLevel(Level.WARN);
        context.getLogger("io.netty").setLevel(Level.WARN);
        ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.INFO);
        root.addAppender(stderr);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}
