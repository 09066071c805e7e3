package io.brine.protocol.codec;

import static io.brine.protocol.codec.FieldLimits.MAX_ACK_JIDS;
import static io.brine.protocol.codec.FieldLimits.MAX_EVENT_TAG;
import static io.brine.protocol.codec.FieldLimits.MAX_FUN;
import static io.brine.protocol.codec.FieldLimits.MAX_GRANT;
import static io.brine.protocol.codec.FieldLimits.MAX_IDS;
import static io.brine.protocol.codec.FieldLimits.MAX_PUBLISHER;
import static io.brine.protocol.codec.FieldLimits.MAX_REASON;
import static io.brine.protocol.codec.FieldLimits.MAX_RSA_BLOCK;
import static io.brine.protocol.codec.FieldLimits.MAX_SPKI;
import static io.brine.protocol.codec.FieldLimits.MAX_TARGET_EXPRESSION;
import static io.brine.protocol.codec.FieldLimits.MAX_TOKEN;
import static io.brine.protocol.codec.FieldLimits.NONCE_LENGTH;
import static io.brine.protocol.codec.FieldLimits.PUBLISH_KEY_LENGTH;
import static io.brine.protocol.codec.FieldLimits.SESSION_ID_LENGTH;

import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Aead;
import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.ClientAuth;
import io.brine.protocol.message.FrameType;
import io.brine.protocol.message.MasterSuccession;
import io.brine.protocol.message.Message;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionType;
import io.brine.protocol.message.SessionUnknown;
import io.brine.protocol.message.Suite;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

// Over 400 lines: the body layout of every message type side by side (PROTOCOL.md §5-6), hand-written per record as
// DESIGN §7 asks; one table the spec can be read against.
/**
 * The body layouts: one msgpack array per record, its components in record order (PROTOCOL.md, "Messages"). Each
 * {@code read} validates every field; each {@code write} only lays fields out.
 */
final class Bodies {

    static final Set<String> TARGET_TYPES = Set.of("glob", "pcre", "list", "grain", "compound");

    private Bodies() {}

    // ---- outer messages

    static void write(MsgWriter out, Message message) {
        if (message instanceof AuthRequest m) {
            out.array(8)
                    .integer(m.suite())
                    .str("AuthRequest.id", m.id())
                    .bin("AuthRequest.publicKey", m.publicKey())
                    .bin("AuthRequest.nonce", m.nonce())
                    .integer(m.timestampMs());
            Values.writeMap(out, "AuthRequest.claims", m.claims());
            out.binOrNil("AuthRequest.grant", m.grant()).strOrNil("AuthRequest.token", m.token());
        } else if (message instanceof ClientAuth m) {
            out.array(5)
                    .integer(m.suite())
                    .str("ClientAuth.name", m.name())
                    .bin("ClientAuth.publicKey", m.publicKey())
                    .bin("ClientAuth.nonce", m.nonce())
                    .integer(m.timestampMs());
        } else if (message instanceof AuthReply m) {
            require(m.status() != null, "AuthReply.status is null");
            out.array(m.masterChain().isEmpty() ? 8 : 9)
                    .integer(m.suite())
                    .integer(m.status().code())
                    .bin("AuthReply.nonce", m.nonce())
                    .integer(m.timestampMs())
                    .bin("AuthReply.masterPublicKey", m.masterPublicKey())
                    .str("AuthReply.reason", m.reason())
                    .integer(m.retryAfterSeconds());
            AuthReply.Session s = m.session();
            if (s == null) {
                out.nil();
            } else {
                out.array(6)
                        .bin("Session.sessionId", s.sessionId())
                        .integer(s.generation())
                        .bin("Session.wrappedPublishKey", s.wrappedPublishKey())
                        .bin("Session.wrappedRequestKey", s.wrappedRequestKey())
                        .integer(s.publishPort())
                        .integer(s.serialFloor());
            }
            if (!m.masterChain().isEmpty()) {
                MasterSuccessions.writeChain(out, m.masterChain());
            }
        } else if (message instanceof Publish m) {
            out.array(6)
                    .integer(m.suite())
                    .integer(m.generation())
                    .integer(m.serial())
                    .integer(m.issuedMs())
                    .str("Publish.jid", m.jid())
                    .bin("Publish.box", m.box());
        } else if (message instanceof SessionFrame m) {
            require(m.direction() != null, "SessionFrame.direction is null");
            out.array(4)
                    .bin("SessionFrame.sessionId", m.sessionId())
                    .integer(m.direction().code())
                    .integer(m.counter())
                    .bin("SessionFrame.box", m.box());
        } else if (message instanceof SessionUnknown m) {
            out.array(3)
                    .bin("SessionUnknown.sessionId", m.sessionId())
                    .integer(m.counter())
                    .integer(m.timestampMs());
        } else {
            throw new IllegalArgumentException(
                    "no layout for " + message.getClass().getName());
        }
    }

