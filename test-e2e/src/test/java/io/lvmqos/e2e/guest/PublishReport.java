package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.bench.BenchReport.mean;
import static io.lvmqos.e2e.bench.BenchReport.ms;
import static io.lvmqos.e2e.bench.BenchReport.percentile;
import static io.lvmqos.e2e.guest.PublishBenchCheck.ROUNDS;
import static io.lvmqos.e2e.guest.PublishBenchCheck.WARMUP;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The markdown of {@link PublishBenchCheck}'s report ({@value PublishBenchCheck#REPORT}.md) from its
 * measured series, the driver's RPC log and its GC log: it writes what the rounds measured, it
 * measures nothing.
 */
final class PublishReport {

    /** The driver's one log line per RPC: "rpc - NodePublishVolume <volume id> 3 ms OK". */
    private static final Pattern RPC_LINE = Pattern.compile("rpc - (\\w+) \\S+ (\\d+) ms OK");

    private final PublishSeries series;
    private final Path mountProgram;
    private final Path umountProgram;
    private final int mountTableEntries;

    /**
     * @param mountProgram the mount run by fork/exec, as its rows name it
     * @param umountProgram the umount run so
     * @param mountTableEntries the mount table's size during the rounds
     */
    PublishReport(PublishSeries series, Path mountProgram, Path umountProgram, int mountTableEntries) {
        this.series = series;
        this.mountProgram = mountProgram;
        this.umountProgram = umountProgram;
        this.mountTableEntries = mountTableEntries;
    }

    private String row(String label, String step) {
        return row(label, series.millis(step));
    }

    private static String row(String label, double[] values) {
        if (values.length == 0) {
            return "| " + label + " | - | - | - |\n";
        }
        return "| " + label + " | " + ms(percentile(values, 50)) + " | " + ms(percentile(values, 99)) + " | "
                + ms(mean(values)) + " |\n";
    }

    static String measuringJvmFlags() {
        return String.join(" ", java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
                .stream().filter(flag -> flag.startsWith("-X")).toList());
    }

    /** The driver's own durations of the last {@code ROUNDS} calls of a method, from its RPC log (whole ms). */
    private static double[] serverSide(String log, String method) {
        return serverSide(log, method, ROUNDS);
    }

    /** The driver's own durations of the last {@code last} calls of a method, from its RPC log (whole ms). */
    static double[] serverSide(String log, String method, int last) {
        List<Double> found = new ArrayList<>();
        Matcher m = RPC_LINE.matcher(log);
        while (m.find()) {
            if (m.group(1).equals(method)) {
                found.add(Double.parseDouble(m.group(2)));
            }
        }
        return found.subList(Math.max(0, found.size() - last), found.size()).stream()
                .mapToDouble(Double::doubleValue).toArray();
    }

