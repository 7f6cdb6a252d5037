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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * ControllerModifyVolume while pods run: the new limits are stored in the LV's tags and
 * rewritten in place in every pod cgroup using the volume, measured by fio that keeps running
 * across the change; a pod published later gets the new limits (they are read from the LV's tags).
 */
public class ModifyCheck {

    private static final double MIB_D = 1 << 20;
    private static GuestDriver driver;

    @BeforeAll
    static void start() throws Exception {
        GuestEnv.assumeInGuest();
        driver = GuestDriver.start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (driver != null) {
            driver.close();
        }
    }

    private static Path publish(Csi.Volume volume, Path staging, Pod pod, Csi.VolumeCapability capability) {
        Path target = pod.volumePath("shared");
        driver.client().node().nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(capability)
                .putVolumeContext("csi.storage.k8s.io/pod.uid", pod.uid()).build());
        return target;
    }

    /** fio overwriting a laid-out file for {@code seconds} in the pod, logging its bandwidth every 500 ms. */
    private static Process fioInBackground(Pod pod, Path file, Path log, int seconds) throws IOException {
        return new ProcessBuilder("sh", "-c", "echo $$ > " + pod.cgroup().resolve("cgroup.procs") + " && exec \"$@\"",
                "fio-in-pod", "fio", "--name=live", "--filename=" + file, "--rw=write", "--bs=1M", "--size=32M",
                "--direct=1", "--ioengine=psync", "--time_based", "--runtime=" + seconds,
                "--write_bw_log=" + log, "--log_avg_msec=500", "--log_unix_epoch=1")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    /** Mean bandwidth in MiB/s over [fromMillis, toMillis) (epoch ms) of a fio bandwidth log (KiB/s samples). */
    private static double meanMiB(Path log, long fromMillis, long toMillis) throws IOException {
        List<Double> samples = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            String[] f = line.split(",\\s*");
            long at = Long.parseLong(f[0]);
            if (at >= fromMillis && at < toMillis) {
                samples.add(Double.parseDouble(f[1]) * 1024 / MIB_D);
            }
        }
        assertTrue(samples.size() >= 4, "too few samples in " + log + " between " + fromMillis + " and " + toMillis);
        return samples.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
    }

    private static long firstSampleAt(Path log) throws IOException {
        return Long.parseLong(Files.readAllLines(log).getFirst().split(",")[0].strip());
    }

    private static void assertWithin10Percent(double expected, double measured, String what) {
        assertTrue(Math.abs(measured - expected) <= 0.10 * expected, what + ": " + measured + " MiB/s, expected "
                + expected);
    }

    @Test
    void raisingWriteBpsReachesRunningPodsAtOnceAndLaterPublishes() throws Exception {
        Csi.Volume volume = driver.client().controller().createVolume(create("modified", 256 * MIB,
                Map.of("writeBPS", "4Mi")).build()).getVolume();
        Csi.VolumeCapability shared = Csi2.mount("", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_MULTI_WRITER);
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/modify/globalmount");
        driver.client().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setVolumeCapability(shared).build());
        List<Pod> pods = List.of(GuestPods.create(QosClass.BURSTABLE), GuestPods.create(QosClass.BURSTABLE));
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
            List<Process> fios = new ArrayList<>();
            List<Path> logs = new ArrayList<>();
            for (int i = 0; i < pods.size(); i++) {
                Path log = GuestEnv.outDir().resolve("modify-pod" + i);
                logs.add(Path.of(log + "_bw.1.log"));
                fios.add(fioInBackground(pods.get(i), targets.get(i).resolve("data"), log, 16));
            }
            TimeUnit.SECONDS.sleep(7);
            long changeAt = System.currentTimeMillis();
            driver.client().controller().controllerModifyVolume(Csi.ControllerModifyVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).putMutableParameters("writeBPS", "8Mi").build());
            long repliedAt = System.currentTimeMillis();
            for (Pod pod : pods) {
                String ioMax = ok("cat", pod.cgroup().resolve("io.max").toString());
                assertTrue(ioMax.contains("wbps=8388608"), "rewritten in place by the time of the reply: " + ioMax);
            }
            for (Process fio : fios) {
                assertTrue(fio.waitFor(60, TimeUnit.SECONDS));
                assertEquals(0, fio.exitValue());
            }
            for (Path log : logs) {
                long first = firstSampleAt(log);
                assertWithin10Percent(4, meanMiB(log, first + 1000, changeAt), "before the change, " + log.getFileName());
                assertWithin10Percent(8, meanMiB(log, repliedAt + 1000, Long.MAX_VALUE), "from a second after the "
                        + "reply, " + log.getFileName());
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

            late = GuestPods.create(QosClass.BURSTABLE);
            Path lateTarget = publish(volume, staging, late, shared);
            targets.add(lateTarget);
            GuestPods.Rate rate = GuestPods.fio(late, "write", GuestPods.sequential("write",
                    lateTarget.resolve("late"), "32M", true));
            assertWithin10Percent(8, rate.bytesPerSecond() / MIB_D, "a pod published after the change");
        } finally {
            for (Path target : targets) {
                driver.client().node().nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.newBuilder()
                        .setVolumeId(volume.getVolumeId()).setTargetPath(target.toString()).build());
            }
            driver.client().node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString()).build());
            driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).build());
            pods.forEach(GuestPods::remove);
            if (late != null) {
                GuestPods.remove(late);
            }
        }
    }

    private static String lvOf(Csi.Volume volume) {
        String[] parts = volume.getVolumeId().split("/");
        return parts[2] + "/" + parts[3];
    }
}
