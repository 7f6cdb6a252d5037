package io.lvmqos.e2e.bench;

import io.lvmqos.e2e.DriverProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Time from process start to the first successful Probe, and resident memory of the idle
 * process: with the JVM's defaults, with the flags the project ships (deploy/jvm.options), with an
 * application class-data-sharing archive, with the AOT cache the image uses, and with the AOT cache
 * but without each of the shipped memory flags in turn, which shows what each one is worth.
 * A benchmark: it reports, it does not assert times.
 * Run: mvn -pl test-e2e -am verify -Pbench -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=StartupBenchmark
 */
class StartupBenchmark {

    private static final int RUNS = 7;
    /** Shipped flags whose worth the table shows by leaving them out; a group is left out together. */
    private static final List<List<String>> MEMORY_FLAGS = List.of(
            List.of("-XX:TrimNativeHeapInterval="),
            List.of("-XX:MinHeapFreeRatio=", "-XX:MaxHeapFreeRatio="),
            List.of("-XX:-AOTRecordTraining", "-XX:-AOTReplayTraining"));

    @TempDir
    Path dir;

    @Test
    void startupAndIdleFootprint() throws Exception {
        List<String> shipped = DriverProcess.shippedJvmFlags();
        List<String> withCds = new ArrayList<>(shipped);
        withCds.add("-XX:SharedArchiveFile=" + dir.resolve("lvmqos.jsa"));
        withCds.add("-XX:+AutoCreateSharedArchive");
        measure(withCds, "warm-up", 1); // writes the archive
        String load = loadAverage();
        StringBuilder report = new StringBuilder("## Start-up and idle footprint (host, " + RUNS + " runs each)\n\n"
                + "| JVM flags | start to first Probe p50 (ms) | max (ms) | idle RSS p50 (MiB) | max (MiB) |\n"
                + "|---|---|---|---|---|\n");
        report.append(measure(List.of(), "JVM defaults", RUNS));
        report.append(measure(shipped, "deploy/jvm.options", RUNS));
        report.append(measure(withCds, "deploy/jvm.options + CDS archive", RUNS));
        List<String> withAot = withAotCache(shipped, "shipped");
        report.append(measure(withAot, "deploy/jvm.options + AOT cache", RUNS));
        // glibc gives each thread that mallocs an arena of its own; one arena trades lock contention, which an
        // idle plugin with a handful of RPC threads hardly has, for the arenas' untouched-but-resident pages
        report.append(measure(List.of("env", "MALLOC_ARENA_MAX=1"), withAot,
                "deploy/jvm.options + AOT cache + MALLOC_ARENA_MAX=1", RUNS));
        // a candidate, not shipped: a 1 MiB young generation (the shipped heap's is about 3.4 MiB) trades
        // idle RSS for a young collection every few calls
        List<String> smallYoung = new ArrayList<>(shipped);
        smallYoung.add("-Xmn1m");
        report.append(measure(List.of("env", "MALLOC_ARENA_MAX=1"), withAotCache(smallYoung, "small-young"),
                "deploy/jvm.options + AOT cache + MALLOC_ARENA_MAX=1 + -Xmn1m (not shipped)", RUNS));
        for (List<String> group : MEMORY_FLAGS) {
            List<String> without = shipped.stream().filter(f -> group.stream().noneMatch(f::startsWith)).toList();
            if (without.size() == shipped.size()) {
                throw new AssertionError("deploy/jvm.options has none of " + group + ": update MEMORY_FLAGS");
            }
            report.append(measure(withAotCache(without, "without-" + MEMORY_FLAGS.indexOf(group)),
                    "deploy/jvm.options + AOT cache, without " + String.join(" ", group).replace("=", ""), RUNS));
        }
        report.append("\nJava ").append(System.getProperty("java.version")).append(", ")
                .append(Runtime.getRuntime().availableProcessors()).append(" CPUs, load average ").append(load)
                .append(" at the start and ").append(loadAverage()).append(" at the end. RSS read from /proc/<pid>/status "
                        + "5 s after the first Probe, volume group absent (Probe answers ready=false). Each AOT cache "
                        + "is trained by a run of its own flags that makes the calls of scripts/image/TrainingClient.\n");
        BenchReport.write("startup", report.toString());
    }

    private List<String> withAotCache(List<String> flags, String name) throws Exception {
        return AotCache.trained(dir, flags, name);
    }

    private String measure(List<String> flags, String label, int runs) throws Exception {
        return measure(List.of(), flags, label, runs);
    }

    /** With a command prefix such as {@code env NAME=value}, which execs java and so keeps the measured pid. */
    private String measure(List<String> prefix, List<String> flags, String label, int runs) throws Exception {
        double[] startMillis = new double[runs];
        double[] rssMiB = new double[runs];
        for (int run = 0; run < runs; run++) {
            Path socket = dir.resolve("bench-" + run + ".sock");
            long started = System.nanoTime();
            try (DriverProcess driver = DriverProcess.start(prefix, socket, dir.resolve("bench.log"), flags,
                    "--node-id", "bench", "--volume-group", "lvmqos-bench-absent")) {
                AotCache.probeUntilAnswered(socket);
                startMillis[run] = (System.nanoTime() - started) / 1e6;
                Thread.sleep(5000);
                rssMiB[run] = residentKiB(driver.process().pid()) / 1024.0;
                driver.terminate(Duration.ofSeconds(15));
            }
        }
        return String.format("| %s | %.0f | %.0f | %.1f | %.1f |%n", label, BenchReport.percentile(startMillis, 50),
                BenchReport.percentile(startMillis, 100), BenchReport.percentile(rssMiB, 50),
                BenchReport.percentile(rssMiB, 100));
    }

    private static String loadAverage() throws Exception {
        return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    }

    static long residentKiB(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no VmRSS for " + pid);
    }
}