    static Message read(FrameType type, MsgReader in) throws IOException, MalformedException {
        return switch (type) {
            case AUTH_REQUEST -> authRequest(in);
            case CLIENT_AUTH -> clientAuth(in);
            case AUTH_REPLY -> authReply(in);
            case PUBLISH -> publish(in);
            case SESSION -> sessionFrame(in);
            case SESSION_UNKNOWN -> sessionUnknown(in);
        };
    }

    private static AuthRequest authRequest(MsgReader in) throws IOException, MalformedException {
        in.array("AuthRequest", 8);
        int suite = suite(in, "AuthRequest.suite");
        String id = in.str("AuthRequest.id", MinionIds.MAX_LENGTH);
        Optional<String> problem = MinionIds.problem(id);
        if (problem.isPresent()) {
            throw new MalformedException("AuthRequest.id: " + problem.get());
        }
        byte[] publicKey = in.bin("AuthRequest.publicKey", 1, MAX_SPKI);
        byte[] nonce = in.bin("AuthRequest.nonce", NONCE_LENGTH, NONCE_LENGTH);
        long timestampMs = in.nonNegative("AuthRequest.timestampMs");
        var claims = Values.readMap(in, "AuthRequest.claims");
        byte[] grant = in.binOrNil("AuthRequest.grant", 1, MAX_GRANT);
        String token = in.strOrNil("AuthRequest.token", MAX_TOKEN);
        return new AuthRequest(suite, id, publicKey, nonce, timestampMs, claims, grant, token);
    }

    private static ClientAuth clientAuth(MsgReader in) throws IOException, MalformedException {
        in.array("ClientAuth", 5);
        int suite = suite(in, "ClientAuth.suite");
        String name = in.str("ClientAuth.name", MinionIds.MAX_LENGTH);
        Optional<String> problem = MinionIds.problem(name);
        if (problem.isPresent()) {
            throw new MalformedException("ClientAuth.name: " + problem.get());
        }
        byte[] publicKey = in.bin("ClientAuth.publicKey", 1, MAX_SPKI);
        byte[] nonce = in.bin("ClientAuth.nonce", NONCE_LENGTH, NONCE_LENGTH);
        long timestampMs = in.nonNegative("ClientAuth.timestampMs");
        return new ClientAuth(suite, name, publicKey, nonce, timestampMs);
    }