    /** The report's markdown: the rounds' table, the shares of the kernel work, the driver's GC. */
    String markdown(String driverLog, String gcLog) {
        double publish = series.p50("publish");
        double unpublish = series.p50("unpublish");
        double execPair = series.p50("execPair");
        StringBuilder md = new StringBuilder();
        md.append("## NodePublishVolume and NodeUnpublishVolume (issue 4)\n\n")
                .append("User-mode-Linux guest (kernel " + System.getProperty("os.version") + ", 1 CPU), cgroup v2. One linear 64 MiB ext4 volume with ")
                .append("`writeBPS: 8Mi`, staged once; one pod cgroup in the systemd layout (burstable). ")
                .append(ROUNDS).append(" rounds after ").append(WARMUP).append(" warm-up rounds; each round ")
                .append("publishes to a fresh target `/run/kubelet/pods/<uid>/volumes/kubernetes.io~csi/pv-<n>/mount` ")
                .append("(volume_context with `csi.storage.k8s.io/pod.uid`), checks io.max, unpublishes it, then ")
                .append("runs every comparison below once, so all variants see the same load. Driver: its own ")
                .append("process with deploy/jvm.options (plus `-Xlog:gc` to a file), over the unix socket; the ")
                .append("other rows run in the measuring JVM (").append(measuringJvmFlags())
                .append("). Client-side wall times unless noted.\n\n")
                .append("| what | p50 (ms) | p99 (ms) | mean (ms) |\n|---|---|---|---|\n")
                .append(row("**NodePublishVolume** (driver, over the socket)", "publish"))
                .append(row("**NodeUnpublishVolume** (driver, over the socket)", "unpublish"))
                .append(row("publish + unpublish pair (driver)", "driverPair"))
                .append(row("NodePublishVolume as the driver logged it (server side, whole ms)",
                        serverSide(driverLog, "NodePublishVolume")))
                .append(row("NodeUnpublishVolume as the driver logged it (server side, whole ms)",
                        serverSide(driverLog, "NodeUnpublishVolume")))
                .append(row("`" + mountProgram + " --bind` by fork/exec", "execMount"))
                .append(row("`" + umountProgram + "` by fork/exec", "execUmount"))
                .append(row("**`mount --bind` + `umount` pair by fork/exec** (the issue's baseline)", "execPair"))
                .append(row("bind mount(2) via `Mounter.bindMount` (FFM, O_PATH checks)", "ffiMount"))
                .append(row("umount2(2) via `Mounter.unmount`", "ffiUmount"))
                .append(row("Mounter bind + unmount pair", "ffiPair"))
                .append(row("`CgroupLimitsWriter.apply` (controller checks, io.max write, read-back)", "cgroupApply"))
                .append(row("`CgroupLimitsWriter.remove` (read, write, read-back)", "cgroupRemove"))
                .append(row("one bare write(2) of the limit line to io.max", "ioMaxSet"))
                .append(row("one bare write(2) of the all-max line to io.max", "ioMaxClear"))
                .append(row("`MountTable.read()` (/proc/self/mountinfo read + parse)", "mountinfo"))
                .append(row("`PodCgroups.require` (pod cgroup lookup)", "podLookup"))
                .append(row("`KubeletPaths` checks + mkdir of the target (as publish does)", "pathsPublish"))
                .append(row("`KubeletPaths` check + rmdir of the target (as unpublish does)", "pathsUnpublish"))
                .append(row("bare mkdir(2) of the target (parent exists)", "mkdir"))
                .append(row("bare rmdir(2) of the target", "rmdir"))
                .append(row("NodeGetCapabilities round trip (gRPC, no I/O, one info log line)", "grpc"))
                .append(row("NodeGetCapabilities as the driver logged it (server side, whole ms)",
                        serverSide(driverLog, "NodeGetCapabilities")))
                .append(row("Probe round trip (gRPC, no I/O, logged at debug: no line)", "grpcProbe"))
                .append(row("1-byte ping-pong over a unix socket between two threads of one JVM", "pingPong"))
                .append(row("append of one RPC log line to a file in the run's output dir (hostfs)", "logHostfs"))
                .append(row("append of one RPC log line to a file in /tmp (tmpfs)", "logTmpfs"))
                .append("\n**publish p50 / fork-exec pair p50 = ").append(String.format("%.3f", publish / execPair))
                .append("** (target: at most 0.25). Unpublish p50 / fork-exec pair p50 = ")
                .append(String.format("%.3f", unpublish / execPair)).append(".\n\n");
        double mount = series.p50("ffiMount");
        double apply = series.p50("cgroupApply");
        double umount = series.p50("ffiUmount");
        double remove = series.p50("cgroupRemove");
        md.append("Share of the kernel work (each step's p50 measured alone, in the measuring JVM):\n\n")
                .append("| | publish | unpublish |\n|---|---|---|\n")
                .append("| driver p50 | ").append(ms(publish)).append(" ms | ").append(ms(unpublish)).append(" ms |\n")
                .append("| mount(2) / umount2(2) (Mounter) | ").append(msShare(mount, publish)).append(" | ")
                .append(msShare(umount, unpublish)).append(" |\n")
                .append("| cgroup writes (CgroupLimitsWriter apply / remove) | ").append(msShare(apply, publish))
                .append(" | ").append(msShare(remove, unpublish)).append(" |\n")
                .append("| **gRPC + Java (the rest)** | ").append(msShare(publish - mount - apply, publish))
                .append(" | ").append(msShare(unpublish - umount - remove, unpublish)).append(" |\n\n");
        double mountinfo = series.p50("mountinfo");
        double paths = series.p50("pathsPublish");
        double unpaths = series.p50("pathsUnpublish");
        double lookup = series.p50("podLookup");
        double grpc = series.p50("grpc");
        md.append("The rest, split further (publish reads mountinfo 3 times: its target, the second-writer ")
                .append("check, the staging path; unpublish once; the gRPC row is the NodeGetCapabilities round ")
                .append("trip, which includes the RPC log line):\n\n")
                .append("| | publish | unpublish |\n|---|---|---|\n")
                .append("| gRPC round trip + interceptor + log line | ").append(msShare(grpc, publish)).append(" | ")
                .append(msShare(grpc, unpublish)).append(" |\n")
                .append("| mountinfo read + parse (× 3 / × 1) | ").append(msShare(3 * mountinfo, publish))
                .append(" | ").append(msShare(mountinfo, unpublish)).append(" |\n")
                .append("| KubeletPaths checks + mkdir / rmdir | ").append(msShare(paths, publish)).append(" | ")
                .append(msShare(unpaths, unpublish)).append(" |\n")
                .append("| pod cgroup lookup | ").append(msShare(lookup, publish)).append(" | ")
                .append(msShare(lookup, unpublish)).append(" |\n")
                .append("| not explained by the parts | ")
                .append(msShare(publish - mount - apply - grpc - 3 * mountinfo - paths - lookup, publish))
                .append(" | ").append(msShare(unpublish - umount - remove - grpc - mountinfo - unpaths - lookup,
                        unpublish)).append(" |\n\n");
        md.append("Parts measured alone run in another JVM with other caches, so the split is an estimate and ")
                .append("the unexplained line can come out slightly negative. Mount table during the rounds: ")
                .append(mountTableEntries).append(" entries. ").append(gcSummary(gcLog)).append("\n");
        return md.toString();
    }

    private static String msShare(double millis, double whole) {
        return ms(millis) + " ms (" + Math.round(100 * millis / whole) + " %)";
    }

    /** The driver's collections while the measured rounds ran, from its -Xlog:gc file. */
    private static String gcSummary(String gcLog) {
        Matcher m = Pattern.compile("Pause .* (\\d+(?:\\.\\d+)?)ms").matcher(gcLog);
        int pauses = 0;
        double total = 0;
        while (m.find()) {
            pauses++;
            total += Double.parseDouble(m.group(1));
        }
        return "Driver GC during the " + ROUNDS + " measured rounds (" + ROUNDS + " publish/unpublish pairs, "
                + 2 * ROUNDS + " other RPCs): " + pauses + " pauses, " + String.format("%.1f", total)
                + " ms in total.";
    }
}
