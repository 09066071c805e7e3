package io.brine.transport.zmtp;

import static io.brine.transport.zmtp.Wire.ascii;
import static io.brine.transport.zmtp.Wire.concat;
import static io.brine.transport.zmtp.Wire.feed;
import static io.brine.transport.zmtp.Wire.greeting31;
import static io.brine.transport.zmtp.Wire.handshake;
import static io.brine.transport.zmtp.Wire.hex;
import static io.brine.transport.zmtp.Wire.ready;
import static io.brine.transport.zmtp.Wire.server;
import static io.brine.transport.zmtp.Wire.written;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The connection handler's state machine: greeting, READY exchange, traffic, refusals. */
class HandshakeTest {

    private static final byte[] GREETING = ByteBufUtil.getBytes(ZmtpEncoder.greeting());

    private static byte[] readyFrom(SocketType type) {
        return ByteBufUtil.getBytes(ZmtpEncoder.ready(UnpooledByteBufAllocator.DEFAULT, type, null));
    }

    private static byte[] error(String reason) {
        return ByteBufUtil.getBytes(ZmtpEncoder.error(UnpooledByteBufAllocator.DEFAULT, reason));
    }

    /** A server connection that has sent its greeting (checked and dropped). */
    private static EmbeddedChannel connected(SocketType ours) {
        EmbeddedChannel channel = server(ours);
        assertThat(written(channel)).isEqualTo(GREETING);
        return channel;
    }

    @Test
    void serverSendsItsWholeGreetingAsSoonAsTheConnectionOpens() {
        assertThat(written(server(SocketType.ROUTER))).isEqualTo(GREETING);
    }

