package io.lvmqos.e2e.bench;

import csi.v1.Csi;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.DriverProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Time from process start to the first successful Probe, and resident memory of the idle
 * process, with the JVM flags the project ships (deploy/jvm.options), with and without an
 * application class-data-sharing archive. A benchmark: it reports, it does not assert times.
 * Run: ./bench startup   (or mvn -pl test-e2e verify -Pbench -Dit.test=StartupBenchmark)
 */
class StartupBenchmark {

    private static final int RUNS = 7;

    @TempDir
    Path dir;

    @Test
    void startupAndIdleFootprint() throws Exception {
        Path archive = dir.resolve("lvmqos.jsa");
        List<String> shipped = DriverProcess.shippedJvmFlags();
        List<String> withCds = new ArrayList<>(shipped);
        withCds.add("-XX:SharedArchiveFile=" + archive);
        withCds.add("-XX:+AutoCreateSharedArchive");
        measure(withCds, "warm-up", 1); // writes the archive
        StringBuilder report = new StringBuilder("## Start-up and idle footprint (host, " + RUNS + " runs each)\n\n"
                + "| JVM flags | start to first Probe p50 (ms) | max (ms) | idle RSS p50 (MiB) | max (MiB) |\n"
                + "|---|---|---|---|---|\n");
        report.append(measure(List.of(), "JVM defaults", RUNS));
        report.append(measure(shipped, "deploy/jvm.options", RUNS));
        report.append(measure(withCds, "deploy/jvm.options + CDS archive", RUNS));
        report.append("\nJava ").append(System.getProperty("java.version")).append(", ")
                .append(Runtime.getRuntime().availableProcessors()).append(" CPUs. RSS read from /proc/<pid>/status "
                        + "5 s after the first Probe, volume group absent (Probe answers ready=false).\n");
        BenchReport.write("startup", report.toString());
    }

    private String measure(List<String> flags, String label, int runs) throws Exception {
        double[] startMillis = new double[runs];
        double[] rssMiB = new double[runs];
        for (int run = 0; run < runs; run++) {
            Path socket = dir.resolve("bench-" + run + ".sock");
            long started = System.nanoTime();
            try (DriverProcess driver = DriverProcess.start(socket, dir.resolve("bench.log"), flags,
                    "--node-id", "bench", "--volume-group", "lvmqos-bench-absent")) {
                probeUntilAnswered(socket);
                startMillis[run] = (System.nanoTime() - started) / 1e6;
                Thread.sleep(5000);
                rssMiB[run] = residentKiB(driver.process().pid()) / 1024.0;
                driver.terminate(java.time.Duration.ofSeconds(15));
            }
        }
        return String.format("| %s | %.0f | %.0f | %.1f | %.1f |%n", label, BenchReport.percentile(startMillis, 50),
                BenchReport.percentile(startMillis, 100), BenchReport.percentile(rssMiB, 50),
                BenchReport.percentile(rssMiB, 100));
    }

    private static void probeUntilAnswered(Path socket) throws Exception {
        while (!Files.exists(socket)) {
            Thread.sleep(2);
        }
        try (CsiClient client = CsiClient.connect(socket)) {
            while (true) {
                try {
                    client.identity().withDeadlineAfter(5, TimeUnit.SECONDS).probe(Csi.ProbeRequest.getDefaultInstance());
                    return;
                } catch (RuntimeException notYet) {
                    Thread.sleep(2);
                }
            }
        }
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
