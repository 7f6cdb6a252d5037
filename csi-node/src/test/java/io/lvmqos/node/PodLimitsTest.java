package io.lvmqos.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.cgroup.CgroupLimitsWriter;
import io.lvmqos.cgroup.CgroupLimitsWriters;
import io.lvmqos.cgroup.ContainerCgroupWatcher;
import io.lvmqos.cgroup.PodCgroups;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.mount.MountTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stale limit lines, against a cgroup tree and a mount table laid out in a temporary directory.
 * The tree is v1's: plain files keep what was last written, and v1's "MAJ:MIN 0" reads back as
 * no limit, as the kernel's dropped line would.
 */
class PodLimitsTest {

    static final String UID = "7c1d6e0a-2b2f-4d8a-9c55-1f0e2b9a7d31";
    static final Path KUBELET = Path.of("/var/lib/kubelet");

    @TempDir
    Path dir;
    final ContainerCgroupWatcher watcher = new ContainerCgroupWatcher((pod, child) -> { });

    @AfterEach
    void stop() {
        watcher.close();
    }

    private PodLimits podLimits(Path cgroupRoot, String mountinfo, Set<DeviceNumber> ours) throws IOException {
        Path table = dir.resolve("mountinfo");
        Files.writeString(table, mountinfo);
        return new PodLimits(new PodCgroups(cgroupRoot), CgroupLimitsWriters.forNode(cgroupRoot), watcher,
                new MountTable(table), KUBELET, dir.resolve("dev"), ours::contains);
    }

    private Path v1Pod(Path root) throws IOException {
        Path blkio = Files.createDirectories(root.resolve("blkio"));
        Files.writeString(blkio.resolve("blkio.throttle.write_bps_device"), "");
        Path pod = Files.createDirectories(blkio.resolve("kubepods/burstable/pod" + UID));
        for (String file : List.of("read_bps", "write_bps", "read_iops", "write_iops")) {
            Files.writeString(pod.resolve("blkio.throttle." + file + "_device"), "");
        }
        return pod;
    }

    /**
     * 253:4 is published into the pod; 253:7 was an LV of ours once published there (its lift
     * never happened); 8:16 is a disk someone else limited. Only 253:7's line goes.
     */
    @Test
    void aLineForAnLvOfOursThatIsNotPublishedIntoThePodIsRemovedAndNoOtherLine() throws IOException {
        Path root = dir.resolve("cgroup");
        Path pod = v1Pod(root);
        Path writeBps = pod.resolve("blkio.throttle.write_bps_device");
        Files.writeString(writeBps, "8:16 1000\n253:4 4194304\n253:7 1048576\n");
        String mountinfo = "25 1 8:1 / /var/lib/kubelet rw,relatime shared:7 - ext4 /dev/sda1 rw\n"
                + "311 25 253:4 / /var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~csi/pvc-1/mount rw shared:120"
                + " - ext4 /dev/mapper/vg0-pvc--1 rw\n";
        PodLimits limits = podLimits(root, mountinfo, Set.of(new DeviceNumber(253, 4), new DeviceNumber(253, 7)));

        limits.pruneStale(UID, () -> Set.of(new DeviceNumber(253, 4)), Optional.empty());

        // a plain file keeps the last write; the kernel drops 253:7's line on "253:7 0"
        assertEquals("253:7 0", Files.readString(writeBps));
    }

    @Test
    void nothingIsRemovedWhenEveryLineIsPublishedOrNotOurs() throws IOException {
        Path root = dir.resolve("cgroup");
        Path pod = v1Pod(root);
        String lines = "8:16 1000\n253:4 4194304\n";
        Files.writeString(pod.resolve("blkio.throttle.write_bps_device"), lines);
        String mountinfo = "311 25 253:4 / /var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~csi/pvc-1/mount rw"
                + " shared:120 - ext4 /dev/mapper/vg0-pvc--1 rw\n";
        podLimits(root, mountinfo, Set.of(new DeviceNumber(253, 4)))
                .pruneStale(UID, () -> Set.of(new DeviceNumber(253, 4)), Optional.empty());
        assertEquals(lines, Files.readString(pod.resolve("blkio.throttle.write_bps_device")));
    }

