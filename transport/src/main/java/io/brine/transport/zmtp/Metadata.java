package io.brine.transport.zmtp;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The properties of a READY command (RFC 23, NULL mechanism): each {@code name-length:u8 name value-length:u32be
 * value}. Names are 1-255 characters of {@code ALPHA DIGIT - _ . +} and not case-sensitive; values are opaque and
 * at most 2^31-1 bytes. Unknown names are kept (libzmq sends application properties); a name given twice is
 * refused, since which one counts would be a guess.
 */
record Metadata(Map<String, byte[]> properties) {

    static final String SOCKET_TYPE = "socket-type";
    static final String IDENTITY = "identity";

    Metadata {
        properties = Map.copyOf(properties);
    }

    /** The value of the property {@code name} (any case), or null when the peer did not send it. */
    byte[] get(String name) {
        return properties.get(name.toLowerCase(Locale.ROOT));
    }

    /** The READY whose properties start at {@code at} in {@code body} and run to its end, or why it is malformed. */
    static Command ready(byte[] body, int at) {
        Map<String, byte[]> properties = new LinkedHashMap<>();
        while (at < body.length) {
            int nameLength = body[at++] & 0xff;
            if (nameLength == 0) {
                return malformed("a property with an empty name");
            }
            if (nameLength > body.length - at) {
                return malformed("a property name that runs past the command");
            }
            for (int i = at; i < at + nameLength; i++) {
                if (!isNameChar(body[i])) {
                    return malformed("a property name with a character outside ALPHA DIGIT - _ . +: "
                            + Printable.of(body, at, at + nameLength));
                }
            }
            String name = new String(body, at, nameLength, StandardCharsets.US_ASCII);
            at += nameLength;
            if (body.length - at < 4) {
                return malformed("property " + name + ": its value size runs past the command");
            }
            long valueLength = (body[at] & 0xffL) << 24
                    | (body[at + 1] & 0xff) << 16
                    | (body[at + 2] & 0xff) << 8
                    | body[at + 3] & 0xff;
            at += 4;
            if (valueLength > Integer.MAX_VALUE) {
                return malformed("property " + name + ": a value of " + valueLength + " bytes (at most 2^31-1)");
            }
            if (valueLength > body.length - at) {
                return malformed("property " + name + ": a value of " + valueLength + " bytes runs past the command");
            }
            String key = name.toLowerCase(Locale.ROOT);
            if (properties.containsKey(key)) {
                return malformed("property " + name + " given twice");
            }
            properties.put(key, Arrays.copyOfRange(body, at, at + (int) valueLength));
            at += (int) valueLength;
        }
        return new Command.Ready(new Metadata(properties));
    }

    private static boolean isNameChar(byte c) {
        return c >= 'A' && c <= 'Z'
                || c >= 'a' && c <= 'z'
                || c >= '0' && c <= '9'
                || c == '-'
                || c == '_'
                || c == '.'
                || c == '+';
    }

    private static Command malformed(String problem) {
        return new Command.Malformed("READY: " + problem);
    }
}
