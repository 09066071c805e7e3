package io.brine.it;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * A test class that failsafe runs after the others, with nothing beside it. The integration tests run three classes
 * at a time, in three JVMs (src-it/pom.xml, it.forks), since most of their time is spent waiting on processes and
 * sockets; a class whose outcome depends on the machine's speed (a timeout a starved minion could miss, a rate limit
 * counted per second, a swarm that uses both cores) is marked with this instead, so a neighbour cannot make it fail.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag(RunsAlone.TAG)
public @interface RunsAlone {

    /** The JUnit tag failsafe's executions select on. */
    String TAG = "runs-alone";
}
