package io.brine.protocol.message;

import io.brine.protocol.codec.FieldLimits;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What travels sealed inside a {@link SessionFrame}, one record per message. Each record travels one way, named by the
 * direction it implements: {@link FromMinion} and {@link FromPublisher} to the master (a session is either a minion's
 * or a publisher's), {@link ToMinion} and {@link ToPublisher} from it. A receiver opens a frame for its own direction
 * ({@code Sessions.open(key, frame, FromMinion.class)}) and the codec refuses any other message as malformed, so each
 * receiver's switch names exactly the messages it handles.
 */
public sealed interface SessionMessage {

    SessionType type();

    /** Minion to master. */
    sealed interface FromMinion extends SessionMessage {

        /** One constant per record, so that the master's switch is exhaustive (Java 17 cannot switch on types). */
        enum Kind {
            RETURN,
            GRAINS,
            HEARTBEAT,
            KEY_REQUEST,
            KEY_ROTATE
        }

        Kind fromMinion();
    }

    /** Publisher to master. */
    sealed interface FromPublisher extends SessionMessage {

        /** One constant per record, so that the master's switch is exhaustive. */
        enum Kind {
            PUBLISH_REQUEST,
            JOB_QUERY,
            EVENTS_SUBSCRIBE,
            HEARTBEAT
        }

        Kind fromPublisher();
    }

    /** Master to minion. */
    sealed interface ToMinion extends SessionMessage {

        /** One constant per record, so that the minion's switch is exhaustive. */
        enum Kind {
            ACK,
            KEY_UPDATE,
            HEARTBEAT_REPLY,
            KEY_ROTATE_REPLY,
            MASTER_KEY_SUCCESSION,
            KEY_ROTATE_ASK
        }

        Kind toMinion();
    }

    /** Master to publisher. */
    sealed interface ToPublisher extends SessionMessage {

        /** One constant per record, so that a publisher's switch is exhaustive. */
        enum Kind {
            PUBLISH_REPLY,
            RETURN_EVENT,
            JOB_REPLY,
            EVENT,
            HEARTBEAT_REPLY
        }

        Kind toPublisher();
    }

    /** Minion to master: the outcome of a job. The minion's identity comes from the session, not from here. */
    record Return(String jid, String fun, Object returnValue, int retcode, boolean success, long durationMs)
            implements FromMinion {
        @Override
        public SessionType type() {
            return SessionType.RETURN;
        }

        @Override
        public FromMinion.Kind fromMinion() {
            return FromMinion.Kind.RETURN;
        }
    }

    /** Minion to master: its grains, at auth and when they change. Claims, never authority. */
    record Grains(Map<String, Object> grains) implements FromMinion {
        public Grains {
            grains = Copies.map(grains);
        }

        @Override
        public SessionType type() {
            return SessionType.GRAINS;
        }

        @Override
        public FromMinion.Kind fromMinion() {
            return FromMinion.Kind.GRAINS;
        }
    }

    /** Minion or publisher to master: still here, holding this publish key generation. */
    record Heartbeat(long generation) implements FromMinion, FromPublisher {
        @Override
        public SessionType type() {
            return SessionType.HEARTBEAT;
        }

        @Override
        public FromMinion.Kind fromMinion() {
            return FromMinion.Kind.HEARTBEAT;
        }

        @Override
        public FromPublisher.Kind fromPublisher() {
            return FromPublisher.Kind.HEARTBEAT;
        }
    }

    /** Minion to master: send me the publish key of this generation (it saw a publication it cannot open). */
    record KeyRequest(long generation) implements FromMinion {
        @Override
        public SessionType type() {
            return SessionType.KEY_REQUEST;
        }

        @Override
        public FromMinion.Kind fromMinion() {
            return FromMinion.Kind.KEY_REQUEST;
        }
    }

    /**
     * Master to minion: stop resending these returns. Without a reason they are stored; with one (a field minions
     * before it do not know, PROTOCOL.md 6.1) they were refused, and {@code reason} says why.
     */
    record Ack(List<String> jids, String reason) implements ToMinion {
        /** The reason as the codec reads it back: control characters as {@code ?}, at most 1,024 UTF-8 bytes. */
        public Ack {
            jids = List.copyOf(jids);
            reason = reason == null || reason.isEmpty() ? null : fit(reason);
        }

        private static String fit(String reason) {
            StringBuilder fitted = new StringBuilder(Math.min(reason.length(), FieldLimits.MAX_REASON));
            int bytes = 0;
            for (int i = 0; i < reason.length(); ) {
                int c = reason.codePointAt(i);
                int size = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
                if (bytes + size > FieldLimits.MAX_REASON) {
                    break;
                }
                bytes += size;
                fitted.appendCodePoint(c < 0x20 || (c >= 0x7f && c < 0xa0) ? '?' : c);
                i += Character.charCount(c);
            }
            return fitted.toString();
        }

        /** The returns are stored. */
        public Ack(List<String> jids) {
            this(jids, null);
        }

        @Override
        public SessionType type() {
            return SessionType.ACK;
        }

        @Override
        public ToMinion.Kind toMinion() {
            return ToMinion.Kind.ACK;
        }
    }

    /** Master to minion: a new publish key generation (rotation), and the serial floor that goes with it. */
    record KeyUpdate(long generation, byte[] publishKey, long serialFloor) implements ToMinion {
        @Override
        public SessionType type() {
            return SessionType.KEY_UPDATE;
        }

        @Override
        public ToMinion.Kind toMinion() {
            return ToMinion.Kind.KEY_UPDATE;
        }

        @Override
        public String toString() {
            return "KeyUpdate[generation=" + generation + ", publishKey=[redacted], serialFloor=" + serialFloor + "]";
        }
    }

    /** Master to minion or publisher: the current generation, so a minion that missed a rotation notices. */
    record HeartbeatReply(long generation) implements ToMinion, ToPublisher {
        @Override
        public SessionType type() {
            return SessionType.HEARTBEAT_REPLY;
        }

        @Override
        public ToMinion.Kind toMinion() {
            return ToMinion.Kind.HEARTBEAT_REPLY;
        }

        @Override
        public ToPublisher.Kind toPublisher() {
            return ToPublisher.Kind.HEARTBEAT_REPLY;
        }
    }

    /**
     * Minion to master: replace my accepted key (the one this session was opened with) by {@code newKey}, an X.509
     * SubjectPublicKeyInfo DER; {@code oldSignature} and {@code newSignature} are RSA-PSS signatures by the two
     * private keys over {@link io.brine.protocol.codec.KeyRotations#request}'s bytes (PROTOCOL.md 6.3).
     */
    record KeyRotate(byte[] newKey, byte[] oldSignature, byte[] newSignature) implements FromMinion {
        public KeyRotate {
            newKey = newKey.clone();
            oldSignature = oldSignature.clone();
            newSignature = newSignature.clone();
        }

        @Override
        public byte[] newKey() {
            return newKey.clone();
        }

        @Override
        public byte[] oldSignature() {
            return oldSignature.clone();
        }

        @Override
        public byte[] newSignature() {
            return newSignature.clone();
        }

        @Override
        public SessionType type() {
            return SessionType.KEY_ROTATE;
        }

        @Override
        public FromMinion.Kind fromMinion() {
            return FromMinion.Kind.KEY_ROTATE;
        }
    }

    /**
     * Master to minion: the answer to a {@link KeyRotate}: {@code rotated} when the key of fingerprint {@code
     * newFingerprint} is now the minion's accepted key, else refused for {@code reason}; signed by the master's key
     * over {@link io.brine.protocol.codec.KeyRotations#reply}'s bytes, so the minion switches keys only on the word of
     * the master it pinned. {@code pending} ({@code key_rotation: pending}, never with {@code rotated}): the new key
     * waits for an admin and the old one stays accepted; the minion keeps both and asks again later.
     */
    record KeyRotateReply(boolean rotated, String newFingerprint, String reason, byte[] signature, boolean pending)
            implements ToMinion {
        public KeyRotateReply {
            signature = signature.clone();
            if (rotated && pending) {
                throw new IllegalArgumentException("a key rotation is either done or pending");
            }
        }

        /** A rotation done or refused. */
        public KeyRotateReply(boolean rotated, String newFingerprint, String reason, byte[] signature) {
            this(rotated, newFingerprint, reason, signature, false);
        }

        @Override
        public byte[] signature() {
            return signature.clone();
        }

        @Override
        public SessionType type() {
            return SessionType.KEY_ROTATE_REPLY;
        }

        @Override
        public ToMinion.Kind toMinion() {
            return ToMinion.Kind.KEY_ROTATE_REPLY;
        }
    }

    /**
     * Master to minion: the master's key chain after a rotation of its key (PROTOCOL.md 6.4), oldest record first;
     * the minion walks it from the key it pinned and pins the newest.
     */
    record MasterKeySuccession(List<MasterSuccession> chain) implements ToMinion {
        public MasterKeySuccession {
            chain = List.copyOf(chain);
        }

        @Override
        public SessionType type() {
            return SessionType.MASTER_KEY_SUCCESSION;
        }

        @Override
        public ToMinion.Kind toMinion() {
            return ToMinion.Kind.MASTER_KEY_SUCCESSION;
        }
    }

    /**
     * Master to minion: an admin asked this minion to rotate its key ({@code brine-key --rotate-keys}, PROTOCOL.md
     * 6.3): the minion whose current key has fingerprint {@code fingerprint} asks for a rotation with a {@link
     * KeyRotate}, as {@code brine-minion --rotate-key} does; one holding another key ignores it (a stale ask).
     */
    record KeyRotateAsk(String fingerprint) implements ToMinion {
        public KeyRotateAsk {
            Objects.requireNonNull(fingerprint, "fingerprint");
        }

        @Override
        public SessionType type() {
            return SessionType.KEY_ROTATE_ASK;
        }

        @Override
        public ToMinion.Kind toMinion() {
            return ToMinion.Kind.KEY_ROTATE_ASK;
        }
    }

    /** Publisher to master: publish this job. The publisher's name comes from its session. */
    record PublishRequest(
            String targetType,
            String target,
            String fun,
            List<Object> args,
            Map<String, Object> kwargs,
            int timeoutSeconds)
            implements FromPublisher {
        public PublishRequest {
            args = Copies.list(args);
            kwargs = Copies.map(kwargs);
        }

        @Override
        public SessionType type() {
            return SessionType.PUBLISH_REQUEST;
        }

        @Override
        public FromPublisher.Kind fromPublisher() {
            return FromPublisher.Kind.PUBLISH_REQUEST;
        }
    }

    /** Publisher to master: one job ({@code jid}) or, with a null jid, the newest {@code limit} jobs. */
    record JobQuery(String jid, int limit) implements FromPublisher {
        @Override
        public SessionType type() {
            return SessionType.JOB_QUERY;
        }

        @Override
        public FromPublisher.Kind fromPublisher() {
            return FromPublisher.Kind.JOB_QUERY;
        }
    }

    /**
     * Master to publisher: the job went out ({@code jid}, the minions it targets, those no master could reach), or
     * was refused ({@code error} set, {@code jid} null: it runs nowhere).
     */
    record PublishReply(String jid, List<String> minions, List<String> unreachable, String error)
            implements ToPublisher {

        /**
         * A master answers a {@code PublishRequest} within this (PROTOCOL.md 8.7): in a cluster, up to 5 s waiting
         * for a lost ZooKeeper connection, 2 s for the announcement's write and 3 s for the other masters' reports.
         */
        public static final Duration ANSWER_WITHIN = Duration.ofSeconds(10);

        /**
         * How long a publisher waits for that answer at least: longer than {@link #ANSWER_WITHIN}, so a job the
         * master publishes is never one its publisher gave up on.
         */
        public static final Duration AWAIT_AT_LEAST = Duration.ofSeconds(15);

        public PublishReply {
            minions = List.copyOf(minions);
            unreachable = List.copyOf(unreachable);
        }

        @Override
        public SessionType type() {
            return SessionType.PUBLISH_REPLY;
        }

        @Override
        public ToPublisher.Kind toPublisher() {
            return ToPublisher.Kind.PUBLISH_REPLY;
        }
    }

    /** Master to publisher: a minion's return for a job this publisher session published. */
    record ReturnEvent(String jid, String minionId, Object returnValue, int retcode, boolean success, long durationMs)
            implements ToPublisher {
        @Override
        public SessionType type() {
            return SessionType.RETURN_EVENT;
        }

        @Override
        public ToPublisher.Kind toPublisher() {
            return ToPublisher.Kind.RETURN_EVENT;
        }
    }

    /** Master to publisher: the answer to a {@link JobQuery}, as a document, or an error. */
    record JobReply(Map<String, Object> document, String error) implements ToPublisher {
        public JobReply {
            document = Copies.map(document);
        }

        @Override
        public SessionType type() {
            return SessionType.JOB_REPLY;
        }

        @Override
        public ToPublisher.Kind toPublisher() {
            return ToPublisher.Kind.JOB_REPLY;
        }
    }

    /** Publisher to master: send me the events whose tag matches the glob {@code tag}, from now on. */
    record EventsSubscribe(String tag) implements FromPublisher {
        @Override
        public SessionType type() {
            return SessionType.EVENTS_SUBSCRIBE;
        }

        @Override
        public FromPublisher.Kind fromPublisher() {
            return FromPublisher.Kind.EVENTS_SUBSCRIBE;
        }
    }

    /**
     * Master to publisher: one event (an auth decision, a key change, a publication, a return, a rotation), tagged
     * as Salt tags its events ({@code brine/auth/accepted}, {@code brine/job/JID/ret/ID}).
     */
    record Event(String tag, long timeMs, Map<String, Object> data) implements ToPublisher {
        public Event {
            data = Copies.map(data);
        }

        @Override
        public SessionType type() {
            return SessionType.EVENT;
        }

        @Override
        public ToPublisher.Kind toPublisher() {
            return ToPublisher.Kind.EVENT;
        }
    }
}
