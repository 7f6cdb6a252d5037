package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.guest.GuestPods.Rate;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Node service on a real kernel: stage and publish into pods laid out as kubelet's systemd
 * driver lays them out, and fio inside each pod's cgroup measuring the limits the driver wrote.
 * Runs under cgroup v2 (io.max) and v1 (blkio.throttle); buffered writeback only on v2.
 */
public class NodeCheck {

    private static GuestDriver driver;
    private final List<Runnable> cleanup = new ArrayList<>();

    @BeforeAll
    static void startDriver() throws Exception {
        GuestEnv.assumeInGuest();
        driver = GuestDriver.start();
    }

    @AfterAll
    static void stopDriver() throws Exception {
        if (driver != null) {
            driver.close();
        }
    }

    @AfterEach
    void undo() {
        for (Runnable step : cleanup.reversed()) {
            try {
                step.run();
            } catch (RuntimeException e) {
                System.err.println("cleanup: " + e);
            }
        }
    }

    /** A volume created, staged and published into a new pod, all undone after the test. */
    private record Published(Csi.Volume volume, Pod pod, Path staging, Path target) {
    }

    private Csi.Volume createVolume(String name, long bytes, Map<String, String> parameters) {
        Csi.Volume volume = driver.client().controller().createVolume(create(name, bytes, parameters).build()).getVolume();
        cleanup.add(() -> driver.client().controller().deleteVolume(
                Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build()));
        return volume;
    }

