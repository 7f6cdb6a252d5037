package io.lvmqos.e2e.bench;

import io.lvmqos.e2e.DriverProcess;
import io.lvmqos.e2e.deploy.DeployedPlugin;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 39: the driver started as the DaemonSet starts it (its args read from
 * deploy/kubernetes/daemonset.yaml, deploy/jvm.options, the image's AOT cache and MALLOC_ARENA_MAX,
 * so --watch-kubernetes on) against an API server ({@link SyntheticApiServer}) holding 1,000,
 * 10,000 and 50,000 PersistentVolumes (a quarter of them this driver's, over 100 nodes) and 200
 * VolumeAttributesClasses, then a storm of PersistentVolume changes. Reports, per size: the time
 * to the first Probe, the peak RSS through start-up and the initial list, the idle RSS, the peak
 * RSS through the storm, and what the node received (objects and bytes, list and watch). A
 * benchmark: it asserts only that the lists were paged, never a figure.
 *
 * <p>Host-side: what would bind the container to its node is pointed elsewhere (the socket, the
 * kubelet directory, the cgroup root, the metrics port) and the volume group is one that does not
 * exist (Probe answers not ready), as in StartupBenchmark; none of these is on the watch's path.
 * Run: mvn -pl test-e2e -am verify -Pbench -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false
 * -Dit.test=DeployedFootprintBenchmark [-Dlvmqos.footprintSizes=1000,10000]
 */
class DeployedFootprintBenchmark {

    private static final int NODES = 100;
    private static final String NODE = SyntheticApiServer.nodeName(0);
    private static final String ABSENT_GROUP = "lvmqos-bench-absent";
    /** After the list: long enough for a collection, the heap's shrinking and a few native trims. */
    private static final Duration SETTLE = Duration.ofSeconds(20);
    private static final int STORM_EVENTS = 5_000;
    private static final Duration IDLE_CPU_WINDOW = Duration.ofSeconds(30);
    /** USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux architecture the image is built for. */
    private static final double CLOCK_TICKS = 100;

    @TempDir
    Path dir;

    @Test
    void deployedConfigurationAsTheClusterGrows() throws Exception {
        int[] sizes = Arrays.stream(System.getProperty("lvmqos.footprintSizes", "1000,10000,50000").split(","))
                .mapToInt(s -> Integer.parseInt(s.strip())).toArray();
        DeployedPlugin deployed = DeployedPlugin.withEnvironment(Map.of("NODE_NAME", NODE));
        String driverName = flagValue(deployed.args(), "--driver-name");
        if (!deployed.args().contains("--watch-kubernetes")) {
            throw new AssertionError("the DaemonSet no longer passes --watch-kubernetes: " + deployed.args());
        }
        List<String> flags = new ArrayList<>(AotCache.trained(dir, DriverProcess.shippedJvmFlags(), "deployed"));
        // -Dlvmqos.footprintJvmFlags=-XX:NativeMemoryTracking=summary for where the idle MiB go (not the deployed way)
        String extra = System.getProperty("lvmqos.footprintJvmFlags", "").strip();
        if (!extra.isEmpty()) {
            flags.addAll(List.of(extra.split("\\s+")));
        }
        String load = BenchReport.loadAverage();
        long[] cpuBefore = BenchReport.hostCpuTicks();
        StringBuilder rows = new StringBuilder();
        List<double[]> points = new ArrayList<>();
        for (int volumes : sizes) {
            Measured m = measure(deployed, flags, driverName, volumes);
            points.add(new double[] {volumes, m.idleMiB, m.listPeakMiB, m.stormPeakMiB});
            rows.append(String.format("| %,d | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %,d in %d pages, %.1f MiB "
                            + "| %,d, %.1f MiB | %.1f s |%n", volumes, m.own, m.idleMiB, m.idleMillicores, m.listPeakMiB,
                    m.stormPeakMiB, m.afterStormMiB, m.probeMillis,
                    m.list.listObjects(), m.list.listPages(), m.list.listBytes() / 1048576.0, m.storm.watchObjects(),
                    m.storm.watchBytes() / 1048576.0, m.listSeconds));
        }
        StringBuilder report = new StringBuilder("## The deployed configuration as the cluster grows (host)\n\n"
                + "| PVs in the cluster | this node's | idle RSS (MiB) | idle CPU (millicores) "
                + "| peak RSS, start and list (MiB) "
                + "| peak RSS, storm (MiB) | RSS after the storm (MiB) | first Probe (ms) | received by the list "
                + "| received in the storm (" + STORM_EVENTS + " events) | start to watching |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|\n");
        report.append(rows);
        if (points.size() >= 2) {
            double[] first = points.getFirst();
            double[] last = points.getLast();
            double thousands = (last[0] - first[0]) / 1000.0;
            report.append(String.format("%nGrowth per 1,000 PVs (%,.0f to %,.0f): idle %+.3f MiB, list peak %+.3f MiB,"
                            + " storm peak %+.3f MiB.%n", first[0], last[0], (last[1] - first[1]) / thousands,
                    (last[2] - first[2]) / thousands, (last[3] - first[3]) / thousands));
        }
        report.append("\nJava ").append(System.getProperty("java.version")).append(", ")
                .append(Runtime.getRuntime().availableProcessors()).append(" CPUs, load average ").append(load)
                .append(" at the start; host CPU over the run: ")
                .append(BenchReport.hostCpuBetween(cpuBefore, BenchReport.hostCpuTicks()))
                .append(". RSS from /proc/<pid>/status: VmHWM for the peaks (reset through clear_refs before the storm),"
                        + " VmRSS " + SETTLE.toSeconds() + " s after the list (idle) and after the storm's last event;"
                        + " idle CPU from /proc/<pid>/stat's utime and stime over the " + IDLE_CPU_WINDOW.toSeconds()
                        + " s after that. Bytes are response bodies.\n");
        BenchReport.write("deployed-footprint", report.toString());
    }

    private record Measured(long own, double probeMillis, double listSeconds, double listPeakMiB, double idleMiB,
                            double idleMillicores, double stormPeakMiB, double afterStormMiB, SyntheticApiServer.Traffic list, SyntheticApiServer.Traffic storm) {
    }

    private Measured measure(DeployedPlugin deployed, List<String> flags, String driverName, int volumes)
            throws Exception {
        Path run = Files.createDirectories(dir.resolve("run-" + volumes));
        Path socket = run.resolve("csi.sock");
        Map<String, String> hostBound = new HashMap<>();
        hostBound.put("--endpoint", null); // DriverProcess gives it
        hostBound.put("--kubelet-dir", Files.createDirectories(run.resolve("kubelet")).toString());
        hostBound.put("--cgroup-root", "/sys/fs/cgroup");
        hostBound.put("--volume-group", ABSENT_GROUP);
        hostBound.put("--metrics-address", "127.0.0.1:" + freePort());
        List<String> args = deployed.replacing(hostBound);
        try (SyntheticApiServer api = SyntheticApiServer.start(volumes, NODES, driverName, ABSENT_GROUP)) {
            // the driver's client takes the API server from KUBERNETES_MASTER when it is set, as outside a pod
            List<String> prefix = new ArrayList<>(List.of("env", "KUBERNETES_MASTER=" + api.uri()));
            deployed.environment().forEach((name, value) -> prefix.add(name + "=" + value));
            long started = System.nanoTime();
            try (DriverProcess driver = DriverProcess.start(prefix, socket, run.resolve("driver.log"), flags,
                    args.toArray(String[]::new))) {
                long pid = driver.process().pid();
                AotCache.probeUntilAnswered(socket);
                double probeMillis = (System.nanoTime() - started) / 1e6;
                api.volumeWatchOpened().get(15, TimeUnit.MINUTES);
                double listSeconds = (System.nanoTime() - started) / 1e9;
                double listPeak = status(pid, "VmHWM:") / 1024.0;
                SyntheticApiServer.Traffic list = api.traffic();
                if (api.unpagedVolumeLists() > 0 || api.largestLimitAsked() > 500) {
                    throw new AssertionError("the PersistentVolumes were listed " + (api.unpagedVolumeLists() > 0
                            ? "without a limit" : "in pages of " + api.largestLimitAsked()));
                }
                Thread.sleep(SETTLE.toMillis());
                double idle = status(pid, "VmRSS:") / 1024.0;
                // the CPU the idle driver uses, for the container's request: user and system time over a quiet window
                long cpuBefore = cpuTicks(pid);
                long idleFrom = System.nanoTime();
                Thread.sleep(IDLE_CPU_WINDOW.toMillis());
                double idleMillicores = (cpuTicks(pid) - cpuBefore) / CLOCK_TICKS * 1e9
                        / (System.nanoTime() - idleFrom) * 1000;
                String nativeMemory = flags.stream().anyMatch(f -> f.startsWith("-XX:NativeMemoryTracking="))
                        ? jcmd(pid, "VM.native_memory", "summary") + jcmd(pid, "GC.heap_info")
                        + jcmd(pid, "GC.class_histogram").lines().limit(30).reduce("", (a, b) -> a + b + "\n") : "";
                // resets VmHWM to the current RSS (proc(5))
                Files.writeString(Path.of("/proc", Long.toString(pid), "clear_refs"), "5");
                api.modify(STORM_EVENTS, volumes);
                long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
                while (api.volumeEventsSent() < STORM_EVENTS && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                // the last events still being parsed and handed on
                Thread.sleep(3000);
                double stormPeak = status(pid, "VmHWM:") / 1024.0;
                SyntheticApiServer.Traffic storm = api.traffic().minus(list);
                Thread.sleep(SETTLE.toMillis());
                double afterStorm = status(pid, "VmRSS:") / 1024.0;
                if (!driver.process().isAlive()) {
                    throw new AssertionError("the driver ended: " + driver.log());
                }
                driver.terminate(Duration.ofSeconds(30));
                BenchReport.writeTo(Path.of(System.getProperty("lvmqos.benchDir", "target/bench")),
                        "deployed-footprint-" + volumes + "-driver-log", driver.log() + "\n\nAPI requests:\n" + api.requestLog()
                                + "\n\nAt idle:\n" + nativeMemory);
                return new Measured(api.volumesOn(0), probeMillis, listSeconds, listPeak, idle, idleMillicores, stormPeak,
                        afterStorm, list, storm);
            }
        }
    }

    private static String flagValue(List<String> args, String name) {
        return args.stream().filter(arg -> arg.startsWith(name + "=")).map(arg -> arg.substring(name.length() + 1))
                .findFirst().orElseThrow(() -> new AssertionError("the DaemonSet gives no " + name + ": " + args));
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static String jcmd(long pid, String... command) throws Exception {
        List<String> argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(pid)));
        argv.addAll(List.of(command));
        Process jcmd = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(jcmd.getInputStream().readAllBytes());
        jcmd.waitFor(30, TimeUnit.SECONDS);
        return out;
    }

    /** utime plus stime of the whole process, in clock ticks (proc(5); the name in field 2 may hold spaces). */
    private static long cpuTicks(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    private static long status(long pid, String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith(field)) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no " + field + " for " + pid);
    }
}
