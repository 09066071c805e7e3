package io.brine.it;

import org.junit.jupiter.api.Nested;

/**
 * The tests that only need <em>a</em> running master and minion, in one class so that one test JVM runs them all and
 * {@link LaunchedDaemons} launches the pair once: failsafe hands each class to whichever JVM is free, and three
 * classes would have meant three launches, one in each JVM. Each test keeps its own class (and its own report
 * section here).
 */
class LaunchedDaemonsIT {

    @Nested
    class Logs extends LogsIT {}

    @Nested
    class Metrics extends MetricsEndpointIT {}

    @Nested
    class Events extends EventsIT {}
}
