package io.brine.transport.zmtp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** However a stream is cut into reads, the events and the answers are the same. */
class SplitInputTest {

    /** What a connection made of a stream: its events, then everything it wrote, then whether it is still open. */
    private record Outcome(List<String> events, String written, boolean open) {}

    static List<Arguments> streams() {
        return List.of(
                Arguments.of("dealer", SocketType.ROUTER, Streams.dealer()),
                Arguments.of("subscriber", SocketType.PUB, Streams.subscriber()),
                Arguments.of("refused dealer", SocketType.ROUTER, Streams.refusedDealer()));
    }

    private static Outcome run(SocketType ours, byte[] stream, List<Integer> cuts) {
        EmbeddedChannel channel = Wire.server(ours);
        List<String> events = new ArrayList<>();
        int from = 0;
        for (int cut : cuts) {
            if (channel.isActive()) {
                channel.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOfRange(stream, from, cut)));
                events.addAll(Wire.drain(channel));
            }
            from = cut;
        }
        return new Outcome(events, Wire.hex(Wire.written(channel)), channel.isActive());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("streams")
    void oneByteAtATimeGivesWhatOneReadGives(String name, SocketType ours, byte[] stream) {
        Outcome whole = run(ours, stream, List.of(stream.length));
        List<Integer> everyByte = new ArrayList<>();
        for (int i = 1; i <= stream.length; i++) {
            everyByte.add(i);
        }
        assertThat(run(ours, stream, everyByte)).isEqualTo(whole);
        boolean refused = name.startsWith("refused");
        assertThat(whole.open()).isEqualTo(!refused);
        assertThat(whole.events())
                .hasSizeGreaterThanOrEqualTo(3)
                .last()
                .asString()
                .matches(refused ? "Refused.*" : "(?!Refused).*");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("streams")
    void randomChunksGiveWhatOneReadGives(String name, SocketType ours, byte[] stream) {
        Outcome whole = run(ours, stream, List.of(stream.length));
        Random random = new Random(42);
        for (int round = 0; round < 200; round++) {
            List<Integer> cuts = new ArrayList<>();
            for (int at = 0; at < stream.length; ) {
                at = Math.min(stream.length, at + 1 + random.nextInt(random.nextBoolean() ? 8 : 120));
                cuts.add(at);
            }
            assertThat(run(ours, stream, cuts)).as("cuts %s", cuts).isEqualTo(whole);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("streams")
    void everySingleCutGivesWhatOneReadGives(String name, SocketType ours, byte[] stream) {
        Outcome whole = run(ours, stream, List.of(stream.length));
        for (int cut = 1; cut < stream.length; cut++) {
            assertThat(run(ours, stream, List.of(cut, stream.length)))
                    .as("cut at %d", cut)
                    .isEqualTo(whole);
        }
    }
}
