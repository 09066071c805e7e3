package io.brine.protocol.codec;

import io.brine.protocol.MinionIds;
import io.brine.protocol.crypto.Aead;
import io.brine.protocol.crypto.CryptoException;
import io.brine.protocol.crypto.SessionKey;
import io.brine.protocol.message.Resumption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Session resumption on the wire (PROTOCOL.md 8.9): the layouts of the three {@link Resumption} frames, and the
 * keys, proofs and boxes that bind them. Its own codec, beside {@link Codec}: a resumption frame is told apart by its
 * type byte before the {@code Message} codec sees it. Decoding never throws but {@link MalformedException}.
 */
public final class Resumptions {

    public static final int SECRET_LENGTH = 32;
    public static final int PROOF_LENGTH = 32;
    /** The ticket key id that starts every ticket. */
    public static final int KEY_ID_LENGTH = 8;
    /** A ticket's bytes at most (one holds an id, a fingerprint, four numbers and a secret: under 500). */
    public static final int MAX_TICKET = 1024;
    /** A ticket is honoured at most this long after the full auth it descends from. */
    public static final long MAX_LIFETIME_MS = 24 * 3_600_000L;

    private static final byte[] PROOF_CONTEXT = ascii("brine-resume-proof-v1");
    private static final byte[] REPLY_CONTEXT = ascii("brine-resume-reply-v1");
    private static final byte[] GRANT_CONTEXT = ascii("brine-ticket-grant-v1");
    private static final byte[] TICKET_CONTEXT = ascii("brine-ticket-v1");
    private static final byte[] TICKET_REQUEST_CONTEXT = ascii("brine-ticket-request-v1");
    private static final int HEADER = 2;
    /** Generous room for a fingerprint: 32 hex pairs and their colons. */
    private static final int MAX_FINGERPRINT = 128;

    private Resumptions() {}

    /** Whether {@code frame} is a resumption frame (version 1 and one of its type bytes), to be read here. */
    public static boolean isResumption(byte[] frame) {
        if (frame == null || frame.length < HEADER || frame[0] != Codec.VERSION) {
            return false;
        }
        int type = frame[1] & 0xff;
        return type == Resumption.REQUEST
                || type == Resumption.REPLY
                || type == Resumption.TICKET
                || type == Resumption.TICKET_REQUEST;
    }

    public static byte[] encode(Resumption frame) {
        MsgWriter out = new MsgWriter().header(frame.type());
        if (frame instanceof Resumption.Request r) {
            out.array(5)
                    .str("id", r.id())
                    .bin("ticket", r.ticket())
                    .bin("nonce", r.nonce())
                    .integer(r.timestampMs())
                    .bin("proof", r.proof());
        } else if (frame instanceof Resumption.Reply r) {
            out.array(2).bin("nonce", r.nonce()).binOrNil("box", r.box());
        } else if (frame instanceof Resumption.Ticket t) {
            out.array(2).bin("sessionId", t.sessionId()).bin("box", t.box());
        } else if (frame instanceof Resumption.TicketRequest t) {
            out.array(2).bin("sessionId", t.sessionId()).bin("box", t.box());
        }
        byte[] bytes = out.toByteArray();
        try {
            decode(bytes);
        } catch (MalformedException e) {
            throw new IllegalArgumentException("refusing to encode " + frame + ": " + e.getMessage());
        }
        return bytes;
    }

    /**
     * Reads a resumption frame arriving at a master: a request or a ticket request; a reply or a ticket (the master's
     * to send) is malformed here, refused before it is parsed.
     */
    public static Resumption.ToMaster decodeToMaster(byte[] frame) throws MalformedException {
        int type = frame != null && frame.length >= HEADER ? frame[1] & 0xff : -1;
        if (type == Resumption.REPLY || type == Resumption.TICKET) {
            throw new MalformedException("a resumption " + (type == Resumption.REPLY ? "reply" : "ticket")
                    + " does not travel to the master");
        }
        return (Resumption.ToMaster) decode(frame);
    }

