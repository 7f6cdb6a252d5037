package io.lvmqos.e2e.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/** Percentiles and the report file a benchmark leaves in target/bench. */
public final class BenchReport {

    private BenchReport() {
    }

    public static double percentile(double[] values, double p) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    public static void write(String name, String markdown) throws IOException {
        writeTo(Path.of(System.getProperty("lvmqos.benchDir", "target/bench")), name, markdown);
        System.out.println(markdown);
    }

    /** The report file alone, in a directory of the caller's choosing (a guest writes into its output directory). */
    public static void writeTo(Path dir, String name, String markdown) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(name + ".md"), markdown);
    }

    /** Nanosecond samples as milliseconds, the unit the tables use. */
    public static double[] millis(long[] nanos) {
        return Arrays.stream(nanos).mapToDouble(n -> n / 1e6).toArray();
    }

    public static double mean(double[] values) {
        return Arrays.stream(values).average().orElse(Double.NaN);
    }

    /** A duration in milliseconds as the tables print it: two decimals below 100 ms, none above. */
    public static String ms(double millis) {
        return millis < 100 ? String.format("%.2f", millis) : String.format("%.0f", millis);
    }

    /** The host's /proc/loadavg, so that figures taken on a shared machine say how busy it was. */
    public static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).strip();
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }
}
