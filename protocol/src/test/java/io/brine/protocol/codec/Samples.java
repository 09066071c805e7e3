package io.brine.protocol.codec;

import io.brine.protocol.message.AuthReply;
import io.brine.protocol.message.AuthRequest;
import io.brine.protocol.message.AuthStatus;
import io.brine.protocol.message.ClientAuth;
import io.brine.protocol.message.FrameType;
import io.brine.protocol.message.Publish;
import io.brine.protocol.message.PublishLoad;
import io.brine.protocol.message.SessionFrame;
import io.brine.protocol.message.SessionMessage;
import io.brine.protocol.message.SessionUnknown;
import io.brine.protocol.message.Suite;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Fixed sample messages whose encodings the golden tests spell out byte by byte. */
final class Samples {

    static final long TS = 1_700_000_000_000L;
    static final byte[] SID = seq(16);
    static final byte[] NONCE = seq(32);
    static final String JID = "20240101120000123456";

    private Samples() {}

    static byte[] seq(int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) i;
        }
        return bytes;
    }

    static byte[] filled(int length, int value) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, (byte) value);
        return bytes;
    }

    static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex.replaceAll("\\s+", ""));
    }

    static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    static byte[] concat(byte[]... parts) {
        int length = 0;
        for (byte[] part : parts) {
            length += part.length;
        }
        byte[] out = new byte[length];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, out, at, part.length);
            at += part.length;
        }
        return out;
    }

    static Map<String, Object> map(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }

    static AuthRequest authRequest() {
        return new AuthRequest(
                Suite.RSA_OAEP_PSS_AES256GCM,
                "web1",
                hex("deadbeef"),
                NONCE,
                TS,
                map("os", "linux", "cpus", 4L),
                null,
                "t0k");
    }

    static AuthReply authReplyAccepted() {
        return new AuthReply(
                Suite.RSA_OAEP_PSS_AES256GCM,
                AuthStatus.ACCEPTED,
                NONCE,
                TS,
                hex("cafebabe"),
                "ok",
                0,
                new AuthReply.Session(SID, 3, hex("0102"), hex("0304"), 4505, 500));
    }

    static AuthReply authReplyPending() {
        return new AuthReply(
                Suite.RSA_OAEP_PSS_AES256GCM,
                AuthStatus.PENDING,
                NONCE,
                TS,
                hex("cafebabe"),
                "awaiting an admin",
                30,
                null);
    }

    static Publish publish() {
        return new Publish(Suite.RSA_OAEP_PSS_AES256GCM, 3, 1000, 1_700_000_000_000L, JID, filled(28, 0xaa));
    }

    static SessionFrame sessionFrame() {
        return new SessionFrame(SID, SessionFrame.Direction.MINION_TO_MASTER, 7, filled(28, 0xaa));
    }

    static SessionUnknown sessionUnknown() {
        return new SessionUnknown(SID, 7, TS);
    }

    static List<SessionMessage> innerMessages() {
        return List.of(
                new SessionMessage.Return(JID, "test.ping", true, 0, true, 12),
                new SessionMessage.Return(
                        JID,
                        "cmd.run",
                        map("stdout", "hi", "lines", List.of(1L, 2.5, "x"), "raw", hex("00ff"), "none", null),
                        -1,
                        false,
                        1234),
                new SessionMessage.Grains(map("os", "linux", "ipv4", List.of("10.0.0.1"))),
                new SessionMessage.Heartbeat(4),
                new SessionMessage.KeyRequest(4),
                new SessionMessage.Ack(List.of("j1", "j2")),
                new SessionMessage.KeyUpdate(4, filled(32, 0x11), 900),
                new SessionMessage.HeartbeatReply(4),
                new SessionMessage.PublishRequest(
                        "compound", "G@os:debian and web*", "cmd.run", List.of("uptime"), map("timeout", 5L), 10),
                new SessionMessage.JobQuery(JID, 0),
                new SessionMessage.JobQuery(null, 20),
                new SessionMessage.PublishReply(JID, List.of("web1", "web2"), List.of("web2"), null),
                new SessionMessage.PublishReply(null, List.of(), List.of(), "publisher_acl: refused"),
                new SessionMessage.ReturnEvent(JID, "web1", map("out", "up 3 days"), 0, true, 17),
                new SessionMessage.JobReply(map("jid", JID, "minions", List.of("web1")), null),
                new SessionMessage.JobReply(map(), "no such job"),
                new SessionMessage.EventsSubscribe("brine/job/*"),
                new SessionMessage.Event("brine/auth/accepted", TS, map("id", "web1", "rule", "auto_accept")),
                new SessionMessage.Ack(List.of("j1"), "return refused: over max_return_bytes (4096)"),
                new SessionMessage.KeyRotate(seq(294), filled(256, 0x01), filled(256, 0x02)),
                new SessionMessage.KeyRotateReply(
                        true, "ab:".repeat(31) + "ab", "key rotated by the minion", filled(256, 0x03)),
                new SessionMessage.KeyRotateAsk("ab:".repeat(31) + "ab"));
    }

    static ClientAuth clientAuth() {
        return new ClientAuth(Suite.RSA_OAEP_PSS_AES256GCM, "root", seq(294), NONCE, TS);
    }

    static PublishLoad load() {
        return new PublishLoad(
                "j1",
                new PublishLoad.Target("glob", "*"),
                "test.ping",
                Arrays.asList("a", 1L),
                map("k", null),
                30,
                "root");
    }

    /** A signed-type frame around any payload bytes, with a dummy signature (decode does not verify). */
    static byte[] signedFrame(FrameType type, byte[] payload, byte[] signature) {
        return new MsgWriter()
                .header(type.code())
                .array(2)
                .bin("payload", payload)
                .bin("signature", signature)
                .toByteArray();
    }

    static byte[] unsignedFrame(FrameType type, byte[] body) {
        return concat(new byte[] {1, (byte) type.code()}, body);
    }
}
