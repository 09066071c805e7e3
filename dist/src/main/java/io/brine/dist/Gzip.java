package io.brine.dist;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;

/**
 * Run at build time for the Debian package: {@code Gzip OUT_DIR VERSION FILE...} writes each FILE as
 * {@code OUT_DIR/NAME.gz} at the best compression (Debian wants man pages and changelogs so, lintian checks it), with
 * {@code [[version]]} replaced by VERSION and no time stamp in the header, so a rebuild gives the same bytes.
 */
public final class Gzip {

    private Gzip() {}

    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            throw new IllegalArgumentException("usage: Gzip OUT_DIR VERSION FILE...");
        }
        Path out = Files.createDirectories(Path.of(args[0]));
        for (int i = 2; i < args.length; i++) {
            Path file = Path.of(args[i]);
            String text = Files.readString(file, StandardCharsets.UTF_8).replace("[[version]]", args[1]);
            write(out.resolve(file.getFileName() + ".gz"), text.getBytes(StandardCharsets.UTF_8));
        }
    }

    static void write(Path target, byte[] content) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (OutputStream gzip = new BestGzip(bytes)) {
            gzip.write(content);
        }
        byte[] gz = bytes.toByteArray();
        gz[8] = 2; // XFL: best compression, as gzip -9 marks it (GZIPOutputStream writes 0; lintian reads it)
        gz[9] = 3; // OS: Unix
        Files.write(target, gz);
    }

    /** GZIPOutputStream's header carries no time stamp; its deflater is set to the best compression. */
    private static final class BestGzip extends GZIPOutputStream {
        BestGzip(OutputStream out) throws IOException {
            super(out);
            def.setLevel(Deflater.BEST_COMPRESSION);
        }
    }
}
