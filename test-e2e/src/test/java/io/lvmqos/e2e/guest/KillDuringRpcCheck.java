package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The plugin's container killed in the middle of each kind of RPC, as an OOM kill or a node drain
 * would do it (the JVM and every process it started, lvm and mkfs included), then started again and
 * the same call retried, as the sidecars and kubelet do: every retry succeeds, and afterwards no LV
 * is leaked, no mount is left or missing, and the pod's limit is neither lost nor doubled.
 *
 * <p>The kill lands while the call's own child process runs (lvcreate, blkid or mkfs, lvextend or
 * resize2fs, lvchange, lvremove), found by watching the driver's descendants (an lvm verb run in the
 * driver's long-lived lvm shell is seen as that shell holding the group's lock file); calls that start no
 * process (publish, unpublish, unstage) are killed 20 ms after they are sent. A child can also be
 * too brief to be seen on a loaded host; either way the kill then follows the answer, and the
 * report says so for each call.
 */
public class KillDuringRpcCheck {

    private static final String WRITE_BPS = "4Mi";
    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass();
    private final List<String> outcomes = new ArrayList<>();

    @Test
    void everyCallKilledMidwayIsRetriedToTheSameEnd() throws Exception {
        String uid = UUID.randomUUID().toString();
        Path podCgroup = GuestEnv.cgroupRoot().resolve("kubepods.slice/kubepods-burstable.slice")
                .resolve("kubepods-burstable-pod" + uid.replace('-', '_') + ".slice");
        Files.createDirectories(podCgroup);
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/killed/globalmount");
        Path target = GuestDriver.KUBELET.resolve("pods").resolve(uid).resolve("volumes/kubernetes.io~csi/pv-killed/mount");

        Csi.CreateVolumeRequest createRequest = create("killed", 32 * MIB,
                Map.of("lvmType", "thin", "writeBPS", WRITE_BPS)).build();
        Csi.Volume volume = killDuring("CreateVolume", "lvcreate",
                () -> driver.client().controller().createVolume(createRequest).getVolume());
        String id = volume.getVolumeId();
        assertEquals(List.of(Csi2.lvName(id)), managedLvs(), "one LV for the volume");

        Csi.Snapshot snapshot = killDuring("CreateSnapshot", "lvcreate", () -> driver.client().controller()
                .createSnapshot(Csi.CreateSnapshotRequest.newBuilder().setName("killed-snap").setSourceVolumeId(id).build())
                .getSnapshot());
        assertEquals(2, managedLvs().size(), "the volume and one snapshot: " + managedLvs());

        killDuring("DeleteSnapshot", "lvremove", () -> driver.client().controller().deleteSnapshot(
                Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshot.getSnapshotId()).build()));
        assertEquals(List.of(Csi2.lvName(id)), managedLvs(), "the snapshot is gone");

        killDuring("NodeStageVolume", "blkid|mkfs", () -> driver.client().node().nodeStageVolume(
                Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                        .setVolumeCapability(Csi2.mount()).build()));
        assertEquals(1, mountsAt(staging), "staged once");

        killDuring("NodePublishVolume", null, () -> driver.client().node().nodePublishVolume(
                Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                        .setTargetPath(target.toString()).setVolumeCapability(Csi2.mount())
                        .putAllVolumeContext(volume.getVolumeContextMap()).build()));
        assertEquals(1, mountsAt(target), "published once");
        String device = deviceOf(id);
        assertEquals(Optional.of("wbps=4194304"), limitOf(podCgroup, device), "the pod's limit, once");

