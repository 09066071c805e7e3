package io.brine.bench;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;

/**
 * The reading side of one {@code GET /api/events} answer, from the raw bytes of its connection: the status line and
 * headers, then the chunked body (HTTP/1.1 chunked transfer coding), then the server-sent events in it. The bench
 * reads its own sockets (not an HTTP client's) so that a deliberately slow reader can have a small receive buffer.
 */
final class SseReader {

    /** One event: its {@code id} (absent if it had none) and its data lines joined with line feeds. */
    record Event(Optional<String> id, String data) {}

    /** A line longer than this (a chunk size, a header, an event line) is not from the master. */
    static final int MAX_LINE = 1024 * 1024;

    private final InputStream in;
    private final int status;
    private final boolean chunked;
    /** Bytes left in the current chunk; -1 once the last chunk was read. */
    private long chunkLeft;

    /** Reads the status line and the headers. */
    SseReader(InputStream in) throws IOException {
        this.in = in;
        String statusLine = rawLine();
        if (statusLine == null) {
            throw new EOFException("the connection closed before an answer");
        }
        String[] parts = statusLine.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP/1.1 answer: " + statusLine);
        }
        try {
            status = Integer.parseInt(parts[1]);
        } catch (NumberFormatException e) {
            throw new IOException("not an HTTP status: " + statusLine, e);
        }
        boolean isChunked = false;
        for (String header = rawLine(); ; header = rawLine()) {
            if (header == null) {
                throw new EOFException("the connection closed in the headers");
            }
            if (header.isEmpty()) {
                break;
            }
            int colon = header.indexOf(':');
            if (colon > 0 && header.substring(0, colon).trim().equalsIgnoreCase("transfer-encoding")) {
                isChunked = header.substring(colon + 1)
                        .trim()
                        .toLowerCase(Locale.ROOT)
                        .equals("chunked");
            }
        }
        chunked = isChunked;
    }

    int status() {
        return status;
    }

    /** The next event, or empty once the stream ended (the last chunk, or the connection closed). */
    Optional<Event> next() throws IOException {
        Optional<String> id = Optional.empty();
        StringBuilder data = null;
        while (true) {
            String line = bodyLine();
            if (line == null) {
                return Optional.empty(); // an event not ended by a blank line is not dispatched (as a browser's)
            }
            if (line.isEmpty()) {
                if (data != null) {
                    return Optional.of(new Event(id, data.toString()));
                }
                continue;
            }
            if (line.startsWith(":")) {
                continue; // a comment
            }
            int colon = line.indexOf(':');
            String field = colon < 0 ? line : line.substring(0, colon);
            String value = colon < 0 ? "" : line.substring(colon + 1);
            if (value.startsWith(" ")) {
                value = value.substring(1);
            }
            if (field.equals("data")) {
                data = data == null
                        ? new StringBuilder(value)
                        : data.append('\n').append(value);
            } else if (field.equals("id")) {
                id = Optional.of(value);
            }
        }
    }

    /** A body byte, decoded from the chunks; -1 at the end. */
    private int bodyByte() throws IOException {
        if (!chunked) {
            return in.read();
        }
        if (chunkLeft < 0) {
            return -1;
        }
        if (chunkLeft == 0) {
            String size = rawLine();
            if (size == null) {
                return -1;
            }
            int extension = size.indexOf(';');
            String hex = (extension < 0 ? size : size.substring(0, extension)).trim();
            try {
                chunkLeft = Long.parseLong(hex, 16);
            } catch (NumberFormatException e) {
                throw new IOException("not a chunk size: " + hex, e);
            }
            if (chunkLeft < 0) {
                throw new IOException("not a chunk size: " + hex);
            }
            if (chunkLeft == 0) {
                chunkLeft = -1;
                return -1;
            }
        }
        int b = in.read();
        if (b < 0) {
            throw new EOFException("the connection closed inside a chunk");
        }
        if (--chunkLeft == 0) {
            String end = rawLine();
            if (end == null || !end.isEmpty()) {
                throw new IOException("a chunk not ended by CRLF");
            }
        }
        return b;
    }

    /** A body line (LF, CRLF or CR ended, UTF-8); null at the end of the body. */
    private String bodyLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = bodyByte();
            if (b < 0) {
                return line.size() == 0 ? null : line.toString(StandardCharsets.UTF_8);
            }
            if (b == '\n') {
                return line.toString(StandardCharsets.UTF_8);
            }
            if (b == '\r') {
                continue; // the master ends lines with LF: a CRLF reads as LF
            }
            if (line.size() == MAX_LINE) {
                throw new IOException("a line over " + MAX_LINE + " bytes");
            }
            line.write(b);
        }
    }

    /** A CRLF-ended line of the HTTP framing (ISO-8859-1); null if the connection closed before any byte. */
    private String rawLine() throws IOException {
        StringBuilder line = new StringBuilder();
        while (true) {
            int b = in.read();
            if (b < 0) {
                if (line.length() == 0) {
                    return null;
                }
                throw new EOFException("the connection closed inside a line");
            }
            if (b == '\n') {
                int length = line.length();
                return length > 0 && line.charAt(length - 1) == '\r' ? line.substring(0, length - 1) : line.toString();
            }
            if (line.length() == MAX_LINE) {
                throw new IOException("a line over " + MAX_LINE + " bytes");
            }
            line.append((char) b);
        }
    }
}
