package io.brine.transport.zmtp;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One command frame's body, parsed (RFC 23 and 37: a name of 1-255 letters after its length byte, then the data).
 * A body that breaks the grammar becomes {@link Malformed}; a well-formed command of another name is
 * {@link Unknown} (security mechanisms and later versions define their own).
 */
sealed interface Command {

    /** PING and PONG contexts: RFC 37 caps them at 16 bytes. */
    int MAX_PING_CONTEXT = 16;

    record Ready(Metadata metadata) implements Command {}

    record Error(String reason) implements Command {}

    record Subscribe(byte[] topic) implements Command {}

    record Cancel(byte[] topic) implements Command {}

    record Ping(int ttl, byte[] context) implements Command {}

    record Pong(byte[] context) implements Command {}

    record Unknown(String name) implements Command {}

    record Malformed(String reason) implements Command {}

    static Command parse(byte[] body) {
        if (body.length == 0) {
            return new Malformed("an empty command");
        }
        int nameLength = body[0] & 0xff;
        if (nameLength == 0) {
            return new Malformed("a command with an empty name");
        }
        if (1 + nameLength > body.length) {
            return new Malformed("a command whose name runs past its frame");
        }
        for (int i = 1; i <= nameLength; i++) {
            int c = body[i];
            if (!(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z')) {
                return new Malformed(
                        "a command name that is not all letters: " + Printable.of(body, 1, 1 + nameLength));
            }
        }
        String name = new String(body, 1, nameLength, StandardCharsets.US_ASCII);
        int data = 1 + nameLength;
        return switch (name) {
            case "READY" -> Metadata.ready(body, data);
            case "ERROR" -> error(body, data);
            case "SUBSCRIBE" -> new Subscribe(Arrays.copyOfRange(body, data, body.length));
            case "CANCEL" -> new Cancel(Arrays.copyOfRange(body, data, body.length));
            case "PING" -> ping(body, data);
            case "PONG" ->
                body.length - data > MAX_PING_CONTEXT
                        ? new Malformed("a PONG context of " + (body.length - data) + " bytes (at most 16)")
                        : new Pong(Arrays.copyOfRange(body, data, body.length));
            default -> new Unknown(name);
        };
    }

    /** {@code ttl:u16be context}: the TTL is required, the context may be empty. */
    private static Command ping(byte[] body, int at) {
        if (body.length - at < 2) {
            return new Malformed("a PING without its 2-byte TTL");
        }
        int ttl = (body[at] & 0xff) << 8 | body[at + 1] & 0xff;
        int contextLength = body.length - at - 2;
        if (contextLength > MAX_PING_CONTEXT) {
            return new Malformed("a PING context of " + contextLength + " bytes (at most 16)");
        }
        return new Ping(ttl, Arrays.copyOfRange(body, at + 2, body.length));
    }

    /** {@code length:u8 reason}. The ERROR is fatal whatever it holds, so a short one still counts as an ERROR. */
    private static Command error(byte[] body, int at) {
        if (at >= body.length) {
            return new Error("");
        }
        int end = Math.min(body.length, at + 1 + (body[at] & 0xff));
        return new Error(Printable.of(body, at + 1, end));
    }
}
