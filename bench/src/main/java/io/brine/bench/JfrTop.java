package io.brine.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a JFR recording's CPU samples ({@code jdk.ExecutionSample}) went: the hottest methods by self time, the
 * brine methods by total time (the method anywhere on the stack), and the threads. Enough to read a profile
 * without a GUI; open the file in JDK Mission Control for more.
 */
final class JfrTop {

    private JfrTop() {}

    public static void main(String[] args) throws IOException {
        System.out.print(summary(Path.of(args[0]), args.length > 1 ? Integer.parseInt(args[1]) : 30));
    }

    static String summary(Path recording, int top) throws IOException {
        return summary(recording, top, Instant.MIN);
    }

    /** As {@link #summary(Path, int)}, over the samples taken from {@code since} on. */
    static String summary(Path recording, int top, Instant since) throws IOException {
        Map<String, Integer> self = new HashMap<>();
        Map<String, Integer> total = new HashMap<>();
        Map<String, Integer> threads = new HashMap<>();
        int samples = 0;
        for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
            if (!event.getEventType().getName().equals("jdk.ExecutionSample")
                    || event.getStartTime().isBefore(since)) {
                continue;
            }
            RecordedStackTrace stack = event.getStackTrace();
            if (stack == null || stack.getFrames().isEmpty()) {
                continue;
            }
            samples++;
            List<RecordedFrame> frames = stack.getFrames();
            self.merge(name(frames.get(0)), 1, Integer::sum);
            Set<String> seen = new HashSet<>();
            for (RecordedFrame frame : frames) {
                String name = name(frame);
                if (name.startsWith("io.brine.") && seen.add(name)) {
                    total.merge(name, 1, Integer::sum);
                }
            }
            String thread = event.getThread("sampledThread") == null
                    ? "?"
                    : event.getThread("sampledThread").getJavaName();
            threads.merge(thread == null ? "?" : thread.replaceAll("-\\d+$", "-N"), 1, Integer::sum);
        }
        StringBuilder out = new StringBuilder();
        out.append(String.format("  %d CPU samples%n  hottest methods (self):%n", samples));
        append(out, self, samples, top);
        out.append("  brine methods (total, anywhere on the stack):\n");
        append(out, total, samples, top);
        out.append("  threads:\n");
        append(out, threads, samples, 10);
        return out.toString();
    }

    private static void append(StringBuilder out, Map<String, Integer> counts, int samples, int top) {
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(top)
                .forEach(e -> out.append(
                        String.format("    %5.1f %%  %s%n", 100.0 * e.getValue() / Math.max(1, samples), e.getKey())));
    }

    private static String name(RecordedFrame frame) {
        return frame.getMethod().getType().getName() + "." + frame.getMethod().getName();
    }
}