    private static AuthReply authReply(MsgReader in) throws IOException, MalformedException {
        int fields = in.arrayBetween("AuthReply", 8, 9);
        int suite = suite(in, "AuthReply.suite");
        long code = in.int64("AuthReply.status");
        AuthStatus status =
                AuthStatus.of(code).orElseThrow(() -> new MalformedException("AuthReply.status: unknown code " + code));
        byte[] nonce = in.bin("AuthReply.nonce", NONCE_LENGTH, NONCE_LENGTH);
        long timestampMs = in.nonNegative("AuthReply.timestampMs");
        byte[] masterPublicKey = in.bin("AuthReply.masterPublicKey", 1, MAX_SPKI);
        String reason = in.text("AuthReply.reason", MAX_REASON, true);
        int retryAfter = in.int32("AuthReply.retryAfterSeconds", 0, Integer.MAX_VALUE);
        AuthReply.Session session = null;
        if (in.isNil("AuthReply.session")) {
            in.nil("AuthReply.session");
        } else {
            in.array("AuthReply.session", 6);
            byte[] sessionId = in.bin("Session.sessionId", SESSION_ID_LENGTH, SESSION_ID_LENGTH);
            long generation = in.nonNegative("Session.generation");
            // Empty for publisher sessions: publishers never hold the publish key.
            byte[] wrappedPublishKey = in.bin("Session.wrappedPublishKey", 0, MAX_RSA_BLOCK);
            byte[] wrappedRequestKey = in.bin("Session.wrappedRequestKey", 1, MAX_RSA_BLOCK);
            int publishPort = in.int32("Session.publishPort", 0, 65535);
            long serialFloor = in.nonNegative("Session.serialFloor");
            session = new AuthReply.Session(
                    sessionId, generation, wrappedPublishKey, wrappedRequestKey, publishPort, serialFloor);
        }
        if ((status == AuthStatus.ACCEPTED) != (session != null)) {
            throw new MalformedException("AuthReply.session: present with ACCEPTED and only then");
        }
        List<MasterSuccession> chain = fields == 9 ? MasterSuccessions.readChain(in) : List.of();
        return new AuthReply(suite, status, nonce, timestampMs, masterPublicKey, reason, retryAfter, session, chain);
    }

    private static Publish publish(MsgReader in) throws IOException, MalformedException {
        in.array("Publish", 6);
        int suite = suite(in, "Publish.suite");
        long generation = in.nonNegative("Publish.generation");
        long serial = in.nonNegative("Publish.serial");
        long issuedMs = in.nonNegative("Publish.issuedMs");
        String jid = jid(in, "Publish.jid");
        byte[] box = in.bin("Publish.box", Aead.OVERHEAD, Integer.MAX_VALUE);
        return new Publish(suite, generation, serial, issuedMs, jid, box);
    }

    private static SessionFrame sessionFrame(MsgReader in) throws IOException, MalformedException {
        in.array("SessionFrame", 4);
        byte[] sessionId = in.bin("SessionFrame.sessionId", SESSION_ID_LENGTH, SESSION_ID_LENGTH);
        int code = in.int32("SessionFrame.direction", 0, 1);
        SessionFrame.Direction direction = code == SessionFrame.Direction.MINION_TO_MASTER.code()
                ? SessionFrame.Direction.MINION_TO_MASTER
                : SessionFrame.Direction.MASTER_TO_MINION;
        long counter = in.range("SessionFrame.counter", 1, Long.MAX_VALUE);
        byte[] box = in.bin("SessionFrame.box", Aead.OVERHEAD, Integer.MAX_VALUE);
        return new SessionFrame(sessionId, direction, counter, box);
    }

    private static SessionUnknown sessionUnknown(MsgReader in) throws IOException, MalformedException {
        in.array("SessionUnknown", 3);
        byte[] sessionId = in.bin("SessionUnknown.sessionId", SESSION_ID_LENGTH, SESSION_ID_LENGTH);
        long counter = in.range("SessionUnknown.counter", 1, Long.MAX_VALUE);
        long timestampMs = in.nonNegative("SessionUnknown.timestampMs");
        return new SessionUnknown(sessionId, counter, timestampMs);
    }

    // ---- inner session messages

