package io.brine.master.events;

import io.brine.daemon.config.MasterConfig;
import io.brine.master.session.PublisherSession;
import io.brine.protocol.crypto.Fingerprints;
import io.brine.protocol.crypto.KeyFormatException;
import io.brine.protocol.crypto.RsaKeys;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.targeting.Glob;
import io.brine.store.keys.KeyChange;
import io.brine.store.keys.KeyState;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
 * dropped at the next event; at most {@value #MAX_SUBSCRIBERS} publisher sessions subscribe at once, the oldest
 * giving way.
 *
 * <p>The HTTP API's subscribers (server-sent events) are named by their token and bounded by the API's connection
 * cap instead. For their reconnection ({@code Last-Event-ID}) every event gets a number, and once {@link
 * #keepHistory} is called the last events are kept: a subscriber that names the last number it saw first gets the
 * kept events after it that it may see, then the live ones, in order and once each.
 *
 * <p>The daemon makes one and hands it to the parts where things happen, which call the named emitters below
 * (their tags and data are the events' contract), and to the subscribers' entrances (the dispatcher, the API).
 */
public final class EventStream {

    private static final Logger LOG = LoggerFactory.getLogger(EventStream.class);
    static final int MAX_SUBSCRIBERS = 64;

    /** Sends one event to a subscriber; false when it cannot be delivered (its connection is gone). */
    @FunctionalInterface
    public interface Sender {
        boolean send(SessionMessage.Event event);
    }

    /** Sends one numbered event to a subscriber; false when it cannot be delivered (gone, or too slow). */
    @FunctionalInterface
    public interface NumberedSender {
        boolean send(long number, SessionMessage.Event event);
    }

    /**
     * @param session the publisher session, or null for an API subscriber
     * @param replayedUpTo events numbered up to this were sent by the replay (or came before the subscription)
     */
    private record Subscriber(
            String name,
            PublisherSession session,
            Optional<MasterConfig.PublisherAcl> acl,
            Glob tag,
            Predicate<String> minionAllowed,
            Predicate<String> functionAllowed,
            NumberedSender sender,
            long replayedUpTo,
            Visibility last) {
        @Override
        public String toString() {
            return session != null ? session.toString() : name;
        }
    }

    /**
     * A subscriber's last decision about a job's minions: every event of a job (its publication, each return) is
     * about the same collection of the minions it targeted, so a subscriber with an ACL matches its globs against
     * them once per job, not once per return (1,000 returns to 100 readers were 10^8 glob matches, issue 28).
     */
    private static final class Visibility {
        private record Decision(Collection<String> minions, String fun, boolean visible) {}

        private volatile Decision last;
    }

    private record Kept(long number, String tag, Collection<String> minions, String fun, SessionMessage.Event event) {}

    private final Clock clock;
    private final List<Subscriber> subscribers = new CopyOnWriteArrayList<>();
    /** The last events, oldest first, and the last number given; under its own lock. */
    private final ArrayDeque<Kept> history = new ArrayDeque<>();

    private long lastNumber;
    private int historySize;

    public EventStream(Clock clock) {
        this.clock = clock;
    }

    /** Keeps the last {@code size} events for subscribers that reconnect ({@code Last-Event-ID}). */
    public void keepHistory(int size) {
        synchronized (history) {
            historySize = size;
        }
    }

    /** {@code session} gets, through {@code sender}, the events from now on whose tag matches {@code tagGlob}. */
    public void subscribe(PublisherSession session, String tagGlob, Sender sender) {
        subscribers.removeIf(s -> s.session() == session);
        while (subscribers.stream().filter(s -> s.session() != null).count() >= MAX_SUBSCRIBERS) {
            Subscriber oldest = subscribers.stream()
                    .filter(s -> s.session() != null)
                    .findFirst()
                    .orElseThrow();
            subscribers.remove(oldest);
            LOG.info("{}: event subscription dropped for a newer one ({} at most)", oldest, MAX_SUBSCRIBERS);
        }
        add(session.toString(), session, session.acl(), tagGlob, (number, event) -> sender.send(event), -1);
        LOG.info("{}: subscribed to events {}", session, tagGlob);
    }

    /**
     * An API subscriber {@code name} with {@code acl} (empty: sees everything) gets the events whose tag matches
     * {@code tagGlob}: first the kept ones numbered after {@code after} (-1: none), then the live ones.
     *
     * @return a handle that ends the subscription
     */
    public AutoCloseable subscribe(
            String name, Optional<MasterConfig.PublisherAcl> acl, String tagGlob, long after, NumberedSender sender) {
        Subscriber subscriber = add(name, null, acl, tagGlob, sender, after);
        return () -> subscribers.remove(subscriber);
    }

    private Subscriber add(
            String name,
            PublisherSession session,
            Optional<MasterConfig.PublisherAcl> acl,
            String tagGlob,
            NumberedSender sender,
            long after) {
        Predicate<String> allowed = acl.map(a -> anyOf(a.targets())).orElse(id -> true);
        Predicate<String> functions = acl.map(a -> anyOf(a.functions())).orElse(fun -> true);
        Glob glob = Glob.compile(tagGlob);
        synchronized (history) {
            // Under the lock that numbers events: what is replayed here is skipped live, and every later event is
            // numbered after the subscriber is in the list, so it reaches it live.
            Subscriber subscriber =
                    new Subscriber(name, session, acl, glob, allowed, functions, sender, lastNumber, new Visibility());
            if (after >= 0) {
                for (Kept kept : history) {
                    if (kept.number() > after
                            && glob.matches(kept.tag())
                            && visible(subscriber, kept.minions(), kept.fun())
                            && !sender.send(kept.number(), kept.event())) {
                        return subscriber;
                    }
                }
            }
            subscribers.add(subscriber);
            return subscriber;
        }
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
     * {@code tag} and who may see all of them. {@code minions} is not changed afterwards: the events of one job pass
     * the same collection, and a subscriber's decision about it is kept ({@link Visibility}).
     */
    public void emit(String tag, Collection<String> minions, Map<String, Object> data) {
        emit(tag, minions, null, data);
    }

    /** As {@link #emit(String, Collection, Map)}, for an event of a job of {@code fun} (null: not a job's). */
    public void emit(String tag, Collection<String> minions, String fun, Map<String, Object> data) {
        SessionMessage.Event event = null;
        long number;
        synchronized (history) {
            if (subscribers.isEmpty() && historySize == 0) {
                return;
            }
            number = ++lastNumber;
            if (historySize > 0) {
                event = new SessionMessage.Event(tag, clock.millis(), data);
                history.addLast(new Kept(number, tag, List.copyOf(minions), fun, event));
                while (history.size() > historySize) {
                    history.removeFirst();
                }
            }
        }
        List<Subscriber> gone = new ArrayList<>(0);
        for (Subscriber subscriber : subscribers) {
            if (number <= subscriber.replayedUpTo()
                    || !subscriber.tag().matches(tag)
                    || !visible(subscriber, minions, fun)) {
                continue;
            }
            if (event == null) {
                event = new SessionMessage.Event(tag, clock.millis(), data);
            }
            try {
                if (!subscriber.sender().send(number, event)) {
                    gone.add(subscriber);
                    LOG.debug("{}: event subscriber gone", subscriber);
                }
            } catch (RuntimeException e) {
                gone.add(subscriber);
                LOG.error("Bug: sending event {} to {} failed", tag, subscriber, e);
            }
        }
        subscribers.removeAll(gone);
    }

    // ---- the master's events, one emitter each, called where the thing happens ----

    /**
     * An auth request answered ({@code outcome}: accepted, pending, ... or refused) by {@code rule} (null or blank:
     * none).
     */
    public void authAnswered(String id, String outcome, String rule) {
        emit(
                "brine/auth/" + outcome,
                List.of(id),
                Map.of("id", id, "outcome", outcome, "rule", rule == null ? "none" : rule));
    }

    /** Job {@code jid} of {@code fun} (null: no publisher ACL allows it) was published to {@code minions}. */
    public void published(String jid, String fun, Collection<String> minions) {
        String function = fun == null ? "unknown" : fun;
        emit(
                "brine/job/" + jid + "/new",
                minions,
                function,
                Map.of("jid", jid, "fun", function, "minions", List.copyOf(minions)));
    }

    /**
     * {@code minionId}'s return for job {@code jid} of {@code fun}, which targeted {@code jobMinions}, was stored. The
     * event is about the job, so it goes to the publishers that could have published the whole job.
     */
    public void returned(
            String jid, String fun, Collection<String> jobMinions, String minionId, boolean success, int retcode) {
        String function = fun == null ? "unknown" : fun;
        emit(
                "brine/job/" + jid + "/ret/" + minionId,
                jobMinions,
                function,
                Map.of("jid", jid, "fun", function, "id", minionId, "success", success, "retcode", retcode));
    }

    /** A key changed state in the key store (the master's decision, or brine-key's in another process). */
    public void keyChanged(KeyChange change) {
        String to = change.to().map(KeyState::dirName).orElse("deleted");
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("id", change.id());
        data.put("from", change.from().map(KeyState::dirName).orElse("none"));
        data.put("to", to);
        emit("brine/key/" + to, List.of(change.id()), data);
    }

    /**
     * A minion's request to rotate its key was answered (PROTOCOL.md 6.3).
     *
     * @param result rotated, pending (waits for an admin) or refused
     */
    public void minionKeyRotation(String id, String result, String newFingerprint, String reason) {
        emit(
                "brine/key/minion/" + result,
                List.of(id),
                Map.of("id", id, "fingerprint", newFingerprint, "reason", reason));
    }

    /**
     * A master key rotation was loaded (PROTOCOL.md 6.4): {@code newest} is its record, {@code fingerprint} the key
     * now in force; its chain went to {@code sent} sessions, {@code unreachable} get it at their next auth.
     */
    public void masterKeyLoaded(MasterSuccession newest, String fingerprint, int sent, int unreachable) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("fingerprint", fingerprint);
        data.put("previous", fingerprintOf(newest.previousKey()));
        data.put("grace_until", Instant.ofEpochMilli(newest.graceUntilMs()).toString());
        data.put("signing_key_signed", newest.signingSignature() != null);
        data.put("sent", sent);
        data.put("unreachable", unreachable);
        emit("brine/key/master/rotated", List.of(), data);
    }

    /** The previous master key's grace ended: it signs nothing any more. */
    public void masterKeyRetired(String fingerprint) {
        emit("brine/key/master/retired", List.of(), Map.of("fingerprint", fingerprint));
    }

    private static String fingerprintOf(byte[] spki) {
        try {
            return Fingerprints.of(RsaKeys.publicKeyFromDer(spki));
        } catch (KeyFormatException e) {
            return "unknown"; // the master loaded this chain; its keys parsed then
        }
    }

    /** The publish key was rotated to {@code generation}. */
    public void rotated(long generation, String reason) {
        emit("brine/key/rotated", List.of(), Map.of("generation", generation, "reason", reason));
    }

    private static boolean visible(Subscriber subscriber, Collection<String> minions, String fun) {
        if (subscriber.acl().isEmpty()) {
            return true;
        }
        Visibility.Decision last = subscriber.last().last;
        // The same collection (by identity: a job's is immutable) and function: the same answer.
        if (last != null && last.minions() == minions && Objects.equals(last.fun(), fun)) {
            return last.visible();
        }
        boolean visible = !minions.isEmpty()
                && minions.stream().allMatch(subscriber.minionAllowed())
                && (fun == null || subscriber.functionAllowed().test(fun));
        subscriber.last().last = new Visibility.Decision(minions, fun, visible);
        return visible;
    }
}
