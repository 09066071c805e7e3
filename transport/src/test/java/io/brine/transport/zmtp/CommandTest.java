package io.brine.transport.zmtp;

import static io.brine.transport.zmtp.Wire.ascii;
import static io.brine.transport.zmtp.Wire.commandBody;
import static io.brine.transport.zmtp.Wire.concat;
import static io.brine.transport.zmtp.Wire.hex;
import static io.brine.transport.zmtp.Wire.properties;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Command bodies and READY properties, parsed from raw bytes. */
class CommandTest {

    private static Command parse(String hex) {
        return Command.parse(hex(hex));
    }

    private static String malformed(Command command) {
        assertThat(command).isInstanceOf(Command.Malformed.class);
        return ((Command.Malformed) command).reason();
    }

    @Test
    void readyWithSocketTypeAndIdentity() {
        // RFC 23's worked example: a DEALER with an empty Identity.
        Command command = parse(
                "05 5245414459 0b 536f636b65742d54797065 00000006 4445414c4552" + " 08 4964656e74697479 00000000");
        Metadata metadata = ((Command.Ready) command).metadata();
        assertThat(metadata.get("Socket-Type")).isEqualTo(ascii("DEALER"));
        assertThat(metadata.get("IDENTITY")).isEmpty();
        assertThat(metadata.properties()).hasSize(2);
    }

    @Test
    void readyWithoutPropertiesParses() {
        assertThat(((Command.Ready) parse("05 5245414459")).metadata().properties())
                .isEmpty();
    }

    @Test
    void readyKeepsUnknownProperties() {
        Command command = Command.parse(
                commandBody("READY", properties("Socket-Type", "SUB", "X-Host", "web1", "Resource", "a/b")));
        assertThat(((Command.Ready) command).metadata().get("x-host")).isEqualTo(ascii("web1"));
    }

    @Test
    void readyPropertyNamesAreNotCaseSensitive() {
        Command command = Command.parse(commandBody("READY", properties("sOCKET-tYPE", "SUB")));
        assertThat(((Command.Ready) command).metadata().get("Socket-Type")).isEqualTo(ascii("SUB"));
    }

    @Test
    void readyWithAPropertyGivenTwiceIsMalformed() {
        Command command = Command.parse(commandBody("READY", properties("Socket-Type", "SUB", "socket-type", "PUB")));
        assertThat(malformed(command)).isEqualTo("READY: property socket-type given twice");
    }

    @Test
    void readyWithATruncatedNameIsMalformed() {
        assertThat(malformed(parse("05 5245414459 0b 536f636b6574")))
                .isEqualTo("READY: a property name that runs past the command");
    }

    @Test
    void readyWithATruncatedValueSizeIsMalformed() {
        assertThat(malformed(parse("05 5245414459 01 41 0000")))
                .isEqualTo("READY: property A: its value size runs past the command");
    }

    @Test
    void readyWithATruncatedValueIsMalformed() {
        assertThat(malformed(parse("05 5245414459 01 41 00000004 616263")))
                .isEqualTo("READY: property A: a value of 4 bytes runs past the command");
    }

    @Test
    void readyWithAValueOverTheRfcMaximumIsMalformed() {
        assertThat(malformed(parse("05 5245414459 01 41 80000000 61")))
                .isEqualTo("READY: property A: a value of 2147483648 bytes (at most 2^31-1)");
        assertThat(malformed(parse("05 5245414459 01 41 ffffffff 61")))
                .isEqualTo("READY: property A: a value of 4294967295 bytes (at most 2^31-1)");
    }

    @Test
    void readyWithAnEmptyPropertyNameIsMalformed() {
        assertThat(malformed(parse("05 5245414459 00 00000000"))).isEqualTo("READY: a property with an empty name");
    }

    @Test
    void readyWithABadCharacterInAPropertyNameIsMalformed() {
        assertThat(malformed(parse("05 5245414459 03 612062 00000000")))
                .isEqualTo("READY: a property name with a character outside ALPHA DIGIT - _ . +: a b");
    }

    @Test
    void errorCarriesItsReason() {
        assertThat(parse("05 4552524f52 07 496e76616c6964")).isEqualTo(new Command.Error("Invalid"));
    }

    @Test
    void errorCutShortIsStillAnError() {
        assertThat(parse("05 4552524f52 09 496e76")).isEqualTo(new Command.Error("Inv"));
        assertThat(parse("05 4552524f52")).isEqualTo(new Command.Error(""));
    }

    @Test
    void subscribeAndCancelCarryTheRestAsTopic() {
        assertThat(((Command.Subscribe) parse("09 535542534352494245 622f")).topic())
                .isEqualTo(ascii("b/"));
        assertThat(((Command.Subscribe) parse("09 535542534352494245")).topic()).isEmpty();
        assertThat(((Command.Cancel) parse("06 43414e43454c 00ff")).topic()).isEqualTo(hex("00ff"));
    }

    @Test
    void pingHasATtlAndAContextOfAtMost16Bytes() {
        Command.Ping ping = (Command.Ping) parse("04 50494e47 0123 " + "ab".repeat(16));
        assertThat(ping.ttl()).isEqualTo(0x0123);
        assertThat(ping.context()).hasSize(16);
        assertThat(((Command.Ping) parse("04 50494e47 ffff")).ttl()).isEqualTo(65535);
        assertThat(malformed(parse("04 50494e47 0000 " + "ab".repeat(17))))
                .isEqualTo("a PING context of 17 bytes (at most 16)");
    }

    @Test
    void pingWithoutItsTtlIsMalformed() {
        assertThat(malformed(parse("04 50494e47 00"))).isEqualTo("a PING without its 2-byte TTL");
        assertThat(malformed(parse("04 50494e47"))).isEqualTo("a PING without its 2-byte TTL");
    }

    @Test
    void pongCarriesTheContext() {
        assertThat(((Command.Pong) parse("04 504f4e47 0102")).context()).isEqualTo(hex("0102"));
        assertThat(malformed(parse("04 504f4e47 " + "00".repeat(17))))
                .isEqualTo("a PONG context of 17 bytes (at most 16)");
    }

    @Test
    void unknownWellFormedCommandIsUnknown() {
        assertThat(parse("04 4a4f494e 6772")).isEqualTo(new Command.Unknown("JOIN"));
        assertThat(parse("05 7265616479")).isEqualTo(new Command.Unknown("ready")); // names are exact
    }

    @Test
    void brokenCommandNamesAreMalformed() {
        assertThat(malformed(Command.parse(new byte[0]))).isEqualTo("an empty command");
        assertThat(malformed(parse("00 41"))).isEqualTo("a command with an empty name");
        assertThat(malformed(parse("06 524541"))).isEqualTo("a command whose name runs past its frame");
        assertThat(malformed(parse("04 50 31 4e 47"))).isEqualTo("a command name that is not all letters: P1NG");
        assertThat(malformed(Command.parse(concat(hex("02"), hex("0041")))))
                .isEqualTo("a command name that is not all letters: \\x00A");
    }
}