    static void write(MsgWriter out, SessionMessage message) {
        if (message instanceof SessionMessage.Return m) {
            out.array(6).str("Return.jid", m.jid()).str("Return.fun", m.fun());
            Values.write(out, "Return.returnValue", m.returnValue());
            out.integer(m.retcode()).bool(m.success()).integer(m.durationMs());
        } else if (message instanceof SessionMessage.Grains m) {
            out.array(1);
            Values.writeMap(out, "Grains.grains", m.grains());
        } else if (message instanceof SessionMessage.Heartbeat m) {
            out.array(1).integer(m.generation());
        } else if (message instanceof SessionMessage.KeyRequest m) {
            out.array(1).integer(m.generation());
        } else if (message instanceof SessionMessage.Ack m) {
            out.array(m.reason() == null ? 1 : 2).array(m.jids().size());
            for (String jid : m.jids()) {
                out.str("Ack.jids", jid);
            }
            if (m.reason() != null) {
                out.str("Ack.reason", m.reason());
            }
        } else if (message instanceof SessionMessage.KeyUpdate m) {
            out.array(3)
                    .integer(m.generation())
                    .bin("KeyUpdate.publishKey", m.publishKey())
                    .integer(m.serialFloor());
        } else if (message instanceof SessionMessage.HeartbeatReply m) {
            out.array(1).integer(m.generation());
        } else if (message instanceof SessionMessage.PublishRequest m) {
            out.array(6)
                    .str("PublishRequest.targetType", m.targetType())
                    .str("PublishRequest.target", m.target())
                    .str("PublishRequest.fun", m.fun());
            Values.writeList(out, "PublishRequest.args", m.args());
            Values.writeMap(out, "PublishRequest.kwargs", m.kwargs());
            out.integer(m.timeoutSeconds());
        } else if (message instanceof SessionMessage.JobQuery m) {
            out.array(2).strOrNil("JobQuery.jid", m.jid()).integer(m.limit());
        } else if (message instanceof SessionMessage.PublishReply m) {
            out.array(4).strOrNil("PublishReply.jid", m.jid());
            writeIds(out, "PublishReply.minions", m.minions());
            writeIds(out, "PublishReply.unreachable", m.unreachable());
            out.strOrNil("PublishReply.error", m.error());
        } else if (message instanceof SessionMessage.ReturnEvent m) {
            out.array(6).str("ReturnEvent.jid", m.jid()).str("ReturnEvent.minionId", m.minionId());
            Values.write(out, "ReturnEvent.returnValue", m.returnValue());
            out.integer(m.retcode()).bool(m.success()).integer(m.durationMs());
        } else if (message instanceof SessionMessage.JobReply m) {
            out.array(2);
            Values.writeMap(out, "JobReply.document", m.document());
            out.strOrNil("JobReply.error", m.error());
        } else if (message instanceof SessionMessage.EventsSubscribe m) {
            out.array(1).str("EventsSubscribe.tag", m.tag());
        } else if (message instanceof SessionMessage.Event m) {
            out.array(3).str("Event.tag", m.tag()).integer(m.timeMs());
            Values.writeMap(out, "Event.data", m.data());
        } else if (message instanceof SessionMessage.KeyRotateAsk m) {
            out.array(1).str("KeyRotateAsk.fingerprint", m.fingerprint());
        } else if (message instanceof SessionMessage.MasterKeySuccession m) {
            out.array(1);
            MasterSuccessions.writeChain(out, m.chain());
        } else if (!KeyRotations.write(out, message)) {
            throw new IllegalArgumentException(
                    "no layout for " + message.getClass().getName());
        }
    }

    private static void writeIds(MsgWriter out, String field, List<String> ids) {
        out.array(ids.size());
        for (String id : ids) {
            out.str(field, id);
        }
    }

