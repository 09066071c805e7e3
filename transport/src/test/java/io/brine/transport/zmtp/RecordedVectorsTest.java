package io.brine.transport.zmtp;

import static io.brine.transport.zmtp.Wire.ascii;
import static io.brine.transport.zmtp.Wire.concat;
import static io.brine.transport.zmtp.Wire.feed;
import static io.brine.transport.zmtp.Wire.written;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bytes recorded between real libzmq 4.3.4 peers (Salt 3008.2 and 3006.26 minions and masters, see the vectors'
 * README): every greeting, READY, SUBSCRIBE, PING and PONG decodes as recorded, and a replay of each minion's side
 * through our server handler gives the events and answers a libzmq master would.
 */
class RecordedVectorsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode vector(String name) {
        try (InputStream in = RecordedVectorsTest.class.getResourceAsStream("/zmtp/" + name)) {
            return JSON.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] b64(JsonNode node) {
        return Base64.getDecoder().decode(node.asText());
    }

    /** The one value the decoder makes of a recorded command frame, after a greeting. */
    private static Object decodeCommand(byte[] frame) {
        EmbeddedChannel channel = Wire.decoder(Wire.roomy());
        feed(channel, Wire.greeting31());
        channel.writeInbound(Unpooled.wrappedBuffer(frame));
        Object value = channel.readInbound();
        assertThat((Object) channel.readInbound()).isNull();
        return value;
    }

