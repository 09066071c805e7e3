package io.brine.transport.zmtp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Random and mutated client streams (fixed seeds, so a failure reproduces), fed in random reads to a whole server
 * connection with small limits: nothing throws, everything that comes out is a {@link ZmtpEvent} within the limits,
 * a refusal is the last event and closes the connection, no more than one frame's worth is ever buffered, what the
 * server writes is well-formed ZMTP, and every buffer is released.
 */
class ZmtpFuzzTest {

    private static final int FRAME = 300;
    private static final int PARTS = 4;
    private static final int MESSAGE = 600;
    private static final ZmtpLimits LIMITS = ZmtpLimits.fixed(FRAME, PARTS, MESSAGE);
    private static final int MAX_READ = 64;
    /** Bytes that mean something to ZMTP: flags, sizes near the limits and 255, all-ones, name lengths, 0x7f. */
    private static final int[] INTERESTING = {
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x7f, 0x80, 0xfe, 0xff, 0x2c, 0x2d
    };

    @Test
    void mutatedValidStreamsOnlyEverEndAsValues() {
        List<Object[]> seeds = List.of(
                new Object[] {SocketType.ROUTER, Streams.dealer()},
                new Object[] {SocketType.PUB, Streams.subscriber()},
                new Object[] {SocketType.ROUTER, Streams.refusedDealer()});
        Random random = new Random(20260501L);
        int refused = 0;
        int rounds = 10_000;
        for (int round = 0; round < rounds; round++) {
            Object[] seed = seeds.get(random.nextInt(seeds.size()));
            if (run((SocketType) seed[0], mutate((byte[]) seed[1], random), random)) {
                refused++;
            }
        }
        // Both outcomes were exercised: some mutations stay valid ZMTP (inside bodies), most do not.
        assertThat(refused).isBetween(1, rounds - 1);
    }

    @Test
    void randomBytesAfterAValidHandshakeOnlyEverEndAsValues() {
        Random random = new Random(7L);
        for (int round = 0; round < 4_000; round++) {
            byte[] noise = new byte[1 + random.nextInt(400)];
            random.nextBytes(noise);
            for (int i = 0; i < noise.length; i++) {
                if (random.nextInt(4) == 0) {
                    noise[i] = (byte) INTERESTING[random.nextInt(INTERESTING.length)];
                }
            }
            SocketType ours = random.nextBoolean() ? SocketType.ROUTER : SocketType.XPUB;
            byte[] start = Wire.handshake(ours == SocketType.ROUTER ? "REQ" : "XSUB");
            run(ours, random.nextInt(8) == 0 ? noise : Wire.concat(start, noise), random);
        }
    }

    /** The client side (the swarm's simulated minions) takes the same abuse from a server. */
    @Test
    void mutatedServerStreamsToAClientOnlyEverEndAsValues() {
        byte[] ping = Wire.command("PING", Wire.concat(new byte[2], Wire.ascii("ctx")));
        List<Object[]> seeds = List.of(
                new Object[] {
                    SocketType.DEALER,
                    Wire.concat(Wire.handshake("ROUTER"), Wire.message("re:auth"), ping, Wire.message("", "reply"))
                },
                new Object[] {
                    SocketType.SUB,
                    Wire.concat(Wire.handshake("PUB"), Wire.message("m/web1/", "job"), ping, Wire.message("b/", "all"))
                });
        Random random = new Random(20261126L);
        int refused = 0;
        int rounds = 5_000;
        for (int round = 0; round < rounds; round++) {
            Object[] seed = seeds.get(random.nextInt(seeds.size()));
            if (run(Wire.client((SocketType) seed[0], LIMITS), mutate((byte[]) seed[1], random), random)) {
                refused++;
            }
        }
        assertThat(refused).isBetween(1, rounds - 1);
    }

    /** Feeds {@code stream} in random reads; checks every invariant; whether it ended in a refusal. */
    private static boolean run(SocketType ours, byte[] stream, Random random) {
        return run(Wire.server(ours, LIMITS), stream, random);
    }