    /** Reads a resumption frame arriving at a minion: a reply or a ticket; the other two are malformed here. */
    public static Resumption.ToMinion decodeToMinion(byte[] frame) throws MalformedException {
        int type = frame != null && frame.length >= HEADER ? frame[1] & 0xff : -1;
        if (type == Resumption.REQUEST || type == Resumption.TICKET_REQUEST) {
            throw new MalformedException("a resumption " + (type == Resumption.REQUEST ? "request" : "ticket request")
                    + " does not travel to a minion");
        }
        return (Resumption.ToMinion) decode(frame);
    }

    /**
     * Reads a resumption frame of either direction (tools, tests); a receiver uses {@link #decodeToMaster} or
     * {@link #decodeToMinion}. At most {@link FrameLimits#MAX_UNAUTHENTICATED}, checked before parsing.
     */
    public static Resumption decode(byte[] frame) throws MalformedException {
        if (!isResumption(frame)) {
            throw new MalformedException("not a resumption frame");
        }
        if (frame.length > FrameLimits.MAX_UNAUTHENTICATED) {
            throw new MalformedException("resumption frame of " + frame.length + " bytes exceeds the limit of "
                    + FrameLimits.MAX_UNAUTHENTICATED);
        }
        int type = frame[1] & 0xff;
        try {
            return MsgReader.parse(frame, HEADER, frame.length - HEADER, "resumption", in -> switch (type) {
                case Resumption.REQUEST -> {
                    in.array("ResumeRequest", 5);
                    String id = in.str("ResumeRequest.id", MinionIds.MAX_LENGTH);
                    if (!MinionIds.isValid(id)) {
                        throw new MalformedException("ResumeRequest.id: not a valid minion id");
                    }
                    yield new Resumption.Request(
                            id,
                            in.bin("ResumeRequest.ticket", KEY_ID_LENGTH + Aead.OVERHEAD, MAX_TICKET),
                            in.bin("ResumeRequest.nonce", FieldLimits.NONCE_LENGTH, FieldLimits.NONCE_LENGTH),
                            in.nonNegative("ResumeRequest.timestampMs"),
                            in.bin("ResumeRequest.proof", PROOF_LENGTH, PROOF_LENGTH));
                }
                case Resumption.REPLY -> {
                    in.array("ResumeReply", 2);
                    yield new Resumption.Reply(
                            in.bin("ResumeReply.nonce", FieldLimits.NONCE_LENGTH, FieldLimits.NONCE_LENGTH),
                            in.binOrNil("ResumeReply.box", Aead.OVERHEAD + 1, 4096));
                }
                case Resumption.TICKET_REQUEST -> {
                    in.array("TicketRequest", 2);
                    yield new Resumption.TicketRequest(
                            in.bin(
                                    "TicketRequest.sessionId",
                                    FieldLimits.SESSION_ID_LENGTH,
                                    FieldLimits.SESSION_ID_LENGTH),
                            in.bin("TicketRequest.box", Aead.OVERHEAD + 1, 64));
                }
                default -> {
                    in.array("Ticket", 2);
                    yield new Resumption.Ticket(
                            in.bin("Ticket.sessionId", FieldLimits.SESSION_ID_LENGTH, FieldLimits.SESSION_ID_LENGTH),
                            in.bin("Ticket.box", Aead.OVERHEAD + 1, 4096));
                }
            });
        } catch (RuntimeException e) {
            throw new MalformedException(
                    "undecodable resumption frame (" + e.getClass().getSimpleName() + ")");
        }
    }

    // ---- the minion's side ----

    /** A request to resume with {@code grant}, proven with its secret. */
    public static Resumption.Request request(String id, Resumption.Grant grant, byte[] nonce, long timestampMs) {
        return new Resumption.Request(
                id, grant.ticket(), nonce, timestampMs, proof(grant.secret(), id, grant.ticket(), nonce, timestampMs));
    }

