package io.lvmqos.e2e.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One scrape of the driver's metrics endpoint, read as Prometheus reads the text format: its samples,
 * its text, and when it was taken (the request's midpoint on {@code System.nanoTime} and on the wall
 * clock, and how long the request took), so that a rate between two scrapes can be compared with
 * fio's own log.
 */
record MetricsScrape(List<Sample> samples, String text, long atNanos, long tookNanos, long atMillis) {

    /** The counter families only: a small answer, quick to make and send, for scrapes that are timed. */
    static final String COUNTERS = "?name[]=lvmqos_volume_io_bytes_total&name[]=lvmqos_volume_io_operations_total";

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    record Sample(String name, Map<String, String> labels, double value) {
    }

    /** GET http://{address}/metrics{query}; the answer must be 200. */
    static MetricsScrape of(String address, String query) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + address + "/metrics" + query))
                .timeout(Duration.ofSeconds(30)).build();
        long sentMillis = System.currentTimeMillis();
        long sent = System.nanoTime();
        HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        long received = System.nanoTime();
        assertEquals(200, response.statusCode(), response.body());
        return new MetricsScrape(parse(response.body()), response.body(), sent + (received - sent) / 2,
                received - sent, sentMillis + (received - sent) / 2_000_000);
    }

    /** Scrapes every 500 ms until {@code ready} holds or {@code timeout} passes; returns the last scrape. */
    static MetricsScrape await(String address, Predicate<MetricsScrape> ready, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        MetricsScrape scrape = of(address, "");
        while (!ready.test(scrape) && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(500);
            scrape = of(address, "");
        }
        return scrape;
    }

    /**
     * Scrapes the counters every 100 ms until the written bytes of every one of {@code writers} (a
     * volume, pod and direction each) are above zero, that is until each writer's first I/O has passed
     * the throttle. A writer that was started is not yet writing: under load its start alone can take
     * seconds, and a window that opens before it would measure a rate too low.
     */
    static MetricsScrape awaitWriting(String address, List<Map<String, String>> writers, Duration timeout)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            MetricsScrape scrape = of(address, COUNTERS);
            if (writers.stream().allMatch(w -> scrape.value("lvmqos_volume_io_bytes_total", w).orElse(0.0) > 0)) {
                return scrape;
            }
            assertTrue(System.nanoTime() < deadline, "no bytes written by " + writers + " after " + timeout + ":\n"
                    + scrape.text());
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    Optional<Double> value(String name, Map<String, String> labels) {
        List<Sample> found = samples.stream().filter(s -> s.name().equals(name))
                .filter(s -> s.labels().entrySet().containsAll(labels.entrySet())).toList();
        assertTrue(found.size() <= 1, "more than one " + name + labels + " in\n" + text);
        return found.stream().findFirst().map(Sample::value);
    }

    double require(String name, Map<String, String> labels) {
        return value(name, labels).orElseThrow(() -> new AssertionError("no " + name + labels + " in\n" + text));
    }

    boolean has(String name) {
        return samples.stream().anyMatch(s -> s.name().equals(name));
    }

    /** Bytes per second of a counter between {@code earlier} and this scrape, on the monotonic clock. */
    double ratePerSecondSince(MetricsScrape earlier, String name, Map<String, String> labels) {
        return (require(name, labels) - earlier.require(name, labels)) / ((atNanos - earlier.atNanos) / 1e9);
    }

    static List<Sample> parse(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            assertTrue(m.matches(), "not a sample line: " + line);
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(2) != null) {
                Matcher label = LABEL.matcher(m.group(2));
                while (label.find()) {
                    labels.put(label.group(1), label.group(2));
                }
            }
            samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3).replace("+Inf", "Infinity"))));
        }
        return samples;
    }
}
