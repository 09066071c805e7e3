package io.brine.bench;

import java.util.List;

/** How the benchmark rounds and judges its figures, the same in every scenario. */
final class Figures {

    private Figures() {}

    static String verdict(boolean met) {
        return met ? "met" : "MISSED";
    }

    static double ms(long nanos, long t0) {
        return (nanos - t0) / 1e6;
    }

    static long percentile(List<Long> sorted, double fraction) {
        int index = (int) Math.ceil(fraction * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    static double round(double value, int digits) {
        double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }
}