        killDuring("NodeExpandVolume", "lvextend|resize2fs", () -> driver.client().node().nodeExpandVolume(
                Csi.NodeExpandVolumeRequest.newBuilder().setVolumeId(id).setVolumePath(target.toString())
                        .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(64 * MIB)).build()));
        String[] statfs = ok("stat", "--file-system", "--format", "%b %S", target.toString()).strip().split(" ");
        long bytes = Long.parseLong(statfs[0]) * Long.parseLong(statfs[1]);
        assertTrue(bytes > 48 * MIB, "the filesystem grew: " + bytes + " bytes");

        killDuring("ControllerModifyVolume", "lvchange", () -> driver.client().controller().controllerModifyVolume(
                Csi.ControllerModifyVolumeRequest.newBuilder().setVolumeId(id)
                        .putMutableParameters("writeBPS", "8Mi").build()));
        assertEquals(Optional.of("wbps=8388608"), limitOf(podCgroup, device), "the new limit, once");

        killDuring("NodeUnpublishVolume", null, () -> driver.client().node().nodeUnpublishVolume(
                Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build()));
        assertEquals(0, mountsAt(target), "unpublished");
        assertEquals(Optional.empty(), limitOf(podCgroup, device), "the limit is lifted");

        killDuring("NodeUnstageVolume", null, () -> driver.client().node().nodeUnstageVolume(
                Csi.NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString()).build()));
        assertEquals(0, mountsAt(staging), "unstaged");

        killDuring("DeleteVolume", "lvremove", () -> driver.client().controller().deleteVolume(
                Csi.DeleteVolumeRequest.newBuilder().setVolumeId(id).build()));
        assertEquals(List.of(), managedLvs(), "no LV left");
        ok("rmdir", podCgroup.toString());
        System.out.println("kill during each RPC, then restart and retry:\n  " + String.join("\n  ", outcomes));
    }

    /**
     * Sends the call, kills the plugin's whole process tree once a descendant whose command line matches
     * {@code childMarker} runs (or 20 ms after sending, when null), restarts it, and retries the call
     * until it answers (the sidecars retry UNAVAILABLE and ABORTED the same way). The kill must land
     * while the call is out, or the check proves nothing.
     */
    private <T> T killDuring(String rpc, String childMarker, Supplier<T> call) throws Exception {
        ProcessHandle plugin = driver.process().process().toHandle();
        CompletableFuture<T> first = CompletableFuture.supplyAsync(call);
        awaitChild(plugin, childMarker, first);
        plugin.descendants().forEach(ProcessHandle::destroyForcibly);
        plugin.destroyForcibly();
        plugin.onExit().get(30, TimeUnit.SECONDS);
        String landed;
        try {
            first.get(30, TimeUnit.SECONDS);
            // the child ran too briefly to be seen (or there is none): the kill followed the answer, and
            // the retry tests only that the call can be repeated; the report says so
            landed = "answered before the kill, which followed at once";
        } catch (java.util.concurrent.ExecutionException e) {
            landed = "killed while " + (childMarker == null ? "the call was out" : childMarker + " ran")
                    + " (first call: " + (e.getCause() instanceof StatusRuntimeException s
                            ? s.getStatus().getCode() : e.getCause()) + ")";
        }
        driver.restart();
        T result = null;
        StatusRuntimeException last = null;
        for (int attempt = 0; attempt < 10 && result == null; attempt++) {
            try {
                result = call.get();
            } catch (StatusRuntimeException e) {
                last = e;
                TimeUnit.SECONDS.sleep(2);
            }
        }
        if (result == null) {
            throw new AssertionError(rpc + " retried after the kill did not succeed: " + last.getStatus(), last);
        }
        outcomes.add(rpc + ": " + landed + "; the retry after the restart succeeded");
        return result;
    }

    /** Waits until the marked child runs (or 20 ms, without a marker), or the call has ended. */
    private static void awaitChild(ProcessHandle plugin, String marker, CompletableFuture<?> call) throws Exception {
        if (marker == null) {
            TimeUnit.MILLISECONDS.sleep(20);
            return;
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline && !call.isDone()) {
            try (Stream<ProcessHandle> children = plugin.descendants()) {
                if (children.anyMatch(child -> child.info().commandLine()
                        .filter(line -> java.util.regex.Pattern.compile(marker).matcher(line).find()).isPresent())) {
                    return;
                }
            }
            // lvm's verbs also run in the driver's long-lived lvm shells, which are inside a command while
            // they hold the group's lock file (the call's lvs before its lvcreate counts too)
            if (marker.startsWith("lv") && DriverLvmProcesses.inCommand(plugin, GuestEnv.volumeGroup()).stream()
                    .anyMatch(DriverLvmProcesses::isShell)) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(2);
        }
    }

    private static List<String> managedLvs() {
        return ok("lvm", "lvs", "--noheadings", "-o", "lv_name", GuestEnv.volumeGroup()).lines().map(String::strip)
                .filter(name -> name.startsWith("vol_") || name.startsWith("snap_")).sorted().toList();
    }

    private static long mountsAt(Path path) throws Exception {
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .filter(line -> line.split(" ")[4].equals(path.toString())).count();
    }

    private static String deviceOf(String volumeId) {
        String lv = GuestEnv.volumeGroup() + "/" + Csi2.lvName(volumeId);
        return ok("lvm", "lvs", "--noheadings", "-o", "lv_kernel_major,lv_kernel_minor", lv).strip().replaceAll("\\s+", ":");
    }

    /** The write limit the pod's io.max holds for the device, or empty without a line. */
    private static Optional<String> limitOf(Path podCgroup, String device) throws Exception {
        List<String> lines = Files.readAllLines(podCgroup.resolve("io.max")).stream()
                .filter(line -> line.startsWith(device + " ")).toList();
        assertTrue(lines.size() <= 1, "one io.max line per device: " + lines);
        return lines.stream().flatMap(line -> Stream.of(line.split(" "))).filter(f -> f.startsWith("wbps="))
                .findFirst();
    }

}