    private Path stage(Csi.Volume volume, Csi.VolumeCapability capability) {
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io")
                .resolve(Integer.toHexString(volume.getVolumeId().hashCode())).resolve("globalmount");
        driver.client().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                .setVolumeCapability(capability).build());
        cleanup.add(() -> driver.client().node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString()).build()));
        return staging;
    }

    private Path publish(Csi.Volume volume, Pod pod, Path staging, Csi.VolumeCapability capability, boolean podInfo) {
        Path target = capability.hasBlock() ? pod.blockPath("pv-" + Integer.toHexString(volume.getVolumeId().hashCode()))
                : pod.volumePath("pv-" + Integer.toHexString(volume.getVolumeId().hashCode()));
        Csi.NodePublishVolumeRequest.Builder request = Csi.NodePublishVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(capability)
                .putAllVolumeContext(volume.getVolumeContextMap());
        if (podInfo) {
            request.putVolumeContext("csi.storage.k8s.io/pod.uid", pod.uid())
                    .putVolumeContext("csi.storage.k8s.io/pod.name", "pod-" + pod.uid().substring(0, 8))
                    .putVolumeContext("csi.storage.k8s.io/pod.namespace", "default")
                    .putVolumeContext("csi.storage.k8s.io/ephemeral", "false");
        }
        driver.client().node().nodePublishVolume(request.build());
        cleanup.add(() -> unpublish(volume, target));
        return target;
    }

    private static void unpublish(Csi.Volume volume, Path target) {
        driver.client().node().nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setTargetPath(target.toString()).build());
    }

    private Pod pod(QosClass qos) throws Exception {
        Pod pod = GuestPods.create(qos);
        cleanup.add(() -> GuestPods.remove(pod));
        return pod;
    }

    private Published publishedVolume(String name, long bytes, Map<String, String> parameters, QosClass qos,
                                      String fsType) throws Exception {
        Csi.Volume volume = createVolume(name, bytes, parameters);
        Csi.VolumeCapability capability = Csi2.mount(fsType, Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER);
        Path staging = stage(volume, capability);
        Pod pod = pod(qos);
        Path target = publish(volume, pod, staging, capability, true);
        return new Published(volume, pod, staging, target);
    }

    private static String deviceNumberOf(Csi.Volume volume) {
        String[] parts = volume.getVolumeId().split("/");
        String[] node = ok("stat", "-L", "-c", "%t:%T", "/dev/" + parts[2] + "/" + parts[3]).strip().split(":");
        return Integer.parseInt(node[0], 16) + ":" + Integer.parseInt(node[1], 16);
    }

    private static String limitsFile(Pod pod) {
        return GuestEnv.cgroupMode() == CgroupMode.V2 ? ok("cat", pod.cgroup().resolve("io.max").toString())
                : ok("cat", pod.cgroup().resolve("blkio.throttle.write_bps_device").toString(),
                        pod.cgroup().resolve("blkio.throttle.read_bps_device").toString(),
                        pod.cgroup().resolve("blkio.throttle.write_iops_device").toString(),
                        pod.cgroup().resolve("blkio.throttle.read_iops_device").toString());
    }

    private static void assertWithin10Percent(double expected, double measured, String what) {
        assertTrue(Math.abs(measured - expected) <= 0.10 * expected,
                what + ": measured " + measured + ", limit " + expected + " (" + Math.round(100 * measured / expected) + "%)");
    }

    @Test
    void bandwidthAndIopsLimitsHoldInsideEachPodAndAnUnlimitedVolumeRunsFree() throws Exception {
        Published bps = publishedVolume("qos-bps", 128 * MIB, Map.of("readBPS", "4Mi", "writeBPS", "4Mi"),
                QosClass.BURSTABLE, "ext4");
        Published iops = publishedVolume("qos-iops", 128 * MIB, Map.of("iops", "200"), QosClass.GUARANTEED, "ext4");
        Published free = publishedVolume("qos-free", 128 * MIB, Map.of(), QosClass.BESTEFFORT, "ext4");

        String line = limitsFile(bps.pod());
        assertTrue(line.contains(deviceNumberOf(bps.volume())), "the limit is on the LV's device: " + line);

        Path bpsFile = bps.target().resolve("data");
        GuestPods.layOut(bpsFile, 64);
        Rate write = GuestPods.fio(bps.pod(), "write", GuestPods.sequential("write", bpsFile, "64M", true));
        Rate read = GuestPods.fio(bps.pod(), "read", GuestPods.sequential("read", bpsFile, "64M", true));
        assertWithin10Percent(4 * MIB, write.bytesPerSecond(), "direct writes at writeBPS=4Mi");
        assertWithin10Percent(4 * MIB, read.bytesPerSecond(), "direct reads at readBPS=4Mi");

        Path iopsFile = iops.target().resolve("data");
        GuestPods.layOut(iopsFile, 32);
        Rate randomWrite = GuestPods.fio(iops.pod(), "write", GuestPods.random4k("randwrite", iopsFile, "32M"));
        Rate randomRead = GuestPods.fio(iops.pod(), "read", GuestPods.random4k("randread", iopsFile, "32M"));
        assertWithin10Percent(200, randomWrite.iops(), "random writes at iops=200");
        assertWithin10Percent(200, randomRead.iops(), "random reads at iops=200");

        Path freeFile = free.target().resolve("data");
        GuestPods.layOut(freeFile, 64);
        Rate unlimited = GuestPods.fio(free.pod(), "write", GuestPods.sequential("write", freeFile, "64M", true));
        assertTrue(unlimited.bytesPerSecond() >= 5 * write.bytesPerSecond(),
                "unlimited " + unlimited.mibPerSecond() + " MiB/s vs limited " + write.mibPerSecond() + " MiB/s");
        assertFalse(Files.exists(free.pod().cgroup().resolve("io.max"))
                && ok("cat", free.pod().cgroup().resolve("io.max").toString()).contains(deviceNumberOf(free.volume())),
                "no limit line for an unlimited volume");
    }

    @Test
    void unpublishLiftsTheLimitAndLeavesOtherDevicesLinesAlone() throws Exception {
        Published limited = publishedVolume("lift", 128 * MIB, Map.of("writeBPS", "4Mi"), QosClass.BURSTABLE, "ext4");
        Csi.Volume second = createVolume("lift-other", 64 * MIB, Map.of("writeIOPS", "500"));
        Csi.VolumeCapability capability = Csi2.mount();
        Path secondStaging = stage(second, capability);
        Path secondTarget = publish(second, limited.pod(), secondStaging, capability, true);
        String both = limitsFile(limited.pod());
        assertTrue(both.contains(deviceNumberOf(limited.volume())) && both.contains(deviceNumberOf(second)), both);

        Path file = limited.staging().resolve("after-unpublish");
        unpublish(limited.volume(), limited.target());
        assertFalse(Files.exists(limited.target()), "the target is removed");
        String after = limitsFile(limited.pod());
        assertFalse(after.lines().anyMatch(l -> l.startsWith(deviceNumberOf(limited.volume()) + " ")
                        && !l.endsWith(" 0") && !l.contains("wbps=max")),
                "this device's limit is lifted: " + after);
        assertTrue(after.contains(deviceNumberOf(second)), "the other device's line stays: " + after);
        if (GuestEnv.cgroupMode() == CgroupMode.V2) {
            Rate unlimited = GuestPods.fio(limited.pod(), "write", GuestPods.sequential("write", file, "32M", true));
            assertTrue(unlimited.bytesPerSecond() > 5 * 4 * MIB, "after unpublish: " + unlimited.mibPerSecond() + " MiB/s");
        }
        unpublish(second, secondTarget);
    }

    @Test
    void bufferedWritesAreLimitedTooOnExt4AndXfs() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(GuestEnv.cgroupMode() == CgroupMode.V2,
                "cgroup v1 blkio cannot attribute writeback to a cgroup");
        for (String fs : List.of("ext4", "xfs")) {
            Published volume = publishedVolume("buffered-" + fs, 320 * MIB, Map.of("writeBPS", "4Mi"),
                    QosClass.BURSTABLE, fs);
            Rate rate = GuestPods.bufferedWrite(volume.pod(), volume.target().resolve("buffered"), 16);
            assertWithin10Percent(4 * MIB, rate.bytesPerSecond(), "buffered writes + fsync on " + fs);
        }
    }

    @Test
    void expandingAPerGibVolumeRaisesItsLimit() throws Exception {
        Published volume = publishedVolume("per-gib", 128 * MIB, Map.of("bpsPerGiB", "32Mi"), QosClass.BURSTABLE, "ext4");
        Path file = volume.target().resolve("data");
        GuestPods.layOut(file, 32);
        Rate before = GuestPods.fio(volume.pod(), "write", GuestPods.sequential("write", file, "32M", true));
        assertWithin10Percent(4 * MIB, before.bytesPerSecond(), "32Mi per GiB at 128 MiB");

        Csi.NodeExpandVolumeResponse expanded = driver.client().node().nodeExpandVolume(Csi.NodeExpandVolumeRequest
                .newBuilder().setVolumeId(volume.volume().getVolumeId()).setVolumePath(volume.target().toString())
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(256 * MIB))
                .setVolumeCapability(Csi2.mount()).build());
        assertEquals(256 * MIB, expanded.getCapacityBytes());
        long fsBytes = Long.parseLong(ok("df", "-B1", "--output=size", volume.target().toString()).lines()
                .skip(1).findFirst().orElseThrow().strip());
        assertTrue(fsBytes > 200 * MIB, "the filesystem grew online: " + fsBytes);
        Rate after = GuestPods.fio(volume.pod(), "write", GuestPods.sequential("write", file, "32M", true));
        assertWithin10Percent(8 * MIB, after.bytesPerSecond(), "32Mi per GiB at 256 MiB");
    }

    @Test
    void aPersistentMinorAbove255IsLimitedOnTheRightDevice() throws Exception {
        Csi.Volume volume = createVolume("minor-300", 128 * MIB, Map.of("writeBPS", "4Mi"));
        String[] parts = volume.getVolumeId().split("/");
        String lv = parts[2] + "/" + parts[3];
        ok("lvm", "lvchange", "-an", lv);
        ok("lvm", "lvchange", "-y", "--persistent", "y", "--major", "254", "--minor", "300", lv);
        ok("lvm", "lvchange", "-ay", lv);
        assertEquals("254:300", deviceNumberOf(volume));
        Csi.VolumeCapability capability = Csi2.mount();
        Path staging = stage(volume, capability);
        Pod pod = pod(QosClass.BURSTABLE);
        Path target = publish(volume, pod, staging, capability, true);
        assertTrue(limitsFile(pod).contains("254:300"), limitsFile(pod));
        Path file = target.resolve("data");
        GuestPods.layOut(file, 32);
        Rate rate = GuestPods.fio(pod, "write", GuestPods.sequential("write", file, "32M", true));
        assertWithin10Percent(4 * MIB, rate.bytesPerSecond(), "writes on 254:300");
    }

    @Test
    void blockVolumesArePublishedAsADeviceFileAndLimited() throws Exception {
        Csi.Volume volume = createVolume("raw-block", 64 * MIB, Map.of("writeBPS", "4Mi"));
        Path staging = stage(volume, Csi2.block());
        Pod pod = pod(QosClass.BURSTABLE);
        Path target = publish(volume, pod, staging, Csi2.block(), false);
        assertTrue(ok("stat", "-c", "%F", target.toString()).contains("block special"), "a device node at the target");
        assertTrue(limitsFile(pod).contains(deviceNumberOf(volume)), "pod UID taken from the block publish path");
        Rate rate = GuestPods.fio(pod, "write", GuestPods.sequential("write", target, "32M", true));
        assertWithin10Percent(4 * MIB, rate.bytesPerSecond(), "direct writes to the raw device");
    }

    @Test
    void publishIsIdempotentAndReadOnlyIsReallyReadOnly() throws Exception {
        Csi.Volume volume = createVolume("ro", 64 * MIB, Map.of());
        Csi.VolumeCapability capability = Csi2.mount("", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_MULTI_WRITER);
        Path staging = stage(volume, capability);
        stage(volume, capability); // a retry
        Pod pod = pod(QosClass.BURSTABLE);
        Path target = pod.volumePath("ro-pv");
        Csi.NodePublishVolumeRequest request = Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                .setVolumeCapability(capability).setReadonly(true).build();
        driver.client().node().nodePublishVolume(request);
        driver.client().node().nodePublishVolume(request);
        cleanup.add(() -> unpublish(volume, target));
        GuestCommand.Result write = GuestCommand.run("touch", target.resolve("x").toString());
        assertFalse(write.succeeded());
        assertTrue(write.stderr().contains("Read-only"), write.stderr());
        assertEquals(1, ok("grep", "-c", " " + target + " ", "/proc/self/mountinfo").strip().chars()
                .filter(c -> c == '1').count(), "one mount, not two");
    }

    @Test
    void aSingleWriterVolumeIsNotPublishedTwiceButAMultiWriterOneIs() throws Exception {
        Csi.Volume volume = createVolume("writers", 64 * MIB, Map.of("writeIOPS", "300"));
        Csi.VolumeCapability single = Csi2.mount("", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_SINGLE_WRITER);
        Path staging = stage(volume, single);
        Pod first = pod(QosClass.BURSTABLE);
        Pod second = pod(QosClass.BURSTABLE);
        publish(volume, first, staging, single, true);
        var failure = expectCode(Status.Code.FAILED_PRECONDITION, () -> driver.client().node().nodePublishVolume(
                Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                        .setStagingTargetPath(staging.toString()).setTargetPath(second.volumePath("w").toString())
                        .setVolumeCapability(single).build()));
        assertTrue(failure.getStatus().getDescription().contains("already published"));
        assertFalse(Files.exists(second.volumePath("w")), "nothing made at the refused target");

        Csi.VolumeCapability multi = Csi2.mount("", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_MULTI_WRITER);
        publish(volume, second, staging, multi, true);
        String device = deviceNumberOf(volume);
        assertTrue(limitsFile(first).contains(device) && limitsFile(second).contains(device),
                "each pod is limited separately");
    }

    @Test
    void badPathsAndUnknownVolumesAreRefusedAndNothingIsMountedOrRemoved() throws Exception {
        Csi.Volume volume = createVolume("bad-input", 64 * MIB, Map.of());
        Csi.VolumeCapability capability = Csi2.mount();
        Path staging = stage(volume, capability);
        Path outside = Path.of("/run/outside-target");
        Files.createDirectories(outside);
        Files.writeString(outside.resolve("keep"), "keep");
        Path link = GuestDriver.KUBELET.resolve("pods/evil");
        Files.createDirectories(link.getParent());
        Files.deleteIfExists(link);
        Files.createSymbolicLink(link, outside);
        Path podVolumes = GuestDriver.KUBELET.resolve("pods/00000000-0000-0000-0000-0000000000ba/volumes/kubernetes.io~csi");
        Path fileWhereDirExpected = podVolumes.resolve("file-target/mount");
        Files.createDirectories(fileWhereDirExpected.getParent());
        Files.writeString(fileWhereDirExpected, "x");
        String validTarget = podVolumes.resolve("t/mount").toString();
        String mountsBefore = ok("cat", "/proc/self/mountinfo");
        try {
            for (String target : List.of("/run/outside-target", GuestDriver.KUBELET + "/pods/../../outside-target",
                    link + "/mount", link.toString(), "relative/target")) {
                expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().node().nodePublishVolume(
                        Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                                .setStagingTargetPath(staging.toString()).setTargetPath(target)
                                .setVolumeCapability(capability).build()));
                expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().node().nodeUnpublishVolume(
                        Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                                .setTargetPath(target).build()));
            }
            expectCode(Status.Code.FAILED_PRECONDITION, () -> driver.client().node().nodePublishVolume(
                    Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                            .setStagingTargetPath(staging.toString()).setTargetPath(fileWhereDirExpected.toString())
                            .setVolumeCapability(capability).build()));
            expectCode(Status.Code.NOT_FOUND, () -> driver.client().node().nodePublishVolume(
                    Csi.NodePublishVolumeRequest.newBuilder().setVolumeId("lvmqos/guest-node/lvmqos/vol_none_0")
                            .setStagingTargetPath(staging.toString()).setTargetPath(validTarget)
                            .setVolumeCapability(capability).build()));
            expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().node().nodePublishVolume(
                    Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                            .setStagingTargetPath(staging.toString()).setTargetPath(validTarget)
                            .build()));
            expectCode(Status.Code.NOT_FOUND, () -> driver.client().node().nodeGetVolumeStats(
                    Csi.NodeGetVolumeStatsRequest.newBuilder().setVolumeId("unknown").setVolumePath(staging.toString())
                            .build()));
            assertEquals(mountsBefore, ok("cat", "/proc/self/mountinfo"), "nothing was mounted or unmounted");
            assertEquals("keep", Files.readString(outside.resolve("keep")), "nothing outside was touched");
            assertTrue(Files.exists(fileWhereDirExpected));
        } finally {
            Files.delete(link);
            Files.delete(fileWhereDirExpected);
        }
    }

    @Test
    void aPodWithLimitsButNoCgroupIsUnavailableAndNothingStaysMounted() throws Exception {
        Csi.Volume volume = createVolume("no-cgroup", 64 * MIB, Map.of("iops", "100"));
        Csi.VolumeCapability capability = Csi2.mount();
        Path staging = stage(volume, capability);
        Path target = GuestDriver.KUBELET.resolve("pods/00000000-0000-0000-0000-000000000001/volumes/kubernetes.io~csi/x/mount");
        var failure = expectCode(Status.Code.UNAVAILABLE, () -> driver.client().node().nodePublishVolume(
                Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                        .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                        .setVolumeCapability(capability).build()));
        assertTrue(failure.getStatus().getDescription().contains("kubepods"), failure.getStatus().getDescription());
        assertFalse(ok("cat", "/proc/self/mountinfo").contains(target.toString()), "the bind mount was undone");
    }

    @Test
    void statsReportUsageAndAVolumeConditionThatSeesALostMount() throws Exception {
        Published volume = publishedVolume("stats", 64 * MIB, Map.of(), QosClass.BURSTABLE, "ext4");
        Csi.NodeGetVolumeStatsResponse stats = driver.client().node().nodeGetVolumeStats(Csi.NodeGetVolumeStatsRequest
                .newBuilder().setVolumeId(volume.volume().getVolumeId()).setVolumePath(volume.target().toString()).build());
        assertEquals(2, stats.getUsageCount());
        assertTrue(stats.getUsage(0).getTotal() > 40 * MIB);
        assertTrue(stats.getUsage(1).getTotal() > 0, "inodes");
        assertFalse(stats.getVolumeCondition().getAbnormal());
        expectCode(Status.Code.NOT_FOUND, () -> driver.client().node().nodeGetVolumeStats(Csi.NodeGetVolumeStatsRequest
                .newBuilder().setVolumeId(volume.volume().getVolumeId()).setVolumePath("/run/not-there").build()));
    }

    @Test
    void xfsRestoredFromASnapshotMountsBesideItsOriginAndGrows() throws Exception {
        Map<String, String> thin = Map.of("lvmType", "thin");
        Csi.Volume origin = createVolume("xfs-origin", 320 * MIB, thin);
        Csi.VolumeCapability xfs = Csi2.mount("xfs", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER);
        Path originStaging = stage(origin, xfs);
        Files.writeString(originStaging.resolve("hello"), "from the origin");
        ok("sync");
        Csi.Snapshot snapshot = driver.client().controller().createSnapshot(Csi.CreateSnapshotRequest.newBuilder()
                .setName("xfs-snap").setSourceVolumeId(origin.getVolumeId()).build()).getSnapshot();
        cleanup.add(() -> driver.client().controller().deleteSnapshot(Csi.DeleteSnapshotRequest.newBuilder()
                .setSnapshotId(snapshot.getSnapshotId()).build()));
        Csi.Volume restored = driver.client().controller().createVolume(create("xfs-restored", 640 * MIB, thin)
                .clearVolumeCapabilities().addVolumeCapabilities(xfs)
                .setVolumeContentSource(Csi.VolumeContentSource.newBuilder().setSnapshot(
                        Csi.VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshot.getSnapshotId())))
                .build()).getVolume();
        cleanup.add(() -> driver.client().controller().deleteVolume(
                Csi.DeleteVolumeRequest.newBuilder().setVolumeId(restored.getVolumeId()).build()));
        Path restoredStaging = stage(restored, xfs);
        assertEquals("from the origin", Files.readString(restoredStaging.resolve("hello")));
        long size = Long.parseLong(ok("df", "-B1", "--output=size", restoredStaging.toString()).lines().skip(1)
                .findFirst().orElseThrow().strip());
        assertTrue(size > 500 * MIB, "grown to the restored volume's size at stage: " + size);
    }
}
