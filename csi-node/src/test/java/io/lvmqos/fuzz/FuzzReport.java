package io.lvmqos.fuzz;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Locale;

/**
 * Counts a fuzz target's executions and, when Jazzer fuzzed it (the bounded-fuzz execution of every
 * build and the {@code fuzz} profile set JAZZER_FUZZ), prints "FUZZ REPORT CLASS executions=N
 * seconds=S rate=R/s" and appends that line, after the time, to {@code target/fuzz-report.txt},
 * which docs/fuzzing.md quotes. libFuzzer prints its own "Done N runs" too; this line is one per target,
 * easy to collect, and counts what reached the target method rather than what libFuzzer started.
 * In regression mode (the committed inputs only) it writes nothing.
 *
 * <p>The same class as csi-controller's: this module does not see that one's test classes.
 */
public final class FuzzReport {

    /** Where the module's fuzz targets append their lines, relative to the module (surefire's working directory). */
    public static final Path FILE = Path.of("target", "fuzz-report.txt");

    private final String target;
    private long executions;
    private long firstNanos;

    public FuzzReport(Class<?> target) {
        this.target = target.getSimpleName();
    }

    /** One execution; call it first thing in the fuzz target. */
    public void count() {
        if (executions++ == 0) {
            firstNanos = System.nanoTime();
        }
    }

    public long executions() {
        return executions;
    }

    /** Appends this target's line when it was fuzzed; call it from the class's {@code @AfterAll}. */
    public void write() {
        String fuzz = System.getenv("JAZZER_FUZZ");
        if (fuzz == null || fuzz.isEmpty()) {
            return;
        }
        double seconds = (System.nanoTime() - firstNanos) / 1e9;
        String line = String.format(Locale.ROOT, "%s executions=%d seconds=%.0f rate=%.0f/s", target, executions,
                seconds, executions / Math.max(seconds, 1e-9));
        try {
            Files.createDirectories(FILE.getParent());
            Files.writeString(FILE, Instant.now() + " " + line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        System.out.println("FUZZ REPORT " + line);
    }
}