    private static List<String> readIds(MsgReader in, String field) throws IOException, MalformedException {
        int count = in.arrayUpTo(field, MAX_IDS);
        List<String> ids = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String id = in.str(field, MinionIds.MAX_LENGTH);
            Optional<String> problem = MinionIds.problem(id);
            if (problem.isPresent()) {
                throw new MalformedException(field + ": " + problem.get());
            }
            ids.add(id);
        }
        return ids;
    }

    static SessionMessage readInner(SessionType type, MsgReader in) throws IOException, MalformedException {
        return switch (type) {
            case RETURN -> {
                in.array("Return", 6);
                String jid = jid(in, "Return.jid");
                String fun = in.text("Return.fun", MAX_FUN, false);
                Object value = Values.read(in, "Return.returnValue");
                int retcode = in.int32("Return.retcode", Integer.MIN_VALUE, Integer.MAX_VALUE);
                boolean success = in.bool("Return.success");
                long durationMs = in.nonNegative("Return.durationMs");
                yield new SessionMessage.Return(jid, fun, value, retcode, success, durationMs);
            }
            case GRAINS -> {
                in.array("Grains", 1);
                yield new SessionMessage.Grains(Values.readMap(in, "Grains.grains"));
            }
            case HEARTBEAT -> {
                in.array("Heartbeat", 1);
                yield new SessionMessage.Heartbeat(in.nonNegative("Heartbeat.generation"));
            }
            case KEY_REQUEST -> {
                in.array("KeyRequest", 1);
                yield new SessionMessage.KeyRequest(in.nonNegative("KeyRequest.generation"));
            }
            case ACK -> {
                int fields = in.arrayBetween("Ack", 1, 2);
                int count = in.arrayUpTo("Ack.jids", MAX_ACK_JIDS);
                List<String> jids = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    jids.add(jid(in, "Ack.jids"));
                }
                String reason = fields == 2 ? in.text("Ack.reason", MAX_REASON, false) : null;
                yield new SessionMessage.Ack(jids, reason);
            }
            case KEY_UPDATE -> {
                in.array("KeyUpdate", 3);
                long generation = in.nonNegative("KeyUpdate.generation");
                byte[] key = in.bin("KeyUpdate.publishKey", PUBLISH_KEY_LENGTH, PUBLISH_KEY_LENGTH);
                long serialFloor = in.nonNegative("KeyUpdate.serialFloor");
                yield new SessionMessage.KeyUpdate(generation, key, serialFloor);
            }
            case HEARTBEAT_REPLY -> {
                in.array("HeartbeatReply", 1);
                yield new SessionMessage.HeartbeatReply(in.nonNegative("HeartbeatReply.generation"));
            }
            case PUBLISH_REQUEST -> {
                in.array("PublishRequest", 6);
                String targetType = in.str("PublishRequest.targetType", 16);
                String target = in.text("PublishRequest.target", MAX_TARGET_EXPRESSION, false);
                String fun = in.text("PublishRequest.fun", MAX_FUN, false);
                List<Object> args = Values.readList(in, "PublishRequest.args");
                var kwargs = Values.readMap(in, "PublishRequest.kwargs");
                int timeout = in.int32("PublishRequest.timeoutSeconds", 0, Integer.MAX_VALUE);
                yield new SessionMessage.PublishRequest(targetType, target, fun, args, kwargs, timeout);
            }
            case JOB_QUERY -> {
                in.array("JobQuery", 2);
                String jid = in.isNil("JobQuery.jid") ? nil(in, "JobQuery.jid") : jid(in, "JobQuery.jid");
                int limit = in.int32("JobQuery.limit", 0, Integer.MAX_VALUE);
                yield new SessionMessage.JobQuery(jid, limit);
            }
            case PUBLISH_REPLY -> {
                in.array("PublishReply", 4);
                String jid = in.isNil("PublishReply.jid") ? nil(in, "PublishReply.jid") : jid(in, "PublishReply.jid");
                List<String> minions = readIds(in, "PublishReply.minions");
                List<String> unreachable = readIds(in, "PublishReply.unreachable");
                String error = in.strOrNil("PublishReply.error", MAX_REASON);
                yield new SessionMessage.PublishReply(jid, minions, unreachable, error);
            }
            case RETURN_EVENT -> {
                in.array("ReturnEvent", 6);
                String jid = jid(in, "ReturnEvent.jid");
                String minionId = in.str("ReturnEvent.minionId", MinionIds.MAX_LENGTH);
                if (!MinionIds.isValid(minionId)) {
                    throw new MalformedException("ReturnEvent.minionId: not a valid id");
                }
                Object value = Values.read(in, "ReturnEvent.returnValue");
                int retcode = in.int32("ReturnEvent.retcode", Integer.MIN_VALUE, Integer.MAX_VALUE);
                boolean success = in.bool("ReturnEvent.success");
                long durationMs = in.nonNegative("ReturnEvent.durationMs");
                yield new SessionMessage.ReturnEvent(jid, minionId, value, retcode, success, durationMs);
            }
            case JOB_REPLY -> {
                in.array("JobReply", 2);
                var document = Values.readMap(in, "JobReply.document");
                String error = in.strOrNil("JobReply.error", MAX_REASON);
                yield new SessionMessage.JobReply(document, error);
            }
            case EVENTS_SUBSCRIBE -> {
                in.array("EventsSubscribe", 1);
                yield new SessionMessage.EventsSubscribe(in.text("EventsSubscribe.tag", MAX_EVENT_TAG, false));
            }
            case EVENT -> {
                in.array("Event", 3);
                String tag = in.text("Event.tag", MAX_EVENT_TAG, false);
                long timeMs = in.nonNegative("Event.timeMs");
                yield new SessionMessage.Event(tag, timeMs, Values.readMap(in, "Event.data"));
            }
            case KEY_ROTATE, KEY_ROTATE_REPLY -> {
                yield KeyRotations.read(type, in);
            }
            case KEY_ROTATE_ASK -> {
                in.array("KeyRotateAsk", 1);
                yield new SessionMessage.KeyRotateAsk(
                        in.text("KeyRotateAsk.fingerprint", KeyRotations.FINGERPRINT_LENGTH, false));
            }
            case MASTER_KEY_SUCCESSION -> {
                in.array("MasterKeySuccession", 1);
                yield new SessionMessage.MasterKeySuccession(MasterSuccessions.readChain(in));
            }
        };
    }

    // ---- publish load

    static void write(MsgWriter out, PublishLoad load) {
        require(load.target() != null, "PublishLoad.target is null");
        out.array(7)
                .str("PublishLoad.jid", load.jid())
                .array(2)
                .str("Target.type", load.target().type())
                .str("Target.expression", load.target().expression())
                .str("PublishLoad.fun", load.fun());
        Values.writeList(out, "PublishLoad.args", load.args());
        Values.writeMap(out, "PublishLoad.kwargs", load.kwargs());
        out.integer(load.timeoutSeconds()).str("PublishLoad.publisher", load.publisher());
    }

    static PublishLoad readLoad(MsgReader in) throws IOException, MalformedException {
        in.array("PublishLoad", 7);
        String jid = jid(in, "PublishLoad.jid");
        in.array("PublishLoad.target", 2);
        String targetType = in.str("Target.type", 16);
        if (!TARGET_TYPES.contains(targetType)) {
            throw new MalformedException("Target.type: not one of "
                    + String.join(", ", TARGET_TYPES.stream().sorted().toList()));
        }
        String expression = in.text("Target.expression", MAX_TARGET_EXPRESSION, false);
        String fun = in.text("PublishLoad.fun", MAX_FUN, false);
        List<Object> args = Values.readList(in, "PublishLoad.args");
        var kwargs = Values.readMap(in, "PublishLoad.kwargs");
        int timeoutSeconds = in.int32("PublishLoad.timeoutSeconds", 0, Integer.MAX_VALUE);
        String publisher = in.text("PublishLoad.publisher", MAX_PUBLISHER, true);
        return new PublishLoad(
                jid, new PublishLoad.Target(targetType, expression), fun, args, kwargs, timeoutSeconds, publisher);
    }

    // ---- shared fields

    private static int suite(MsgReader in, String field) throws IOException, MalformedException {
        long suite = in.int64(field);
        if (suite != Suite.RSA_OAEP_PSS_AES256GCM) {
            throw new MalformedException(field + ": unknown suite " + suite);
        }
        return (int) suite;
    }

    private static String jid(MsgReader in, String field) throws IOException, MalformedException {
        String jid = in.str(field, Jids.MAX_LENGTH);
        Optional<String> problem = Jids.problem(jid);
        if (problem.isPresent()) {
            throw new MalformedException(field + ": " + problem.get());
        }
        return jid;
    }

    private static String nil(MsgReader in, String field) throws IOException, MalformedException {
        in.nil(field);
        return null;
    }

    private static void require(boolean condition, String problem) {
        if (!condition) {
            throw new IllegalArgumentException(problem);
        }
    }
}
