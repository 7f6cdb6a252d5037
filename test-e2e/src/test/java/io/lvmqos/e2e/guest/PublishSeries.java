package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.bench.BenchReport.percentile;

import io.lvmqos.e2e.bench.BenchReport;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The measured series of {@link PublishBenchCheck}: for each step a name and its nanosecond samples,
 * one a measured round, in round order. The percentiles themselves are {@link BenchReport}'s, shared
 * with the other benchmarks.
 */
final class PublishSeries {

    private final int rounds;
    private final Map<String, long[]> nanos = new LinkedHashMap<>();
    private final Map<String, Integer> counts = new LinkedHashMap<>();

    /** @param rounds the measured rounds: each step has at most one sample per round */
    PublishSeries(int rounds) {
        this.rounds = rounds;
    }

    void add(String step, long sampleNanos) {
        long[] samples = nanos.computeIfAbsent(step, s -> new long[rounds]);
        int count = counts.merge(step, 1, Integer::sum);
        samples[count - 1] = sampleNanos;
    }

    /** The step's samples in milliseconds, in round order. */
    double[] millis(String step) {
        long[] samples = nanos.get(step);
        if (samples == null) {
            throw new IllegalArgumentException("no samples of " + step);
        }
        return BenchReport.millis(Arrays.copyOf(samples, counts.get(step)));
    }

    double p50(String step) {
        return percentile(millis(step), 50);
    }
}