    /**
     * A raw block publish is a devtmpfs bind mount whose root is the node's path ("/dm-3"). A bind
     * mount of something else that happens to have that root is no publish of the volume.
     */
    @Test
    void onlyADevtmpfsMountWithTheNodesRootPublishesADeviceNode() throws IOException {
        String mountinfo = "25 1 8:1 / /var/lib/kubelet rw,relatime shared:7 - ext4 /dev/sda1 rw\n"
                + "411 25 0:5 /dm-3 /var/lib/kubelet/plugins/kubernetes.io/csi/volumeDevices/publish/pv-b/" + UID
                + " rw shared:130 - devtmpfs udev rw\n"
                + "412 25 8:1 /dm-3 /var/lib/kubelet/plugins/kubernetes.io/csi/volumeDevices/publish/pv-c/"
                + "0b4c2f58-5e5d-4d5f-b5a8-4f3b7f6b0b11 rw shared:131 - ext4 /dev/sda1 rw\n";
        PodLimits limits = podLimits(dir.resolve("cgroup"), mountinfo, Set.of());

        assertEquals(Set.of(UID), limits.podsUsing(new DeviceNumber(253, 3), Optional.of("/dm-3")));
    }

    /**
     * A restart on cgroup v1: the pod's own throttle files say what it should have; a container
     * cgroup made while no plugin ran gets the lines, and one made after the rescan too.
     */
    @Test
    void atStartUpTheLimitsOfPublishedPodsReachTheirContainersAgain() throws Exception {
        Path root = dir.resolve("cgroup");
        Path pod = v1Pod(root);
        Files.writeString(pod.resolve("blkio.throttle.write_bps_device"), "253:4 4194304\n");
        Path whileDown = Files.createDirectory(pod.resolve("cri-containerd-aaaa.scope"));
        for (String file : List.of("read_bps", "write_bps", "read_iops", "write_iops")) {
            Files.writeString(whileDown.resolve("blkio.throttle." + file + "_device"), "");
        }
        String mountinfo = "311 25 253:4 / /var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~csi/pvc-1/mount rw"
                + " shared:120 - ext4 /dev/mapper/vg0-pvc--1 rw\n";
        Files.writeString(dir.resolve("mountinfo"), mountinfo);
        CgroupLimitsWriter writer = CgroupLimitsWriters.forNode(root);
        java.util.concurrent.BlockingQueue<Path> copied = new java.util.concurrent.LinkedBlockingQueue<>();
        try (ContainerCgroupWatcher restarted = new ContainerCgroupWatcher((p, child) -> copied.add(child))) {
            new PodLimits(new PodCgroups(root), writer, restarted, new MountTable(dir.resolve("mountinfo")), KUBELET,
                    dir.resolve("dev"), d -> true).resume();
            assertEquals("253:4 4194304", Files.readString(whileDown.resolve("blkio.throttle.write_bps_device")));
            Path later = Files.createDirectory(pod.resolve("cri-containerd-bbbb.scope"));
            assertEquals(later, copied.poll(5, java.util.concurrent.TimeUnit.SECONDS), "watched again");
        }
    }

    /**
     * The /dev/mapper link resolves to the dm node; its path inside the device directory is what
     * mountinfo shows as the root of a raw block publish of it.
     */
    @Test
    void aDeviceNodesRootIsItsPathInsideTheDeviceDirectory() throws IOException {
        Path dev = Files.createDirectories(dir.resolve("dev"));
        Files.writeString(dev.resolve("dm-3"), "");
        Path mapper = Files.createDirectories(dev.resolve("mapper"));
        Path link = Files.createSymbolicLink(mapper.resolve("vg0-pvc--1"), Path.of("../dm-3"));
        PodLimits limits = podLimits(dir.resolve("cgroup"), "", Set.of());

        assertEquals("/dm-3", limits.deviceNodeRoot(link));
    }

    @Test
    void aMissingDeviceIsAFailedPrecondition() throws IOException {
        PodLimits limits = podLimits(dir.resolve("cgroup"), "", Set.of());
        assertThrows(DriverException.FailedPrecondition.class,
                () -> limits.deviceNodeRoot(dir.resolve("dev/mapper/vg0-gone")));
    }
}