    /** Opens a reply to a request with {@code nonce} made with {@code secret}. */
    public static Resumption.Resumed openReply(byte[] secret, byte[] nonce, Resumption.Reply reply)
            throws CryptoException, MalformedException {
        if (reply.refused()) {
            throw new CryptoException("refused");
        }
        byte[] plaintext = Aead.open(replyKey(secret, nonce), concat(REPLY_CONTEXT, nonce), reply.box());
        return MsgReader.parse(plaintext, 0, plaintext.length, "Resumed", in -> {
            in.array("Resumed", 7);
            return new Resumption.Resumed(
                    in.bin("Resumed.sessionId", FieldLimits.SESSION_ID_LENGTH, FieldLimits.SESSION_ID_LENGTH),
                    in.nonNegative("Resumed.generation"),
                    in.bin("Resumed.publishKey", SessionKey.LENGTH, SessionKey.LENGTH),
                    in.bin("Resumed.requestKey", SessionKey.LENGTH, SessionKey.LENGTH),
                    in.int32("Resumed.publishPort", 0, 65535),
                    in.nonNegative("Resumed.serialFloor"),
                    readGrant(in));
        });
    }

    /** A minion's request for a ticket in session {@code sessionId}: its clock, sealed under the request key. */
    public static Resumption.TicketRequest ticketRequest(SessionKey requestKey, byte[] sessionId, long nowMs) {
        return new Resumption.TicketRequest(
                sessionId,
                Aead.seal(
                        requestKey,
                        concat(TICKET_REQUEST_CONTEXT, sessionId),
                        new MsgWriter().array(1).integer(nowMs).toByteArray()));
    }

    /** Whether {@code request} was sealed under {@code requestKey}: asked by the session's minion. */
    public static boolean ticketRequestHolds(SessionKey requestKey, Resumption.TicketRequest request) {
        try {
            byte[] plaintext =
                    Aead.open(requestKey, concat(TICKET_REQUEST_CONTEXT, request.sessionId()), request.box());
            MsgReader.parse(plaintext, 0, plaintext.length, "TicketRequest", in -> {
                in.array("TicketRequest", 1);
                return in.nonNegative("TicketRequest.timestampMs");
            });
            return true;
        } catch (CryptoException | MalformedException e) {
            return false;
        }
    }

    /** Opens the ticket the master sent in session {@code sessionId}, under its request key. */
    public static Resumption.Grant openTicket(SessionKey requestKey, Resumption.Ticket ticket)
            throws CryptoException, MalformedException {
        byte[] plaintext = Aead.open(requestKey, concat(GRANT_CONTEXT, ticket.sessionId()), ticket.box());
        return MsgReader.parse(plaintext, 0, plaintext.length, "Grant", Resumptions::readGrant);
    }

    // ---- the master's side ----

    /** Whether {@code request}'s proof was made with {@code secret}; in constant time. */
    public static boolean proofHolds(byte[] secret, Resumption.Request request) {
        return MessageDigest.isEqual(
                proof(secret, request.id(), request.ticket(), request.nonce(), request.timestampMs()), request.proof());
    }

    /** The reply that resumes: {@code resumed} sealed under the key derived from {@code secret} and the nonce. */
    public static Resumption.Reply sealReply(byte[] secret, byte[] nonce, Resumption.Resumed resumed) {
        MsgWriter out = new MsgWriter()
                .array(7)
                .bin("sessionId", resumed.sessionId())
                .integer(resumed.generation())
                .bin("publishKey", resumed.publishKey())
                .bin("requestKey", resumed.requestKey())
                .integer(resumed.publishPort())
                .integer(resumed.serialFloor());
        writeGrant(out, resumed.next());
        return new Resumption.Reply(
                nonce, Aead.seal(replyKey(secret, nonce), concat(REPLY_CONTEXT, nonce), out.toByteArray()));
    }

    /** A ticket for the minion of session {@code sessionId}, sealed under its request key. */
    public static Resumption.Ticket sealTicket(SessionKey requestKey, byte[] sessionId, Resumption.Grant grant) {
        MsgWriter out = new MsgWriter();
        writeGrant(out, grant);
        return new Resumption.Ticket(
                sessionId, Aead.seal(requestKey, concat(GRANT_CONTEXT, sessionId), out.toByteArray()));
    }

