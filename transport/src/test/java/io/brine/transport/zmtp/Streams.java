package io.brine.transport.zmtp;

import static io.brine.transport.zmtp.Wire.MORE;
import static io.brine.transport.zmtp.Wire.ascii;
import static io.brine.transport.zmtp.Wire.concat;
import static io.brine.transport.zmtp.Wire.frame;
import static io.brine.transport.zmtp.Wire.greeting31;
import static io.brine.transport.zmtp.Wire.hex;
import static io.brine.transport.zmtp.Wire.longFrame;
import static io.brine.transport.zmtp.Wire.ready;

/** Whole, valid client streams that touch every frame form, for the split-input and fuzz tests. */
final class Streams {

    private Streams() {}

    /** A DEALER's side of a ROUTER connection. */
    static byte[] dealer() {
        return concat(
                greeting31(),
                ready("Socket-Type", "DEALER", "Identity", "web1", "X-Extra", "1"),
                Wire.message("hello"),
                frame(MORE, new byte[0]),
                longFrame(MORE, new byte[300]),
                longFrame(0, ascii("non-canonical")),
                Wire.command("PING", hex("0064 0102030405060708090a0b0c0d0e0f10")),
                Wire.message("a", "b", "c"),
                Wire.command("JOIN", ascii("g")),
                Wire.command("PONG", new byte[0]),
                frame(0, new byte[255]));
    }

    /** A SUB's side of a PUB connection, with subscriptions in both forms. */
    static byte[] subscriber() {
        return concat(
                greeting31(),
                ready("Socket-Type", "SUB"),
                Wire.command("SUBSCRIBE", ascii("m/web1/")),
                Wire.command("SUBSCRIBE", ascii("b/")),
                Wire.command("PING", hex("0000")),
                frame(0, concat(hex("01"), ascii("legacy/"))),
                Wire.command("CANCEL", ascii("b/")),
                frame(0, concat(hex("00"), ascii("legacy/"))),
                Wire.command("SUBSCRIBE", new byte[400]));
    }

    /** A DEALER whose stream ends in a refusal (a command inside a multipart message). */
    static byte[] refusedDealer() {
        return concat(
                greeting31(),
                ready("Socket-Type", "DEALER"),
                Wire.message("ok"),
                frame(MORE, ascii("x")),
                Wire.command("PING", hex("0000")),
                Wire.message("never"));
    }
}
