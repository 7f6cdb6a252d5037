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
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.guest.GuestPods.CgroupDriver;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Node service on a real kernel: stage and publish into pods laid out as kubelet's cgroup
 * drivers lay them out (systemd and cgroupfs, all three QoS classes, the default cgroup root and
 * kind's /kubelet), and fio inside a container cgroup of each pod, made after the publish,
 * measuring the limits the driver wrote. Runs under cgroup v2 (io.max) and v1 (blkio.throttle);
 * buffered writeback only on v2.
 */
public class NodeCheck {

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass();
    private final List<Runnable> cleanup = new ArrayList<>();

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

    private static StatusRuntimeException refusedPublish(Csi.Volume volume, Path staging, Csi.VolumeCapability capability,
                                                         Path target) {
        return expectCode(Status.Code.FAILED_PRECONDITION, () -> driver.client().node().nodePublishVolume(
                Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                        .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                        .setVolumeCapability(capability).build()));
    }

    private Pod pod(QosClass qos) throws Exception {
        return pod(qos, CgroupDriver.SYSTEMD);
    }

    private Pod pod(QosClass qos, CgroupDriver cgroupDriver) throws Exception {
        Pod pod = GuestPods.create(qos, cgroupDriver);
        cleanup.add(() -> GuestPods.remove(pod));
        return pod;
    }

    private Published publishedVolume(String name, long bytes, Map<String, String> parameters, QosClass qos,
                                      String fsType) throws Exception {
        return publishedVolume(name, bytes, parameters, qos, CgroupDriver.SYSTEMD, fsType);
    }

    private Published publishedVolume(String name, long bytes, Map<String, String> parameters, QosClass qos,
                                      CgroupDriver cgroupDriver, String fsType) throws Exception {
        Csi.Volume volume = createVolume(name, bytes, parameters);
        Csi.VolumeCapability capability = Csi2.mount(fsType, Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER);
        Path staging = stage(volume, capability);
        Pod pod = pod(qos, cgroupDriver);
        Path target = publish(volume, pod, staging, capability, true);
        return new Published(volume, pod, staging, target);
    }

    static String deviceNumberOf(Csi.Volume volume) {
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

    /**
     * For a limit whose exact value the test has read back from the pod's cgroup: the rate must
     * not pass it by more than 10 %, and may fall short of it by up to 25 %. At 8 MiB/s the guest's
     * one CPU, shared with the host's other work, has been measured delivering 86 % of the limit
     * in a loaded CI run; a limit wrongly left at the old value would still show as 50 %.
     */
    private static void assertHeldAtTheLineWritten(double expected, double measured, String what) {
        System.out.printf("node %s: %s: measured %.1f, limit %.0f (%.1f%%)%n", GuestEnv.cgroupMode(), what, measured,
                expected, 100 * measured / expected);
        assertTrue(measured <= 1.10 * expected && measured >= 0.75 * expected,
                what + ": measured " + measured + ", limit " + expected + " (" + Math.round(100 * measured / expected) + "%)");
    }

    private static void assertWithin10Percent(double expected, double measured, String what) {
        System.out.printf("node %s: %s: measured %.1f, limit %.0f (%.1f%%)%n", GuestEnv.cgroupMode(), what, measured,
                expected, 100 * measured / expected);
        assertTrue(Math.abs(measured - expected) <= 0.10 * expected,
                what + ": measured " + measured + ", limit " + expected + " (" + Math.round(100 * measured / expected) + "%)");
    }

    @Test
    void bandwidthAndIopsLimitsHoldInsideEachPodAndAnUnlimitedVolumeRunsFree() throws Exception {
        Published bps = publishedVolume("qos-bps", 128 * MIB, Map.of("readBPS", "4Mi", "writeBPS", "4Mi"),
                QosClass.BURSTABLE, "ext4");
        Published iops = publishedVolume("qos-iops", 128 * MIB, Map.of("iops", "200"), QosClass.GUARANTEED,
                CgroupDriver.CGROUPFS, "ext4");
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
        Path container = limited.pod().newContainer(); // a container running across the unpublish
        if (GuestEnv.cgroupMode() == CgroupMode.V1) {
            limited.pod().awaitPodLines(container);
        }
        unpublish(limited.volume(), limited.target());
        assertFalse(Files.exists(limited.target()), "the target is removed");
        String after = limitsFile(limited.pod());
        assertFalse(after.lines().anyMatch(l -> l.startsWith(deviceNumberOf(limited.volume()) + " ")
                        && !l.endsWith(" 0") && !l.contains("wbps=max")),
                "this device's limit is lifted: " + after);
        assertTrue(after.contains(deviceNumberOf(second)), "the other device's line stays: " + after);
        if (GuestEnv.cgroupMode() == CgroupMode.V1) {
            String inContainer = ok("cat", container.resolve("blkio.throttle.write_bps_device").toString());
            assertFalse(inContainer.contains(deviceNumberOf(limited.volume()) + " "),
                    "lifted from the container cgroup too: " + inContainer);
            assertTrue(ok("cat", container.resolve("blkio.throttle.write_iops_device").toString())
                    .contains(deviceNumberOf(second) + " 500"), "the other volume's line stays in the container");
        }
        Rate unlimited = GuestPods.fio(limited.pod(), "write", GuestPods.sequential("write", file, "32M", true));
        assertTrue(unlimited.bytesPerSecond() > 5 * 4 * MIB, "after unpublish: " + unlimited.mibPerSecond() + " MiB/s");
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
        assertTrue(limitsFile(volume.pod()).contains(Long.toString(4 * MIB)), limitsFile(volume.pod()));
        Rate before = GuestPods.fio(volume.pod(), "write", GuestPods.sequential("write", file, "32M", true));
        assertHeldAtTheLineWritten(4 * MIB, before.bytesPerSecond(), "32Mi per GiB at 128 MiB");

        Csi.NodeExpandVolumeResponse expanded = driver.client().node().nodeExpandVolume(Csi.NodeExpandVolumeRequest
                .newBuilder().setVolumeId(volume.volume().getVolumeId()).setVolumePath(volume.target().toString())
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(256 * MIB))
                .setVolumeCapability(Csi2.mount()).build());
        assertEquals(256 * MIB, expanded.getCapacityBytes());
        long fsBytes = Long.parseLong(ok("df", "-B1", "--output=size", volume.target().toString()).lines()
                .skip(1).findFirst().orElseThrow().strip());
        assertTrue(fsBytes > 200 * MIB, "the filesystem grew online: " + fsBytes);
        String raised = limitsFile(volume.pod());
        assertTrue(raised.contains(Long.toString(8 * MIB)) && !raised.contains(Long.toString(4 * MIB)), raised);
        Rate after = GuestPods.fio(volume.pod(), "write", GuestPods.sequential("write", file, "32M", true));
        assertHeldAtTheLineWritten(8 * MIB, after.bytesPerSecond(), "32Mi per GiB at 256 MiB");
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
        // stats of a raw block publish: the device node bound at the target is the volume's
        Csi.NodeGetVolumeStatsResponse stats = driver.client().node().nodeGetVolumeStats(Csi.NodeGetVolumeStatsRequest
                .newBuilder().setVolumeId(volume.getVolumeId()).setVolumePath(target.toString()).build());
        assertEquals(List.of(Csi.VolumeUsage.newBuilder().setUnit(Csi.VolumeUsage.Unit.BYTES).setTotal(64 * MIB)
                .build()), stats.getUsageList());
        assertFalse(stats.getVolumeCondition().getAbnormal(), stats.getVolumeCondition().getMessage());
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
        var failure = refusedPublish(volume, staging, single, second.volumePath("w"));
        assertTrue(failure.getStatus().getDescription().contains("already published"));
        assertFalse(Files.exists(second.volumePath("w")), "nothing made at the refused target");

        Csi.VolumeCapability multi = Csi2.mount("", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_MULTI_WRITER);
        publish(volume, second, staging, multi, true);
        String device = deviceNumberOf(volume);
        assertTrue(limitsFile(first).contains(device) && limitsFile(second).contains(device),
                "each pod is limited separately");
    }

    /**
     * The driver finds a volume's other publishes among the targets it bound it to, seeded from
     * the mount table once per process: a publish made before a restart still counts after it.
     */
    @Test
    void aSingleWriterPublishMadeBeforeARestartStillRefusesASecondTarget() throws Exception {
        Csi.Volume volume = createVolume("writer-restart", 64 * MIB, Map.of());
        Csi.VolumeCapability single = Csi2.mount("", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER);
        Path staging = stage(volume, single);
        Pod first = pod(QosClass.BURSTABLE);
        Pod second = pod(QosClass.BURSTABLE);
        Path published = publish(volume, first, staging, single, true);
        driver.restart();
        var failure = refusedPublish(volume, staging, single, second.volumePath("w"));
        assertTrue(failure.getStatus().getDescription().contains("already published at " + published),
                failure.getStatus().getDescription());
        assertFalse(Files.exists(second.volumePath("w")), "nothing made at the refused target");
        unpublish(volume, published);
        Path again = second.volumePath("w");
        driver.client().node().nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                .setTargetPath(again.toString()).setVolumeCapability(single).build());
        cleanup.add(() -> unpublish(volume, again));
        assertTrue(Files.exists(again), "published at the second target once the first is gone");
    }

    /**
     * Whether a pod still uses a device after an unpublish is read from the targets where the
     * device is published: a volume published into one pod at two targets keeps its limit until
     * the second goes, also when the driver restarted in between and knows the second target only
     * from the mount table it read at its start.
     */
    @Test
    void aVolumePublishedTwiceIntoOnePodKeepsItsLimitUntilTheLastUnpublish() throws Exception {
        Csi.Volume volume = createVolume("twice", 64 * MIB, Map.of("writeIOPS", "400"));
        Csi.VolumeCapability multi = Csi2.mount("", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_MULTI_WRITER);
        Path staging = stage(volume, multi);
        Pod pod = pod(QosClass.BURSTABLE);
        Path first = publish(volume, pod, staging, multi, true);
        Path second = pod.volumePath("pv-twice-second");
        driver.client().node().nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                .setTargetPath(second.toString()).setVolumeCapability(multi)
                .putVolumeContext("csi.storage.k8s.io/pod.uid", pod.uid()).build());
        String device = deviceNumberOf(volume);
        driver.restart();
        unpublish(volume, first);
        assertTrue(limitsFile(pod).lines().anyMatch(l -> l.startsWith(device + " ") && !l.endsWith(" 0")),
                "still published at " + second + ": the limit stays: " + limitsFile(pod));
        unpublish(volume, second);
        assertFalse(limitsFile(pod).lines().anyMatch(l -> l.startsWith(device + " ") && !l.endsWith(" 0")
                        && !l.contains("wiops=max")),
                "the last publish gone: the limit is lifted: " + limitsFile(pod));
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

    /**
     * Kubelet's volume manager runs its own loop and can publish before the pod worker has made
     * the pod's cgroup: the publish answers UNAVAILABLE, naming where it looked, leaves nothing
     * mounted, and kubelet's retry succeeds once the cgroup is there.
     */
    @Test
    void aPublishBeforeThePodCgroupIsUnavailableAndItsRetrySucceedsOnceTheCgroupIsThere() throws Exception {
        pod(QosClass.BESTEFFORT); // kubelet's pod tree exists: only this pod's cgroup is missing
        Csi.Volume volume = createVolume("cgroup-later", 128 * MIB, Map.of("writeBPS", "4Mi"));
        Csi.VolumeCapability capability = Csi2.mount();
        Path staging = stage(volume, capability);
        String uid = java.util.UUID.randomUUID().toString();
        Path target = GuestDriver.KUBELET.resolve("pods").resolve(uid).resolve("volumes/kubernetes.io~csi/later/mount");
        Csi.NodePublishVolumeRequest request = Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                .setVolumeCapability(capability).putVolumeContext("csi.storage.k8s.io/pod.uid", uid).build();
        var failure = expectCode(Status.Code.UNAVAILABLE, () -> driver.client().node().nodePublishVolume(request));
        String message = failure.getStatus().getDescription();
        assertTrue(message.contains("searched") && message.contains("kubepods-burstable-pod" + uid.replace('-', '_')),
                message);
        assertFalse(message.contains("sandbox"), message);
        assertFalse(ok("cat", "/proc/self/mountinfo").contains(target.toString()), "the bind mount was undone");

        Pod pod = GuestPods.create(uid, QosClass.BURSTABLE, CgroupDriver.SYSTEMD, "");
        cleanup.add(() -> GuestPods.remove(pod));
        driver.client().node().nodePublishVolume(request);
        cleanup.add(() -> unpublish(volume, target));
        assertTrue(limitsFile(pod).contains(deviceNumberOf(volume)), limitsFile(pod));
        Path file = target.resolve("data");
        GuestPods.layOut(file, 32);
        Rate rate = GuestPods.fio(pod, "write", GuestPods.sequential("write", file, "32M", true));
        assertWithin10Percent(4 * MIB, rate.bytesPerSecond(), "a container of the pod, after the retry");
    }

    /**
     * Every layout kubelet can give a pod: both cgroup drivers, the three QoS classes, below the
     * default cgroup root and below kind's --cgroup-root=/kubelet. Each time a container cgroup
     * is made after the publish and dd writes 8 MiB directly to the raw volume from it.
     */
    @Test
    void aContainerMadeAfterPublishIsLimitedInEveryKubeletLayout() throws Exception {
        Csi.Volume volume = createVolume("layouts", 64 * MIB, Map.of("writeBPS", "4Mi"));
        Path staging = stage(volume, Csi2.block());
        List<String> results = new ArrayList<>();
        for (String cgroupRoot : List.of("", "kubelet")) {
            for (CgroupDriver cgroupDriver : CgroupDriver.values()) {
                for (QosClass qos : QosClass.values()) {
                    Pod pod = GuestPods.create(java.util.UUID.randomUUID().toString(), qos, cgroupDriver, cgroupRoot);
                    try {
                        Path target = pod.blockPath("pv-layouts");
                        driver.client().node().nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder()
                                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                                .setTargetPath(target.toString()).setVolumeCapability(Csi2.block()).build());
                        try {
                            String dd = GuestCommand.run(java.time.Duration.ofMinutes(1), pod.inNewContainer(List.of("dd",
                                    "if=/dev/zero", "of=" + target, "bs=1M", "count=8", "oflag=direct")))
                                    .requireSuccess().stderr();
                            java.util.regex.Matcher m = java.util.regex.Pattern.compile("copied, ([0-9.]+) s").matcher(dd);
                            assertTrue(m.find(), dd);
                            double mib = 8 / Double.parseDouble(m.group(1));
                            String layout = GuestEnv.cgroupRoot().relativize(pod.cgroup()) + ": " + String.format("%.2f MiB/s", mib);
                            results.add(layout);
                            assertTrue(mib > 0.8 * 4 && mib < 1.2 * 4, "writeBPS=4Mi in a container of " + layout);
                        } finally {
                            unpublish(volume, target);
                        }
                    } finally {
                        GuestPods.remove(pod);
                    }
                }
            }
        }
        Files.writeString(GuestEnv.outDir().resolve("layouts-" + GuestEnv.cgroupMode() + ".txt"),
                String.join("\n", results) + "\n");
    }

    /**
     * cgroup v1 only: the window in which a container cgroup made after the publish has no limit,
     * from its mkdir to its throttle file holding the pod's line (written by the driver process on
     * its inotify watch), over 200 container cgroups. On v2 there is no such window: io.max on the
     * pod cgroup holds for a child from its creation.
     */
    @Test
    void v1TheWindowBeforeANewContainerCgroupIsLimited() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(GuestEnv.cgroupMode() == CgroupMode.V1, "v2 has no window");
        Published volume = publishedVolume("window", 64 * MIB, Map.of("writeBPS", "4Mi", "writeIOPS", "200"),
                QosClass.BURSTABLE, CgroupDriver.CGROUPFS, "ext4");
        String device = deviceNumberOf(volume.volume());
        int rounds = 200;
        long[] micros = new long[rounds];
        // The check sleeps on inotify for the driver's write (a write to a cgroup file raises
        // IN_MODIFY like any other) instead of polling: on the guest's one CPU a polling loop
        // would take the CPU from the driver and measure itself.
        try (java.nio.file.WatchService changes = java.nio.file.FileSystems.getDefault().newWatchService()) {
            for (int i = 0; i < rounds; i++) {
                long made = System.nanoTime();
                Path container = volume.pod().newContainer();
                java.nio.file.WatchKey key = container.register(changes, java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY);
                Path file = container.resolve("blkio.throttle.write_iops_device");
                while (!Files.readString(file).contains(device + " 200")) {
                    java.nio.file.WatchKey woke = changes.poll(5, java.util.concurrent.TimeUnit.SECONDS);
                    assertTrue(woke != null, "no limit after 5 s in " + container);
                    woke.pollEvents();
                    woke.reset();
                }
                micros[i] = (System.nanoTime() - made) / 1000;
                key.cancel();
                Files.delete(container);
            }
        }
        java.util.Arrays.sort(micros);
        String line = String.format("cgroup v1, driver process in the UML guest: window over %d container cgroups:"
                + " p50 %.2f ms, p99 %.2f ms, max %.2f ms", rounds, micros[rounds / 2] / 1e3,
                micros[(int) Math.ceil(rounds * 0.99) - 1] / 1e3, micros[rounds - 1] / 1e3);
        System.out.println(line);
        Files.writeString(GuestEnv.outDir().resolve("container-window-v1.txt"), line + "\n");
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

    /**
     * A new thin volume reads as zeros, so its ext4 is made without zeroing its journal and without
     * leaving its inode tables to the kernel's lazy initialisation: both would take pool blocks for
     * zeros. Measured in this guest for 512 MiB: mke2fs's defaults left 3.2 % of the LV mapped after
     * the format and 4.8 % after 15 s mounted; made as here, 0.12 % at both points.
     */
    @Test
    void aNewThinExt4VolumeTakesNoPoolBlocksForZeros() throws Exception {
        Csi.Volume volume = createVolume("thin-ext4-zeros", 512 * MIB, Map.of("lvmType", "thin"));
        Path staging = stage(volume, Csi2.mount("ext4", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER));
        Thread.sleep(5_000); // what the kernel's lazy init would write by now, it has begun to
        ok("sync");
        String lv = GuestEnv.volumeGroup() + "/" + Csi2.lvName(volume.getVolumeId());
        double mapped = Double.parseDouble(ok("lvm", "lvs", "--noheadings", "-o", "data_percent", lv).strip());
        assertTrue(mapped < 1.0, lv + " has " + mapped + " % of its blocks mapped after its format and mount");
        String device = "/dev/" + lv;
        List<String> groups = ok("dumpe2fs", device).lines().filter(l -> l.matches("Group [0-9]+: .*")).toList();
        assertFalse(groups.isEmpty(), "dumpe2fs listed no groups of " + device);
        assertTrue(groups.stream().allMatch(l -> l.contains("ITABLE_ZEROED")), String.join("\n", groups));
        assertTrue(Files.isDirectory(staging.resolve("lost+found")), "a usable ext4 at " + staging);
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
