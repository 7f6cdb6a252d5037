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

    /** The host's CPU counters (the first line of /proc/stat, in ticks): user, nice, system, idle, iowait, irq, softirq, steal. */
    public static long[] hostCpuTicks() {
        try {
            String[] fields = Files.readAllLines(Path.of("/proc/stat")).getFirst().trim().split("\\s+");
            return Arrays.stream(fields, 1, Math.min(fields.length, 9)).mapToLong(Long::parseLong).toArray();
        } catch (IOException | RuntimeException e) {
            return new long[0];
        }
    }

    /**
     * How the host's CPUs spent a run, from two {@link #hostCpuTicks()}: busy, the part of it at
     * nice (other work started niced so as not to disturb), and stolen by the hypervisor, the
     * load that /proc/loadavg does not show.
     */
    public static String hostCpuBetween(long[] before, long[] after) {
        if (before.length < 8 || after.length < 8) {
            return "unknown";
        }
        long[] d = new long[8];
        long total = 0;
        for (int i = 0; i < 8; i++) {
            d[i] = after[i] - before[i];
            total += d[i];
        }
        if (total <= 0) {
            return "unknown";
        }
        long busy = total - d[3] - d[4];
        return String.format("%.0f %% busy (%.0f %% of it niced), %.1f %% stolen", 100.0 * busy / total,
                100.0 * d[1] / Math.max(1, busy), 100.0 * d[7] / total);
    }
}
