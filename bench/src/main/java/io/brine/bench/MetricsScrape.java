package io.brine.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A brine-master's Prometheus exposition ({@code GET /metrics} on {@code http_port}), read for a few counters. */
record MetricsScrape(String text) {

    /** One client for every scrape: the restart scenario polls the master ten times a second. */
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    /** The master's metrics now, from {@code http://127.0.0.1:port/metrics}. */
    static MetricsScrape of(int port) throws IOException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                .timeout(Duration.ofSeconds(30))
                .build();
        try {
            HttpResponse<String> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IOException("GET /metrics on port " + port + " answered " + response.statusCode());
            }
            return new MetricsScrape(response.body());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted reading the master's metrics", e);
        }
    }

    /**
     * The sum of the samples of {@code name} (exactly that name, not a longer one) whose labels contain
     * {@code labels} ("" for any); 0 when there is none, as a counter not yet incremented is absent.
     */
    double sum(String name, String labels) {
        double sum = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith("#") || !line.startsWith(name)) {
                continue;
            }
            String rest = line.substring(name.length());
            String labelPart = "";
            if (rest.startsWith("{")) {
                int close = rest.indexOf('}');
                if (close < 0) {
                    continue;
                }
                labelPart = rest.substring(1, close);
                rest = rest.substring(close + 1);
            } else if (!rest.startsWith(" ")) {
                continue; // a longer name: brine_resumptions_refused_total is not brine_resumptions_total
            }
            if (!labelPart.contains(labels)) {
                continue;
            }
            String[] words = rest.trim().split("\\s+");
            try {
                sum += Double.parseDouble(words[0]);
            } catch (NumberFormatException e) {
                // not a sample line
            }
        }
        return sum;
    }
}
