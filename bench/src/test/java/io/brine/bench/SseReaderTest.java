package io.brine.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SseReaderTest {

    private static final String HEAD = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n";

    private static String chunk(String body) {
        return Integer.toHexString(body.getBytes(StandardCharsets.UTF_8).length) + "\r\n" + body + "\r\n";
    }

    private static List<SseReader.Event> events(String raw) throws IOException {
        return events(raw.getBytes(StandardCharsets.UTF_8));
    }

    private static List<SseReader.Event> events(byte[] raw) throws IOException {
        SseReader reader = new SseReader(new ByteArrayInputStream(raw));
        assertThat(reader.status()).isEqualTo(200);
        List<SseReader.Event> events = new ArrayList<>();
        for (Optional<SseReader.Event> event = reader.next(); event.isPresent(); event = reader.next()) {
            events.add(event.get());
        }
        return events;
    }

    @Test
    void eventsAreReadAcrossChunksWhateverWhereTheChunksSplitThem() throws IOException {
        byte[] body = ("id: 7\ndata: {\"tag\":\"brine/job/1/new\"}\n\nid: 8\ndata: {\"tag\":\"brine/job/1/ret/é\"}\n\n")
                .getBytes(StandardCharsets.UTF_8);
        // Split at every byte: an event, a line, a UTF-8 character cut by a chunk boundary reads the same.
        for (int cut = 1; cut < body.length; cut++) {
            ByteArrayOutputStream raw = new ByteArrayOutputStream();
            raw.writeBytes(HEAD.getBytes(StandardCharsets.US_ASCII));
            raw.writeBytes((Integer.toHexString(cut) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            raw.write(body, 0, cut);
            raw.writeBytes(("\r\n" + Integer.toHexString(body.length - cut) + ";ext=1\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            raw.write(body, cut, body.length - cut);
            raw.writeBytes("\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(events(raw.toByteArray()))
                    .as("cut at %d", cut)
                    .containsExactly(
                            new SseReader.Event(Optional.of("7"), "{\"tag\":\"brine/job/1/new\"}"),
                            new SseReader.Event(Optional.of("8"), "{\"tag\":\"brine/job/1/ret/é\"}"));
        }
    }

    @Test
    void commentsAndUnknownFieldsAreSkippedAndDataLinesJoinedAndAnEventWithoutIdHasNone() throws IOException {
        List<SseReader.Event> events =
                events(HEAD + chunk(": keep-alive\n\nretry: 100\ndata:a\ndata: b\n\n") + "0\r\n\r\n");
        assertThat(events).containsExactly(new SseReader.Event(Optional.empty(), "a\nb"));
    }

    @Test
    void anEventCutOffBeforeItsBlankLineIsNotDispatchedAndTheStreamEndsAtTheConnectionsEnd() throws IOException {
        assertThat(events(HEAD + chunk("id: 1\ndata: x\n\nid: 2\ndata: y\n")))
                .containsExactly(new SseReader.Event(Optional.of("1"), "x"));
    }

    @Test
    void aConnectionClosedInsideAChunkIsAnEndOfFileAndABadChunkSizeAnError() {
        assertThatThrownBy(() -> events(HEAD + "20\r\nid: 1\n")).isInstanceOf(EOFException.class);
        assertThatThrownBy(() -> events(HEAD + "zz\r\nid: 1\n"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not a chunk size: zz");
        assertThatThrownBy(() -> events(HEAD + "3\r\nabcX\r\n"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("CRLF");
    }

    @Test
    void theStatusOfARefusalIsReadAndAnAnswerThatIsNotHttpIsAnError() throws IOException {
        SseReader refused = new SseReader(new ByteArrayInputStream(
                ("HTTP/1.1 401 Unauthorized\r\n" + "content-length: 2\r\n\r\n{}").getBytes(StandardCharsets.US_ASCII)));
        assertThat(refused.status()).isEqualTo(401);
        assertThatThrownBy(() ->
                        new SseReader(new ByteArrayInputStream("SSH-2.0\r\n".getBytes(StandardCharsets.US_ASCII))))
                .hasMessageContaining("not an HTTP/1.1 answer");
        assertThatThrownBy(() -> new SseReader(new ByteArrayInputStream(new byte[0])))
                .isInstanceOf(EOFException.class);
    }
}
