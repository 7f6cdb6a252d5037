package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ControllerModifyVolume while pods run: the new limits are stored in the LV's tags and
 * rewritten in place in every pod cgroup using the volume, measured by fio that keeps running
 * across the change and by the metrics endpoint scraped during that run (the limit gauges and the
 * written-bytes counters of both pods); after a restart of the plugin, the limits in force are
 * still served and a pod published then gets the new limits (they are read from the LV's tags).
 */
public class ModifyCheck {

    private static final double MIB_D = 1 << 20;
    private static final String METRICS = "127.0.0.1:9809";
    private static final String LIMIT = "lvmqos_volume_io_limit_bytes_per_second";
    private static final int FIO_SECONDS = 16;
    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass("--metrics-address", METRICS);

    /** A volume with these parameters, staged at {@code staging}. */
    private static Csi.Volume createAndStage(String name, long bytes, Map<String, String> parameters,
                                             Csi.VolumeCapability capability, Path staging) {
        Csi.Volume volume = driver.client().controller().createVolume(create(name, bytes, parameters).build())
                .getVolume();
        driver.client().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setVolumeCapability(capability).build());
        return volume;
    }

    private static Path publish(Csi.Volume volume, Path staging, Pod pod, Csi.VolumeCapability capability) {
        Path target = capability.hasBlock() ? pod.blockPath("shared") : pod.volumePath("shared");
        driver.client().node().nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(capability)
                .putVolumeContext("csi.storage.k8s.io/pod.uid", pod.uid()).build());
        return target;
    }

    /** fio overwriting a laid-out file for {@code seconds} in a new container of the pod, logging its bandwidth every 500 ms. */
    private static Process fioInBackground(Pod pod, Path file, Path log, int seconds) throws IOException {
        return new ProcessBuilder(pod.inNewContainer(List.of("fio", "--name=live", "--filename=" + file, "--rw=write",
                "--bs=1M", "--size=32M", "--direct=1", "--ioengine=psync", "--time_based", "--runtime=" + seconds,
                "--write_bw_log=" + log, "--log_avg_msec=500", "--log_unix_epoch=1")))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    /** Mean bandwidth in MiB/s over [fromMillis, toMillis) (epoch ms) of a fio bandwidth log (KiB/s samples). */
    private static double meanMiB(Path log, long fromMillis, long toMillis) throws IOException {
        List<Double> samples = samples(log, fromMillis, toMillis);
        assertTrue(samples.size() >= 4, "too few samples in " + log + " between " + fromMillis + " and " + toMillis);
        return samples.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
    }

    /** As {@link #meanMiB}, for printing beside another measurement: NaN where fio logged nothing. */
    private static double meanOf(Path log, long fromMillis, long toMillis) throws IOException {
        return samples(log, fromMillis, toMillis).stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
    }

    private static List<Double> samples(Path log, long fromMillis, long toMillis) throws IOException {
        List<Double> samples = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            String[] f = line.split(",\\s*");
            long at = Long.parseLong(f[0]);
            if (at >= fromMillis && at < toMillis) {
                samples.add(Double.parseDouble(f[1]) * 1024 / MIB_D);
            }
        }
        return samples;
    }

    private static long firstSampleAt(Path log) throws IOException {
        return Long.parseLong(Files.readAllLines(log).getFirst().split(",")[0].strip());
    }

    private static void assertWithin(double tolerance, double expected, double measured, String what) {
        assertTrue(Math.abs(measured - expected) <= tolerance * expected, what + ": " + measured + " MiB/s, expected "
                + expected + " within " + Math.round(tolerance * 100) + "%");
    }

    @Test
    void raisingWriteBpsReachesRunningPodsAtOnceAndSurvivesARestart() throws Exception {
        Csi.VolumeCapability shared = Csi2.mount("", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_MULTI_WRITER);
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/modify/globalmount");
        Csi.Volume volume = createAndStage("modified", 256 * MIB, Map.of("writeBPS", "4Mi"), shared, staging);
        List<Pod> pods = List.of(GuestPods.create(QosClass.BURSTABLE),
                GuestPods.create(QosClass.BESTEFFORT, GuestPods.CgroupDriver.CGROUPFS));
        List<Path> targets = new ArrayList<>();
        for (Pod pod : pods) {
            targets.add(publish(volume, staging, pod, shared));
        }
        Pod late = null;
        try {
            for (Path target : targets) {
                // overwrite a laid-out file: extending writes would also measure ext4's allocation
                GuestPods.layOut(target.resolve("data"), 32);
            }
            // warms the scrape path in the driver and the HTTP client here, so that the timed scrapes are quick
            MetricsScrape.of(METRICS, "");
            MetricsScrape.of(METRICS, MetricsScrape.COUNTERS);
            List<Process> fios = new ArrayList<>();
            List<Path> logs = new ArrayList<>();
            List<Map<String, String>> writers = new ArrayList<>();
            for (int i = 0; i < pods.size(); i++) {
                Path log = GuestEnv.outDir().resolve("modify-pod" + i);
                logs.add(Path.of(log + "_bw.1.log"));
                fios.add(fioInBackground(pods.get(i), targets.get(i).resolve("data"), log, FIO_SECONDS));
                writers.add(Map.of("volume_id", volume.getVolumeId(), "pod_uid", pods.get(i).uid(),
                        "direction", "write"));
            }
            long writing = MetricsScrape.awaitWriting(METRICS, writers, Duration.ofSeconds(30)).atMillis();
            sleepUntil(writing + 1_000); // past blk-throttle's first slice
            MetricsScrape slowFrom = MetricsScrape.of(METRICS, MetricsScrape.COUNTERS);
            sleepUntil(writing + 5_500);
            MetricsScrape slowTo = MetricsScrape.of(METRICS, MetricsScrape.COUNTERS);
            MetricsScrape limitsBefore = MetricsScrape.of(METRICS, "");

            long changeAt = System.currentTimeMillis();
            driver.client().controller().controllerModifyVolume(Csi.ControllerModifyVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).putMutableParameters("writeBPS", "8Mi").build());
            long repliedAt = System.currentTimeMillis();
            System.out.println("modify: ControllerModifyVolume took " + (repliedAt - changeAt) + " ms");
            for (Pod pod : pods) {
                String ioMax = ok("cat", pod.cgroup().resolve("io.max").toString());
                assertTrue(ioMax.contains("wbps=8388608"), "rewritten in place by the time of the reply: " + ioMax);
            }
            MetricsScrape limitsAfter = MetricsScrape.of(METRICS, "");
            sleepUntil(repliedAt + 1_500);
            MetricsScrape fastFrom = MetricsScrape.of(METRICS, MetricsScrape.COUNTERS);
            sleepUntil(repliedAt + 6_500);
            MetricsScrape fastTo = MetricsScrape.of(METRICS, MetricsScrape.COUNTERS);

            for (Process fio : fios) {
                assertTrue(fio.waitFor(60, TimeUnit.SECONDS));
                assertEquals(0, fio.exitValue());
            }
            for (int i = 0; i < pods.size(); i++) {
                Path log = logs.get(i);
                long first = firstSampleAt(log);
                assertWithin(0.10, 4, meanMiB(log, first + 1000, changeAt), "fio before the change, " + log.getFileName());
                assertWithin(0.10, 8, meanMiB(log, repliedAt + 1000, Long.MAX_VALUE), "fio from a second after the "
                        + "reply, " + log.getFileName());

                Map<String, String> written = writers.get(i);
                assertEquals(4 << 20, limitsBefore.require(LIMIT, written), "the limit served before the change");
                assertEquals(8 << 20, limitsAfter.require(LIMIT, written), "the limit served at the reply");
                // scrapes are timed to the millisecond while blk-throttle hands out its budget in slices:
                // a few seconds' window is held to 15%, fio's own log to 10%
                double slow = counterMiB(slowFrom, slowTo, written, log);
                double fast = counterMiB(fastFrom, fastTo, written, log);
                assertWithin(0.15, 4, slow, "the written-bytes counter's rate before the change, pod " + i);
                assertWithin(0.15, 8, fast, "the written-bytes counter's rate after the change, pod " + i);
            }
            assertTrue(ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", lvOf(volume)).contains("lvmqos.qos.wbps=8388608"),
                    "the change is durable in the LV's tags");

            expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller().controllerModifyVolume(
                    Csi.ControllerModifyVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                            .putMutableParameters("lvmType", "thin").build()));
            expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller().controllerModifyVolume(
                    Csi.ControllerModifyVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                            .putMutableParameters("writeBPS", "8Mi").putMutableParameters("iops", "0").build()));
            expectCode(Status.Code.NOT_FOUND, () -> driver.client().controller().controllerModifyVolume(
                    Csi.ControllerModifyVolumeRequest.newBuilder().setVolumeId("lvmqos/guest-node/lvmqos/vol_gone_0")
                            .putMutableParameters("writeBPS", "8Mi").build()));
            assertTrue(ok("cat", pods.getFirst().cgroup().resolve("io.max").toString()).contains("wbps=8388608"),
                    "a refused change applies nothing");

            long restarting = System.currentTimeMillis();
            driver.restart();
            System.out.println("modify: plugin restarted in " + (System.currentTimeMillis() - restarting) + " ms");
            MetricsScrape restarted = MetricsScrape.of(METRICS, "");
            for (Pod pod : pods) {
                assertEquals(8 << 20, restarted.require(LIMIT, Map.of("volume_id", volume.getVolumeId(),
                        "pod_uid", pod.uid(), "direction", "write")), "the restarted plugin serves the limit in force");
            }
            late = GuestPods.create(QosClass.BURSTABLE);
            Path lateTarget = publish(volume, staging, late, shared);
            targets.add(lateTarget);
            GuestPods.Rate rate = GuestPods.fio(late, "write", GuestPods.sequential("write",
                    lateTarget.resolve("late"), "32M", true));
            System.out.printf("modify: a pod published after the restart wrote at %.3f MiB/s%n",
                    rate.bytesPerSecond() / MIB_D);
            assertWithin(0.10, 8, rate.bytesPerSecond() / MIB_D, "a pod published after a restart of the plugin");
        } finally {
            Csi2.unpublishUnstageDelete(driver.client(), volume.getVolumeId(), staging, targets);
            pods.forEach(GuestPods::remove);
            if (late != null) {
                GuestPods.remove(late);
            }
        }
    }

    /**
     * A class that says {@code max} for one direction lifts that limit in a running pod, and a key
     * it leaves out leaves its limit alone: a raw block volume (no mkfs, so the check stays short,
     * and the pods using it are found by its device node) starts at 4 MiB/s each way, the change
     * names only {@code writeBPS=max}; then writes run far above 4 MiB/s while reads are still
     * held at it.
     */
    @Test
    void maxLiftsTheNamedDirectionAndLeavesTheOthers() throws Exception {
        Csi.VolumeCapability block = Csi2.block();
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/lift/globalmount");
        Csi.Volume volume = createAndStage("lifted", 64 * MIB, Map.of("bps", "4Mi"), block, staging);
        Pod pod = GuestPods.create(QosClass.BURSTABLE);
        List<Path> targets = new ArrayList<>();
        try {
            Path target = publish(volume, staging, pod, block);
            targets.add(target);
            Path ioMax = pod.cgroup().resolve("io.max");
            assertTrue(ok("cat", ioMax.toString()).contains("rbps=4194304 wbps=4194304"), "limited at first");

            driver.client().controller().controllerModifyVolume(Csi.ControllerModifyVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).putMutableParameters("writeBPS", "max").build());
            String line = ok("cat", ioMax.toString());
            assertTrue(line.contains("rbps=4194304 wbps=max"), "write lifted, read kept, in place: " + line);
            String tags = ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", lvOf(volume));
            assertTrue(tags.contains("lvmqos.qos.rbps=4194304") && !tags.contains("lvmqos.qos.wbps"),
                    "the lift is durable in the LV's tags: " + tags);

            double written = GuestPods.fio(pod, "write", shortRun("write", target)).bytesPerSecond() / MIB_D;
            double read = GuestPods.fio(pod, "read", shortRun("read", target)).bytesPerSecond() / MIB_D;
            System.out.printf("modify: after writeBPS=max, writes ran at %.1f MiB/s, reads at %.3f MiB/s%n", written, read);
            assertTrue(written > 4 * 4, "writes are no longer held at 4 MiB/s: " + written + " MiB/s");
            assertWithin(0.15, 4, read, "reads, whose key the class left out");
        } finally {
            Csi2.unpublishUnstageDelete(driver.client(), volume.getVolumeId(), staging, targets);
            GuestPods.remove(pod);
        }
    }

    /** Two seconds of direct 1 MiB I/O: many of blk-throttle's 100 ms slices. */
    private static List<String> shortRun(String rw, Path device) {
        return List.of("--filename=" + device, "--rw=" + rw, "--bs=1M", "--size=32M", "--direct=1", "--ioengine=psync",
                "--time_based", "--runtime=2", "--ramp_time=500ms");
    }

    /** MiB/s of the pod's written-bytes counter between two scrapes, printed beside fio's log for that time. */
    private static double counterMiB(MetricsScrape from, MetricsScrape to, Map<String, String> labels, Path fioLog)
            throws IOException {
        double rate = to.ratePerSecondSince(from, "lvmqos_volume_io_bytes_total", labels) / MIB_D;
        System.out.printf("modify: %s counter %.3f MiB/s over %.3f s; fio's log %.3f MiB/s%n", labels.get("pod_uid"),
                rate, (to.atNanos() - from.atNanos()) / 1e9, meanOf(fioLog, from.atMillis(), to.atMillis()));
        return rate;
    }

    private static void sleepUntil(long epochMillis) throws InterruptedException {
        long left = epochMillis - System.currentTimeMillis();
        if (left > 0) {
            TimeUnit.MILLISECONDS.sleep(left);
        }
    }

    private static String lvOf(Csi.Volume volume) {
        String[] parts = volume.getVolumeId().split("/");
        return parts[2] + "/" + parts[3];
    }
}
