package io.brine.master.events;

import io.brine.master.session.PublisherSession;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.targeting.Glob;
import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's event stream ({@code brine events}): auth decisions, key changes, publications, returns and
 * rotations, sent as they happen to the publisher sessions that subscribed (PROTOCOL.md, "Events"). A publisher with
 * a {@code publisher_acl} sees only events about minions its {@code targets} all cover, and of a job only when its
 * {@code functions} allow the job's function too (it could have published that job itself); a job's event is about
 * every minion the job targeted, its returns too, so a return from a minion the publisher may target is not shown
 * when the job also targeted one it may not. The master's own events (rotations) and events about several minions
 * it may not all target go to the local administrator alone.
 *
 * <p>Emitting runs on the thread where the thing happened (an auth worker, the job cache writer, the timer):
 * sealing a small message and queueing it on the transport, no blocking. A subscriber whose connection is gone is
 * dropped at the next event; at most {@value #MAX_SUBSCRIBERS} subscribe at once, the oldest giving way.
 */
public final class EventStream {

    private static final Logger LOG = LoggerFactory.getLogger(EventStream.class);
    static final int MAX_SUBSCRIBERS = 64;

    /** Sends one event to a subscriber; false when it cannot be delivered (its connection is gone). */
    @FunctionalInterface
    public interface Sender {
        boolean send(SessionMessage.Event event);
    }

    private record Subscriber(PublisherSession session, Glob tag, Predicate<String> minionAllowed,
            Predicate<String> functionAllowed, Sender sender) {
    }

    private final Clock clock;
    private final List<Subscriber> subscribers = new CopyOnWriteArrayList<>();

    public EventStream(Clock clock) {
        this.clock = clock;
    }

    /** {@code session} gets, through {@code sender}, the events from now on whose tag matches {@code tagGlob}. */
    public void subscribe(PublisherSession session, String tagGlob, Sender sender) {
        Predicate<String> allowed = session.acl().map(acl -> anyOf(acl.targets())).orElse(id -> true);
        Predicate<String> functions = session.acl().map(acl -> anyOf(acl.functions())).orElse(fun -> true);
        subscribers.removeIf(s -> s.session() == session);
        while (subscribers.size() >= MAX_SUBSCRIBERS) {
            Subscriber oldest = subscribers.remove(0);
            LOG.info("{}: event subscription dropped for a newer one ({} at most)", oldest.session(),
                    MAX_SUBSCRIBERS);
        }
        subscribers.add(new Subscriber(session, Glob.compile(tagGlob), allowed, functions, sender));
        LOG.info("{}: subscribed to events {}", session, tagGlob);
    }

    private static Predicate<String> anyOf(List<String> globs) {
        List<Glob> compiled = globs.stream().map(Glob::compile).toList();
        return text -> compiled.stream().anyMatch(glob -> glob.matches(text));
    }

    /** Subscribers now: for tests and metrics. */
    public int subscribers() {
        return subscribers.size();
    }

    /**
     * Sends an event about {@code minions} (none for the master's own) to every subscriber whose glob matches
     * {@code tag} and who may see all of them.
     */
    public void emit(String tag, Collection<String> minions, Map<String, Object> data) {
        emit(tag, minions, null, data);
    }

    /** As {@link #emit(String, Collection, Map)}, for an event of a job of {@code fun} (null: not a job's). */
    public void emit(String tag, Collection<String> minions, String fun, Map<String, Object> data) {
        if (subscribers.isEmpty()) {
            return;
        }
        SessionMessage.Event event = null;
        for (Subscriber subscriber : subscribers) {
            if (!subscriber.tag().matches(tag) || !visible(subscriber, minions, fun)) {
                continue;
            }
            if (event == null) {
                event = new SessionMessage.Event(tag, clock.millis(), data);
            }
            try {
                if (!subscriber.sender().send(event)) {
                    subscribers.remove(subscriber);
                    LOG.debug("{}: event subscriber gone", subscriber.session());
                }
            } catch (RuntimeException e) {
                subscribers.remove(subscriber);
                LOG.error("Bug: sending event {} to {} failed", tag, subscriber.session(), e);
            }
        }
    }

    private static boolean visible(Subscriber subscriber, Collection<String> minions, String fun) {
        if (subscriber.session().acl().isEmpty()) {
            return true;
        }
        return !minions.isEmpty() && minions.stream().allMatch(subscriber.minionAllowed())
                && (fun == null || subscriber.functionAllowed().test(fun));
    }
}