    /** A ticket: {@code keyId || box}, the box {@code contents} sealed under the ticket key {@code keyId} names. */
    public static byte[] sealContents(SessionKey ticketKey, byte[] keyId, Resumption.Contents contents) {
        byte[] plaintext = new MsgWriter()
                .array(6)
                .str("id", contents.id())
                .str("fingerprint", contents.fingerprint())
                .integer(contents.generation())
                .integer(contents.issuedMs())
                .integer(contents.expiresMs())
                .bin("secret", contents.secret())
                .toByteArray();
        byte[] ticket = concat(keyId, Aead.seal(ticketKey, concat(TICKET_CONTEXT, keyId), plaintext));
        if (ticket.length > MAX_TICKET) {
            throw new IllegalArgumentException("a ticket of " + ticket.length + " bytes");
        }
        return ticket;
    }

    /** The id of the ticket key that sealed {@code ticket}. */
    public static byte[] keyId(byte[] ticket) {
        return Arrays.copyOf(ticket, KEY_ID_LENGTH);
    }

    /** Opens a ticket with the ticket key its id names. */
    public static Resumption.Contents openContents(SessionKey ticketKey, byte[] ticket)
            throws CryptoException, MalformedException {
        byte[] keyId = keyId(ticket);
        byte[] plaintext = Aead.open(
                ticketKey, concat(TICKET_CONTEXT, keyId), Arrays.copyOfRange(ticket, KEY_ID_LENGTH, ticket.length));
        return MsgReader.parse(plaintext, 0, plaintext.length, "ticket", in -> {
            in.array("ticket", 6);
            return new Resumption.Contents(
                    in.str("ticket.id", MinionIds.MAX_LENGTH),
                    in.str("ticket.fingerprint", MAX_FINGERPRINT),
                    in.nonNegative("ticket.generation"),
                    in.nonNegative("ticket.issuedMs"),
                    in.nonNegative("ticket.expiresMs"),
                    in.bin("ticket.secret", SECRET_LENGTH, SECRET_LENGTH));
        });
    }

    // ---- shared ----

    private static void writeGrant(MsgWriter out, Resumption.Grant grant) {
        out.array(3).bin("ticket", grant.ticket()).integer(grant.expiresMs()).bin("secret", grant.secret());
    }

    private static Resumption.Grant readGrant(MsgReader in) throws IOException, MalformedException {
        in.array("Grant", 3);
        return new Resumption.Grant(
                in.bin("Grant.ticket", KEY_ID_LENGTH + Aead.OVERHEAD, MAX_TICKET),
                in.nonNegative("Grant.expiresMs"),
                in.bin("Grant.secret", SECRET_LENGTH, SECRET_LENGTH));
    }

    /**
     * HMAC-SHA256(secret, "brine-resume-proof-v1" || len(id):u8 || id || len(ticket):u16be || ticket || nonce ||
     * timestampMs:u64be).
     */
    static byte[] proof(byte[] secret, String id, byte[] ticket, byte[] nonce, long timestampMs) {
        byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
        ByteBuffer input =
                ByteBuffer.allocate(PROOF_CONTEXT.length + 1 + idBytes.length + 2 + ticket.length + nonce.length + 8);
        input.put(PROOF_CONTEXT)
                .put((byte) idBytes.length)
                .put(idBytes)
                .putShort((short) ticket.length)
                .put(ticket)
                .put(nonce)
                .putLong(timestampMs);
        return hmac(secret, input.array());
    }

    /** HMAC-SHA256(secret, "brine-resume-reply-v1" || nonce): the reply's AES-256-GCM key. */
    static SessionKey replyKey(byte[] secret, byte[] nonce) {
        try {
            return SessionKey.of(hmac(secret, concat(REPLY_CONTEXT, nonce)));
        } catch (CryptoException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * One HMAC-SHA256 per thread: {@code Mac.getInstance} looks the algorithm up in the providers each time (5 % of
     * the resumptions' CPU at 9,800 minions), as {@code Cipher.getInstance} did for every AES box ({@code Aead}).
     * {@code init} sets the key of each use, and {@code doFinal} resets it.
     */
    private static final ThreadLocal<Mac> MACS = ThreadLocal.withInitial(() -> {
        try {
            return Mac.getInstance("HmacSHA256");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks HMAC-SHA256", e);
        }
    });

    private static byte[] hmac(byte[] secret, byte[] input) {
        try {
            Mac mac = MACS.get();
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal(input);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 failed", e);
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