    @ParameterizedTest
    @ValueSource(strings = {"zmtp-handshakes-3008.2.json", "zmtp-handshakes-3006.26.json"})
    void everyRecordedGreetingAndCommandDecodes(String file) {
        int greetings = 0;
        int commands = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it =
                        vector(file).get("handshakes").fields();
                it.hasNext(); ) {
            for (JsonNode unit : it.next().getValue()) {
                byte[] wire = b64(unit.get("wire_b64"));
                if (unit.get("kind").asText().equals("greeting")) {
                    greetings++;
                    assertThat(unit.get("version").get(0).asInt()).isEqualTo(3);
                    String expected = "Greeting[3." + unit.get("version").get(1).asInt() + " "
                            + unit.get("mechanism").asText() + "]";
                    assertThat(feed(Wire.decoder(Wire.roomy()), wire)).containsExactly(expected);
                    assertThat(unit.get("as_server").asInt()).isZero();
                } else {
                    commands++;
                    checkCommand(unit, decodeCommand(wire));
                }
            }
        }
        assertThat(greetings).isEqualTo(4);
        assertThat(commands).isGreaterThanOrEqualTo(5);
    }

    private static void checkCommand(JsonNode unit, Object decoded) {
        switch (unit.get("name").asText()) {
            case "READY" -> {
                Metadata metadata = ((Command.Ready) decoded).metadata();
                assertThat(metadata.properties()).hasSize(unit.get("props").size());
                unit.get("props")
                        .fields()
                        .forEachRemaining(p -> assertThat(metadata.get(p.getKey()))
                                .isEqualTo(ascii(p.getValue().asText())));
            }
            case "SUBSCRIBE" ->
                assertThat(((Command.Subscribe) decoded).topic()).isEmpty();
            case "PING" -> {
                Command.Ping ping = (Command.Ping) decoded;
                assertThat(ping.ttl()).isZero(); // Salt 3008 sets no ZMQ_HEARTBEAT_TTL
                assertThat(ping.context()).isEmpty();
            }
            case "PONG" -> assertThat(((Command.Pong) decoded).context()).isEmpty();
            default -> throw new AssertionError("unexpected command " + unit);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"zmtp-handshakes-3008.2.json", "zmtp-handshakes-3006.26.json"})
    void everyRecordedSubscriptionIsASubscribeCommand(String file) {
        JsonNode subscriptions = vector(file).get("subscriptions");
        assertThat(subscriptions).hasSize(5);
        for (JsonNode subscription : subscriptions) {
            byte[] wire = b64(subscription.get("zmtp_wire_b64"));
            // libzmq 4.3.4's SUB, greeted as 3.1, uses ZMTP 3.1's command (flags 0x04), not 3.0's message 0x01.
            assertThat(wire[0]).isEqualTo((byte) 0x04);
            Command.Subscribe subscribe = (Command.Subscribe) decodeCommand(wire);
            assertThat(new String(subscribe.topic(), StandardCharsets.US_ASCII))
                    .isEqualTo(subscription.get("topic").asText());
            assertThat(ByteBufUtil.getBytes(ZmtpEncoder.subscribe(UnpooledByteBufAllocator.DEFAULT, subscribe.topic())))
                    .isEqualTo(wire);
        }
    }

    /** The recorded units of one connection in one direction, in order. */
    private static List<byte[]> units(JsonNode handshake, String dir) {
        List<byte[]> units = new ArrayList<>();
        for (JsonNode unit : handshake) {
            if (unit.get("dir").asText().equals(dir)) {
                units.add(b64(unit.get("wire_b64")));
            }
        }
        return units;
    }

    @ParameterizedTest
    @ValueSource(strings = {"zmtp-handshakes-3008.2.json", "zmtp-handshakes-3006.26.json"})
    void minionSubscriberReplayedIntoOurPubIsHandshakenAndSubscribed(String file) {
        JsonNode subPub = vector(file).get("handshakes").get("sub_pub");
        List<byte[]> minion = units(subPub, "c2s");
        List<byte[]> master = units(subPub, "s2c");
        EmbeddedChannel channel = Wire.server(SocketType.PUB);
        byte[] ourGreeting = written(channel);
        // Ours and the libzmq master's differ only in the padding, which libzmq fills and the RFC says not to read.
        assertThat(Arrays.copyOfRange(ourGreeting, 9, 64)).isEqualTo(Arrays.copyOfRange(master.get(0), 9, 64));

        List<String> events = feed(channel, concat(minion.toArray(byte[][]::new)));
        assertThat(events.get(0)).isEqualTo("Handshaken[SUB, identity=]");
        assertThat(events.get(1)).isEqualTo("Subscribe[]");
        assertThat(events.subList(2, events.size())).allMatch("Pong[]"::equals).hasSize(minion.size() - 3);
        // Our READY is the libzmq PUB's, byte for byte.
        assertThat(written(channel)).isEqualTo(master.get(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"zmtp-handshakes-3008.2.json", "zmtp-handshakes-3006.26.json"})
    void ourPongToALibzmqPingIsTheOneLibzmqSends(String file) {
        JsonNode subPub = vector(file).get("handshakes").get("sub_pub");
        EmbeddedChannel channel = Wire.server(SocketType.PUB);
        feed(channel, Wire.handshake("SUB"));
        written(channel);
        byte[] ping = Base64.getDecoder().decode("BAcEUElORwAA"); // the 3008 master's PING: TTL 0, no context
        assertThat(feed(channel, ping)).containsExactly("Ping[ttl=0, context=]");
        assertThat(written(channel)).isEqualTo(Base64.getDecoder().decode("BAUEUE9ORw=="));
        if (file.contains("3008")) {
            assertThat(units(subPub, "s2c")).anySatisfy(unit -> assertThat(unit).isEqualTo(ping));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"zmtp-handshakes-3008.2.json", "zmtp-handshakes-3006.26.json"})
    void minionRequestSocketReplayedIntoOurRouterIsHandshaken(String file) {
        JsonNode reqRouter = vector(file).get("handshakes").get("req_router");
        EmbeddedChannel channel = Wire.server(SocketType.ROUTER);
        written(channel);
        assertThat(feed(channel, concat(units(reqRouter, "c2s").toArray(byte[][]::new))))
                .containsExactly("Handshaken[REQ, identity=]");
        Object ours = decodeCommand(written(channel));
        assertThat(((Command.Ready) ours).metadata().get("Socket-Type")).isEqualTo(ascii("ROUTER"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"zmtp-handshakes-3008.2.json"})
    void reqEnvelopeOnTheWireIsAnEmptyDelimiterThenThePayload(String file) {
        JsonNode handshake = vector(file).get("handshakes").get("req_router");
        JsonNode auth = vector("auth-1a-pending-3008.2.json");
        List<byte[]> wire = new ArrayList<>(units(handshake, "c2s"));
        auth.get("request").get("zmtp_wire_b64").forEach(frame -> wire.add(b64(frame)));

        EmbeddedChannel channel = Wire.server(SocketType.ROUTER, ZmtpLimits.fixed(64 * 1024, 2, 64 * 1024));
        channel.writeInbound(Unpooled.wrappedBuffer(concat(wire.toArray(byte[][]::new))));
        assertThat(channel.<Object>readInbound().toString()).isEqualTo("Handshaken[REQ, identity=]");
        ZmtpEvent.Message request = channel.readInbound();
        assertThat(request.parts()).hasSize(2);
        assertThat(request.parts().get(0)).isEmpty();
        assertThat(request.parts().get(1)).isEqualTo(b64(auth.get("request").get("payload_b64")));

        // The master's reply, framed by us, is what libzmq put on the wire (the 329-byte payload in a long frame).
        List<byte[]> reply = new ArrayList<>();
        auth.get("reply").get("zmtp_wire_b64").forEach(frame -> reply.add(b64(frame)));
        byte[] framed = ByteBufUtil.getBytes(ZmtpEncoder.message(
                UnpooledByteBufAllocator.DEFAULT,
                new byte[0],
                b64(auth.get("reply").get("payload_b64"))));
        assertThat(framed).isEqualTo(concat(reply.toArray(byte[][]::new)));
    }
}
