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
        Path dir = Path.of(System.getProperty("lvmqos.benchDir", "target/bench"));
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(name + ".md"), markdown);
        System.out.println(markdown);
    }
}
