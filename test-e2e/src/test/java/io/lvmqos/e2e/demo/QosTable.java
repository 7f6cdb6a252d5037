package io.lvmqos.e2e.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What fio measured in each pod, judged: a limited volume must come within 10% of its limit, an
 * unlimited one must run at least 5 times as fast as the limited volume measured with the same job.
 */
final class QosTable {

    static final double TOLERANCE = 0.10;
    static final double MIN_SPEEDUP = 5.0;
    private static final double MIB = 1 << 20;

    /** A limit from io.max, on the figure the job is judged by: bytes per second or IOPS. */
    record Limit(String ioMaxKey, double value) {
        String describe() {
            return ioMaxKey.endsWith("bps") ? ioMaxKey + " " + number(value / MIB) + " MiB/s" : ioMaxKey + " " + number(value);
        }
    }

    /**
     * One fio run: the PVC, its StorageClass, who ran the pod (containerd+runc or the test bed's
     * imitation), the job, the limit it ran under (none: unlimited).
     */
    record Row(String pvc, String storageClass, String podRuntime, FioJob job, Optional<Limit> limit, double iops, double bytesPerSecond) {
        double judged() {
            return job.bandwidth() ? bytesPerSecond : iops;
        }
    }

    /** A row's verdict: the text for the last columns, and why it fails if it does. */
    record Verdict(String ratio, Optional<String> failure) {
    }

    private final List<Row> rows = new ArrayList<>();

    void add(Row row) {
        rows.add(row);
    }

    List<Row> rows() {
        return List.copyOf(rows);
    }

    Verdict verdict(Row row) {
        if (row.limit().isPresent()) {
            double ratio = row.judged() / row.limit().get().value();
            Optional<String> failure = Math.abs(ratio - 1) <= TOLERANCE ? Optional.empty()
                    : Optional.of(row.pvc() + " " + row.job().label() + ": measured " + figure(row) + " against "
                            + row.limit().get().describe() + ", " + Math.round(100 * ratio) + "% of the limit (more than "
                            + Math.round(100 * TOLERANCE) + "% off)");
            return new Verdict(String.format(Locale.ROOT, "%.2f", ratio), failure);
        }
        Optional<Row> reference = rows.stream()
                .filter(other -> other.job() == row.job() && other.limit().isPresent())
                .findFirst();
        if (reference.isEmpty()) {
            return new Verdict("-", Optional.empty());
        }
        double speedup = row.judged() / reference.get().judged();
        Optional<String> failure = speedup >= MIN_SPEEDUP ? Optional.empty()
                : Optional.of(row.pvc() + " " + row.job().label() + ": unlimited " + figure(row) + " is only "
                        + String.format(Locale.ROOT, "%.1f", speedup) + " times the limited " + reference.get().pvc()
                        + "'s " + figure(reference.get()) + " (at least " + number(MIN_SPEEDUP) + " expected)");
        return new Verdict(String.format(Locale.ROOT, "%.1fx %s", speedup, reference.get().pvc()), failure);
    }

    List<String> failures() {
        return rows.stream().map(this::verdict).flatMap(v -> v.failure().stream()).toList();
    }

    /** The table, columns aligned; the last column says whether the row passed. */
    List<String> render() {
        List<List<String>> cells = new ArrayList<>();
        cells.add(List.of("PVC", "StorageClass", "pod run by", "limit (io.max)", "fio in the pod", "IOPS", "MiB/s", "ratio", ""));
        for (Row row : rows) {
            Verdict verdict = verdict(row);
            cells.add(List.of(row.pvc(), row.storageClass(), row.podRuntime(), row.limit().map(Limit::describe).orElse("none"),
                    row.job().label(), String.format(Locale.ROOT, "%.1f", row.iops()),
                    String.format(Locale.ROOT, "%.2f", row.bytesPerSecond() / MIB), verdict.ratio(),
                    verdict.failure().isPresent() ? "FAIL" : "ok"));
        }
        int columns = cells.getFirst().size();
        int[] widths = new int[columns];
        for (List<String> line : cells) {
            for (int c = 0; c < columns; c++) {
                widths[c] = Math.max(widths[c], line.get(c).length());
            }
        }
        // numbers right-aligned, text left-aligned
        boolean[] right = {false, false, false, false, false, true, true, true, false};
        List<String> lines = new ArrayList<>();
        for (List<String> line : cells) {
            StringBuilder text = new StringBuilder();
            for (int c = 0; c < columns; c++) {
                String format = "%" + (right[c] ? "" : "-") + widths[c] + "s";
                text.append(c == 0 ? "" : "  ").append(String.format(Locale.ROOT, format, line.get(c)));
            }
            lines.add(text.toString().stripTrailing());
        }
        return lines;
    }

    static String figure(Row row) {
        return row.job().bandwidth() ? String.format(Locale.ROOT, "%.2f MiB/s", row.bytesPerSecond() / MIB)
                : String.format(Locale.ROOT, "%.1f IOPS", row.iops());
    }

    private static String number(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : String.format(Locale.ROOT, "%.2f", value);
    }
}
