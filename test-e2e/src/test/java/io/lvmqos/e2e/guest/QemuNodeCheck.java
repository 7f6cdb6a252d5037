package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.guest.GuestPods.Rate;
import io.lvmqos.e2e.uml.CgroupMode;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Runs inside the qemu guest (see QemuNodeIT): proves that the second kind of test node is what the
 * io.cost work needs. Debian's own 6.1 kernel with io.cost, LVM with a thin pool on qemu's throttled
 * virtio disk, cgroup v2 with io.max holding below a pod cgroup laid out as kubelet lays it out, and a
 * disk whose own limit (qemu's throttle) is what fio meets when nothing else limits it.
 *
 * <p>The measured rates go to {@code $LVMQOS_OUT/qemu-node.txt} for the host to report.
 */
public class QemuNodeCheck {
    private static final String FS_VOLUME = "qemu-node-fs";
    private static final String IO_VOLUME = "qemu-node-io";
    private static final int CAP_IOPS = 100;
    // fio's random writes stay in a region written once beforehand, so that none of them provisions a
    // thin-pool chunk (with zeroing, more I/O on the disk than the one write).
    private static final int REGION_MIB = 64;

    private static Path ioDevice;
    private static String ioDeviceNumber;

    @BeforeAll
    static void aThinVolumeWrittenOnce() {
        GuestEnv.assumeInGuest();
        ioDevice = createThin(IO_VOLUME, "256m");
        GuestPods.layOut(ioDevice, REGION_MIB);
        List<String> kernel = words(ok("lvm", "lvs", "--noheadings", "-o", "lv_kernel_major,lv_kernel_minor",
                GuestEnv.volumeGroup() + "/" + IO_VOLUME));
        ioDeviceNumber = kernel.get(0) + ":" + kernel.get(1);
    }

    @AfterAll
    static void removeTheVolumes() {
        if (!GuestEnv.inGuest()) {
            return;
        }
        for (String lv : List.of(FS_VOLUME, IO_VOLUME)) {
            String path = GuestEnv.volumeGroup() + "/" + lv;
            if (GuestCommand.run("lvm", "lvs", path).succeeded()) {
                ok("lvm", "lvremove", "-q", "-y", path);
            }
        }
    }

    @Test
    void theKernelIsDebians61WithIoCost() throws IOException {
        assertEquals("qemu", GuestEnv.guestKind());
        String release = ok("uname", "-r").strip();
        assertTrue(release.matches("6\\.1\\.0-\\d+-amd64"), "Debian 12's kernel release: " + release);
        assertTrue(ok("uname", "-v").contains("Debian"), "a Debian build");
        assertEquals(CgroupMode.V2, GuestEnv.cgroupMode());
        Path root = GuestEnv.cgroupRoot();
        for (String file : List.of("io.cost.qos", "io.cost.model")) {
            assertTrue(Files.exists(root.resolve(file)), root.resolve(file) + " exists (CONFIG_BLK_CGROUP_IOCOST)");
        }
        List<String> enabled = words(Files.readString(root.resolve("cgroup.subtree_control")));
        assertTrue(enabled.containsAll(List.of("io", "memory")), "root's subtree_control: " + enabled);
        // PSI, which the dashboard's io.pressure will need, and which UML lacks.
        assertTrue(Files.exists(root.resolve("io.pressure")), "io.pressure exists (CONFIG_PSI)");
    }

    @Test
    void theVolumeGroupAndItsThinPoolAreOnTheVirtioDisk() {
        String vg = GuestEnv.volumeGroup();
        assertEquals(List.of(Path.of("/dev/vda")), GuestEnv.disks());
        assertEquals(List.of("/dev/vda", vg), words(ok("lvm", "pvs", "--noheadings", "-o", "pv_name,vg_name", "/dev/vda")));
        String pool = GuestEnv.thinPool().orElseThrow(() -> new AssertionError("the guest has no thin pool"));
        List<String> fields = words(ok("lvm", "lvs", "--noheadings", "-o", "segtype,lv_attr", vg + "/" + pool));
        assertEquals("thin-pool", fields.get(0));
        assertEquals('a', fields.get(1).charAt(4), "lv_attr " + fields.get(1) + " says not active");
    }

    @Test
    void aThinVolumeTakesAFileSystemAndMounts() throws IOException {
        Path device = createThin(FS_VOLUME, "512m");
        // ext4 is a module of this kernel: the mount proves that the kernel finds its modules by itself.
        ok("mkfs.ext4", "-q", device.toString());
        Path mountPoint = Files.createDirectories(Path.of("/run/qemu-node-check"));
        ok("mount", device.toString(), mountPoint.toString());
        try {
            Files.writeString(mountPoint.resolve("written"), "in the qemu node\n");
            ok("sync");
            assertEquals("in the qemu node\n", Files.readString(mountPoint.resolve("written")));
        } finally {
            ok("umount", mountPoint.toString());
        }
    }

    @Test
    void ioMaxHoldsForAContainerBelowAPodCgroup() throws IOException {
        Pod pod = GuestPods.create(QosClass.BURSTABLE);
        try {
            // What the driver does at NodePublishVolume: io on down to the pod cgroup, the cap on the pod.
            enableIoDownTo(pod.cgroup());
            Files.writeString(pod.cgroup().resolve("io.max"), ioDeviceNumber + " wiops=" + CAP_IOPS);

            Rate capped = GuestPods.fio(pod, "write", randomWrites());

            record("capped_write_iops", capped.iops());
            assertTrue(capped.iops() >= CAP_IOPS * 0.95 && capped.iops() <= CAP_IOPS * 1.05,
                    "io.max wiops=" + CAP_IOPS + " on the pod cgroup: fio in its container wrote " + capped.iops() + " IOPS");
        } finally {
            GuestPods.remove(pod);
        }
    }

    @Test
    void withoutACapTheDiskGivesAboutWhatQemuAllows() throws IOException {
        int throttle = GuestEnv.diskIops().orElseThrow(() -> new AssertionError("the guest's disk is not throttled"));
        Pod pod = GuestPods.create(QosClass.BESTEFFORT);
        try {
            Rate free = GuestPods.fio(pod, "write", randomWrites());

            record("uncapped_write_iops", free.iops());
            record("disk_iops_throttle", throttle);
            // Measured, not a tight bound: above any cap the other test sets, and qemu's throttle (with
            // its short bursts) above it.
            assertTrue(free.iops() > CAP_IOPS * 1.3, "without io.max, more than the cap: " + free.iops() + " IOPS");
            assertTrue(free.iops() <= throttle * 1.15, "qemu throttles the disk to " + throttle + " IOPS: " + free.iops());
        } finally {
            GuestPods.remove(pod);
        }
    }

    /**
     * fio's 4k direct random writes over the region written beforehand, measured for 5 s after 1 s of
     * ramp, 16 in flight: with one at a time (psync) the cap's timer, late under emulation, lets through
     * only about 90 of 100 IOPS, and the emulated CPU rather than the disk limits the uncapped rate.
     */
    private static List<String> randomWrites() {
        return List.of("--filename=" + ioDevice, "--rw=randwrite", "--bs=4k", "--size=" + REGION_MIB + "M",
                "--direct=1", "--ioengine=libaio", "--iodepth=16", "--time_based", "--runtime=5", "--ramp_time=1");
    }

    private static Path createThin(String name, String size) {
        String vg = GuestEnv.volumeGroup();
        String pool = GuestEnv.thinPool().orElseThrow(() -> new AssertionError("the guest has no thin pool"));
        ok("lvm", "lvcreate", "-q", "-y", "-V", size, "-T", vg + "/" + pool, "-n", name);
        return Path.of("/dev", vg, name);
    }

    /** +io in the subtree_control of every cgroup from the root down to the given one's parent. */
    private static void enableIoDownTo(Path cgroup) throws IOException {
        Path root = GuestEnv.cgroupRoot();
        List<Path> chain = new ArrayList<>();
        for (Path p = cgroup.getParent(); p.startsWith(root); p = p.getParent()) {
            chain.addFirst(p);
            if (p.equals(root)) {
                break;
            }
        }
        for (Path p : chain) {
            if (!words(Files.readString(p.resolve("cgroup.subtree_control"))).contains("io")) {
                Files.writeString(p.resolve("cgroup.subtree_control"), "+io");
            }
        }
    }

    private static void record(String key, double value) throws IOException {
        String line = "%s=%.1f%n".formatted(key, value);
        System.out.print(line);
        Files.writeString(GuestEnv.outDir().resolve("qemu-node.txt"), line, StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    private static List<String> words(String text) {
        return Arrays.stream(text.strip().split("\\s+")).filter(word -> !word.isEmpty()).toList();
    }
}