    @Test
    void serverWaitsForThePeersReadyBeforeSendingItsOwn() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, greeting31())).isEmpty();
        assertThat(written(channel)).isEmpty();
    }

    @ParameterizedTest
    @CsvSource({"ROUTER, DEALER", "ROUTER, REQ", "PUB, SUB", "PUB, XSUB", "XPUB, SUB", "XPUB, XSUB"})
    void compatiblePeerIsHandshaken(SocketType ours, String peer) {
        EmbeddedChannel channel = connected(ours);
        assertThat(feed(channel, handshake(peer))).containsExactly("Handshaken[" + peer + ", identity=]");
        assertThat(written(channel)).isEqualTo(readyFrom(ours));
        assertThat(channel.isActive()).isTrue();
    }

    @ParameterizedTest
    @CsvSource({
        "ROUTER, ROUTER",
        "ROUTER, SUB",
        "ROUTER, PUB",
        "ROUTER, REP",
        "ROUTER, PAIR",
        "PUB, DEALER",
        "PUB, PUB",
        "PUB, REQ",
        "XPUB, PUSH"
    })
    void incompatiblePeerGetsAnErrorAndIsClosed(SocketType ours, String peer) {
        EmbeddedChannel channel = connected(ours);
        assertThat(feed(channel, handshake(peer)))
                .containsExactly("Refused[reason=a Socket-Type that cannot talk to " + ours + ", detail=Socket-Type "
                        + peer + "]");
        assertThat(written(channel)).isEqualTo(error("Invalid-Socket-Type"));
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void unknownSocketTypeIsRefused() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, handshake("dealer")))
                .containsExactly("Refused[reason=a Socket-Type that cannot talk to ROUTER, detail=Socket-Type dealer]");
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void readyWithoutSocketTypeIsRefused() {
        EmbeddedChannel channel = connected(SocketType.PUB);
        assertThat(feed(channel, concat(greeting31(), ready("Identity", "x"))))
                .containsExactly("Refused[reason=a READY without Socket-Type]");
        assertThat(written(channel)).isEqualTo(error("Missing-Socket-Type"));
    }

    @Test
    void dealerIdentityIsPassedOn() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, concat(greeting31(), ready("Socket-Type", "DEALER", "Identity", "web1"))))
                .containsExactly("Handshaken[DEALER, identity=web1]");
    }

    @Test
    void identityOf255BytesPassesAnd256IsRefused() {
        EmbeddedChannel ok = connected(SocketType.ROUTER);
        assertThat(feed(ok, concat(greeting31(), ready("Socket-Type", "REQ", "Identity", "i".repeat(255)))))
                .singleElement()
                .asString()
                .startsWith("Handshaken[REQ");
        EmbeddedChannel refused = connected(SocketType.ROUTER);
        assertThat(feed(refused, concat(greeting31(), ready("Socket-Type", "REQ", "Identity", "i".repeat(256)))))
                .containsExactly("Refused[reason=an Identity of 256 bytes (at most 255)]");
        assertThat(written(refused)).isEqualTo(error("Invalid-Identity"));
    }

    @Test
    void identityStartingWithAZeroByteIsRefused() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, concat(greeting31(), ready("Socket-Type", "DEALER", "Identity", "\0abc"))))
                .containsExactly("Refused[reason=an Identity that starts with a zero byte]");
    }

    @Test
    void subscribersIdentityIsIgnored() {
        EmbeddedChannel channel = connected(SocketType.PUB);
        assertThat(feed(channel, concat(greeting31(), ready("Socket-Type", "SUB", "Identity", "\0" + "x".repeat(300)))))
                .containsExactly("Handshaken[SUB, identity=]");
    }

    @Test
    void malformedReadyIsRefusedWithoutAnError() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, concat(greeting31(), Wire.command("READY", hex("01 41 0000")))))
                .containsExactly("Refused[reason=READY: property A: its value size runs past the command]");
        assertThat(written(channel)).isEmpty();
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void messageBeforeReadyIsRefused() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, concat(greeting31(), Wire.message("early"))))
                .containsExactly("Refused[reason=a message before READY]");
    }

    @Test
    void pingBeforeReadyIsRefused() {
        EmbeddedChannel channel = connected(SocketType.PUB);
        assertThat(feed(channel, concat(greeting31(), Wire.command("PING", hex("0000")))))
                .containsExactly("Refused[reason=PING before READY]");
    }

    @Test
    void errorInsteadOfReadyIsRefusal() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, concat(greeting31(), Wire.command("ERROR", hex("03 426164")))))
                .containsExactly("Refused[reason=the peer sent ERROR, detail=Bad]");
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void badGreetingClosesTheConnection() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, Wire.greeting(3, 1, "CURVE", 0)))
                .containsExactly("Refused[reason=security mechanism CURVE (only NULL is served)]");
        assertThat(written(channel)).isEmpty();
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void routerPassesWholeMessagesOn() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, concat(handshake("REQ"), Wire.message("", "payload"), Wire.message("x"))))
                .containsExactly("Handshaken[REQ, identity=]", "Message[, payload]", "Message[x]");
    }

    @Test
    void pingIsAnsweredWithPongCarryingItsContext() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        feed(channel, handshake("DEALER"));
        written(channel);
        assertThat(feed(channel, Wire.command("PING", hex("0064 c0ffee"))))
                .containsExactly("Ping[ttl=100, context=\\xc0\\xff\\xee]");
        assertThat(written(channel)).isEqualTo(hex("04 08 04504f4e47 c0ffee"));
    }

    @Test
    void pingWithoutContextGetsAnEmptyPong() {
        EmbeddedChannel channel = connected(SocketType.PUB);
        feed(channel, handshake("SUB"));
        written(channel);
        assertThat(feed(channel, Wire.command("PING", hex("0000")))).containsExactly("Ping[ttl=0, context=]");
        assertThat(written(channel)).isEqualTo(hex("04 05 04504f4e47"));
    }

    @Test
    void pongIsPassedOn() {
        EmbeddedChannel channel = connected(SocketType.PUB);
        feed(channel, handshake("SUB"));
        assertThat(feed(channel, Wire.command("PONG", hex("01")))).containsExactly("Pong[\\x01]");
    }

    @Test
    void subscriptionsArriveInBothForms() {
        EmbeddedChannel channel = connected(SocketType.PUB);
        byte[] stream = concat(
                handshake("SUB"),
                Wire.command("SUBSCRIBE", ascii("m/web1/")),
                Wire.command("CANCEL", ascii("m/web1/")),
                Wire.frame(0, concat(hex("01"), ascii("b/"))),
                Wire.frame(0, concat(hex("00"), ascii("b/"))),
                Wire.command("SUBSCRIBE", new byte[0]),
                Wire.frame(0, hex("01")));
        assertThat(feed(channel, stream))
                .containsExactly(
                        "Handshaken[SUB, identity=]",
                        "Subscribe[m/web1/]",
                        "Cancel[m/web1/]",
                        "Subscribe[b/]",
                        "Cancel[b/]",
                        "Subscribe[]",
                        "Subscribe[]");
    }

    @Test
    void subscriberMessageThatIsNotASubscriptionIsRefused() {
        for (byte[] message : new byte[][] {Wire.message("\u0002x"), Wire.message(""), Wire.message("\u0001a", "b")}) {
            EmbeddedChannel channel = connected(SocketType.XPUB);
            assertThat(feed(channel, concat(handshake("XSUB"), message)))
                    .containsExactly(
                            "Handshaken[XSUB, identity=]",
                            "Refused[reason=a message from a subscriber that is not a subscription]");
        }
    }

    @Test
    void subscriptionOnARouterConnectionIsRefused() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, concat(handshake("DEALER"), Wire.command("SUBSCRIBE", ascii("x")))))
                .containsExactly(
                        "Handshaken[DEALER, identity=]",
                        "Refused[reason=SUBSCRIBE on an established ROUTER connection]");
    }

    @Test
    void routerMessageStartingWith1IsJustAMessage() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, concat(handshake("DEALER"), Wire.message("\u0001topic"))))
                .containsExactly("Handshaken[DEALER, identity=]", "Message[\\x01topic]");
    }

    @Test
    void secondReadyIsRefused() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, concat(handshake("DEALER"), ready("Socket-Type", "DEALER"))))
                .containsExactly(
                        "Handshaken[DEALER, identity=]", "Refused[reason=READY on an established ROUTER connection]");
    }

    @Test
    void errorAfterTheHandshakeIsRefusal() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        assertThat(feed(channel, concat(handshake("DEALER"), Wire.command("ERROR", hex("00")))))
                .containsExactly("Handshaken[DEALER, identity=]", "Refused[reason=the peer sent ERROR, detail=]");
    }

    @Test
    void unknownCommandIsSkippedSilently() {
        EmbeddedChannel channel = connected(SocketType.PUB);
        byte[] stream =
                concat(handshake("SUB"), Wire.command("JOIN", ascii("g")), Wire.command("SUBSCRIBE", ascii("b/")));
        assertThat(feed(channel, stream)).containsExactly("Handshaken[SUB, identity=]", "Subscribe[b/]");
    }

    @Test
    void nothingIsPassedOnAfterARefusal() {
        EmbeddedChannel channel = connected(SocketType.ROUTER);
        byte[] stream = concat(handshake("DEALER"), Wire.command("SUBSCRIBE", ascii("x")), Wire.message("after"));
        // The message came in the same read as the refused command: it is dropped.
        assertThat(feed(channel, stream))
                .containsExactly(
                        "Handshaken[DEALER, identity=]",
                        "Refused[reason=SUBSCRIBE on an established ROUTER connection]");
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void onlyRouterPubAndXpubAreServed() {
        assertThatThrownBy(() -> new ZmtpConnectionHandler(SocketType.DEALER))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