    private static boolean run(EmbeddedChannel channel, byte[] stream, Random random) {
        ZmtpDecoder decoder = channel.pipeline().get(ZmtpDecoder.class);
        List<ByteBuf> reads = new ArrayList<>();
        List<Object> events = new ArrayList<>();
        try {
            for (int at = 0; at < stream.length && channel.isActive(); ) {
                int end = Math.min(stream.length, at + 1 + random.nextInt(MAX_READ));
                ByteBuf read = Unpooled.wrappedBuffer(Arrays.copyOfRange(stream, at, end));
                reads.add(read);
                channel.writeInbound(read); // rethrows anything a handler threw
                at = end;
                if (channel.isActive()) {
                    // One unfinished frame at most (header + body - 1), never what a size merely announces.
                    assertThat(decoder.pendingBytes()).isLessThanOrEqualTo(9 + FRAME - 1);
                    assertThat(decoder.pendingCapacity()).isLessThanOrEqualTo(2 * (9 + FRAME + MAX_READ));
                }
                for (Object event = channel.readInbound(); event != null; event = channel.readInbound()) {
                    events.add(event);
                }
            }
        } catch (Throwable t) {
            throw new AssertionError("threw on " + HexFormat.of().formatHex(stream), t);
        }
        for (int i = 0; i < events.size(); i++) {
            Object event = events.get(i);
            assertThat(event).isInstanceOf(ZmtpEvent.class);
            if (event instanceof ZmtpEvent.Refused refusal) {
                assertThat(i).as("a refusal is the last event").isEqualTo(events.size() - 1);
                assertThat(refusal.reason()).isNotBlank();
                assertThat(channel.isActive()).isFalse();
            } else if (event instanceof ZmtpEvent.Message message) {
                assertThat(message.parts()).hasSizeBetween(1, PARTS);
                assertThat(message.parts().stream().mapToInt(p -> p.length).sum())
                        .isLessThanOrEqualTo(MESSAGE);
            }
        }
        checkWritten(Wire.written(channel));
        channel.finishAndReleaseAll();
        assertThat(reads).allMatch(read -> read.refCnt() == 0);
        return !events.isEmpty() && events.get(events.size() - 1) instanceof ZmtpEvent.Refused;
    }

    /** What the server wrote decodes with our own decoder: a greeting, then commands only, none malformed. */
    private static void checkWritten(byte[] written) {
        EmbeddedChannel reader = Wire.decoder(Wire.roomy());
        reader.writeInbound(Unpooled.wrappedBuffer(written));
        assertThat((Object) reader.readInbound()).isInstanceOf(Greeting.class);
        for (Object unit = reader.readInbound(); unit != null; unit = reader.readInbound()) {
            assertThat(unit).isInstanceOfAny(Command.Ready.class, Command.Pong.class, Command.Error.class);
        }
        assertThat(reader.<ZmtpDecoder>pipeline().get(ZmtpDecoder.class).pendingBytes())
                .isZero();
        reader.finishAndReleaseAll();
    }

    /** One to three edits: flip a bit, overwrite, insert, delete, truncate, duplicate a slice. */
    private static byte[] mutate(byte[] original, Random random) {
        byte[] bytes = original.clone();
        int edits = 1 + random.nextInt(3);
        for (int i = 0; i < edits && bytes.length > 0; i++) {
            int at = random.nextInt(bytes.length);
            switch (random.nextInt(6)) {
                case 0 -> bytes[at] ^= (byte) (1 << random.nextInt(8));
                case 1 ->
                    bytes[at] = (byte)
                            (random.nextBoolean()
                                    ? random.nextInt(256)
                                    : INTERESTING[random.nextInt(INTERESTING.length)]);
                case 2 -> {
                    byte[] longer = new byte[bytes.length + 1];
                    System.arraycopy(bytes, 0, longer, 0, at);
                    longer[at] = (byte) INTERESTING[random.nextInt(INTERESTING.length)];
                    System.arraycopy(bytes, at, longer, at + 1, bytes.length - at);
                    bytes = longer;
                }
                case 3 -> {
                    int end = Math.min(bytes.length, at + 1 + random.nextInt(8));
                    bytes = Wire.concat(Arrays.copyOf(bytes, at), Arrays.copyOfRange(bytes, end, bytes.length));
                }
                case 4 -> bytes = Arrays.copyOf(bytes, at);
                default -> {
                    int end = Math.min(bytes.length, at + 1 + random.nextInt(16));
                    bytes = Wire.concat(
                            Arrays.copyOf(bytes, end),
                            Arrays.copyOfRange(bytes, at, end),
                            Arrays.copyOfRange(bytes, end, bytes.length));
                }
            }
        }
        return bytes;
    }
}
