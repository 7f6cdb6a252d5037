package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoLimits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The writer's own logic against a directory laid out like cgroupfs. Plain files do not merge
 * per-device lines as the kernel does; the root tests and the UML tests cover that.
 */
class CgroupLimitsWriterTest {

    static final DeviceNumber LV = new DeviceNumber(253, 4);
    static final IoLimits LIMITS = new IoLimits(OptionalLong.of(4194304), OptionalLong.of(2097152),
            OptionalLong.empty(), OptionalLong.of(200));

    @TempDir
    Path root;

    private Path v2Pod() throws IOException {
        Files.writeString(root.resolve("cgroup.controllers"), "cpuset cpu io memory pids\n");
        Files.writeString(root.resolve("cgroup.subtree_control"), "cpu memory pids\n");
        Path kubepods = Files.createDirectories(root.resolve("kubepods.slice"));
        Files.writeString(kubepods.resolve("cgroup.controllers"), "cpu memory pids\n");
        Files.writeString(kubepods.resolve("cgroup.subtree_control"), "cpu memory pids\n");
        Path burstable = Files.createDirectories(kubepods.resolve("kubepods-burstable.slice"));
        Files.writeString(burstable.resolve("cgroup.controllers"), "cpu io memory pids\n");
        Files.writeString(burstable.resolve("cgroup.subtree_control"), "cpu io memory pids\n");
        Path pod = Files.createDirectories(burstable.resolve("kubepods-burstable-pod1234_abcd.slice"));
        Files.writeString(pod.resolve("io.max"), "");
        return pod;
    }

    @Test
    void v2WritesOneLineAndLeavesTheAncestorsAloneWhereThePodHasIoMax() throws IOException {
        Path pod = v2Pod();
        CgroupLimitsWriters.forNode(root).apply(pod, LV, LIMITS);
        assertEquals("253:4 rbps=4194304 wbps=2097152 riops=max wiops=200", Files.readString(pod.resolve("io.max")));
        assertEquals(Optional.of(LIMITS), CgroupLimitsWriters.forNode(root).read(pod, LV));
        assertEquals("cpu memory pids\n", Files.readString(root.resolve("cgroup.subtree_control")),
                "io.max was there: no ancestor is read or written");
    }

    /**
     * A pod cgroup without io.max: io is turned on from the root down. A plain directory cannot
     * make io.max appear as the kernel does, so the second write fails here; the UML node tests
     * cover the kernel's side.
     */
    @Test
    void v2EnablesIoInAncestorsThatLackItWhereThePodHasNoIoMax() throws IOException {
        Path pod = v2Pod();
        Files.delete(pod.resolve("io.max"));
        var e = assertThrows(DriverException.Unavailable.class,
                () -> CgroupLimitsWriters.forNode(root).apply(pod, LV, LIMITS));
        assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
        assertEquals("+io", Files.readString(root.resolve("cgroup.subtree_control")));
        assertEquals("+io", Files.readString(root.resolve("kubepods.slice/cgroup.subtree_control")));
        assertEquals("cpu io memory pids\n",
                Files.readString(pod.getParent().resolve("cgroup.subtree_control")), "already enabled: untouched");
    }

    @Test
    void v2WithoutTheIoControllerIsUnavailable() throws IOException {
        Path pod = v2Pod();
        Files.writeString(root.resolve("cgroup.controllers"), "cpu memory pids\n");
        Files.delete(pod.resolve("io.max")); // as the kernel has it: no io anywhere, no io.max
        var e = assertThrows(DriverException.Unavailable.class, () -> CgroupLimitsWriters.forNode(root).apply(pod, LV, LIMITS));
        assertTrue(e.getMessage().contains("io controller"), e.getMessage());
    }

    @Test
    void aFailedWriteIsAnError() throws IOException {
        Path pod = v2Pod();
        Files.delete(pod.resolve("io.max"));
        Files.createDirectory(pod.resolve("io.max"));
        assertThrows(DriverException.class, () -> CgroupLimitsWriters.forNode(root).apply(pod, LV, LIMITS));
    }

    @Test
    void v1WritesTheFourThrottleFiles() throws IOException {
        Path pod = Files.createDirectories(root.resolve("blkio/kubepods/burstable/pod1234-abcd"));
        for (BlkioThrottle file : BlkioThrottle.values()) {
            Files.writeString(root.resolve("blkio").resolve(file.file), "");
            Files.writeString(pod.resolve(file.file), "");
        }
        CgroupLimitsWriters.forNode(root).apply(pod, LV, LIMITS);
        assertEquals("253:4 4194304", Files.readString(pod.resolve("blkio.throttle.read_bps_device")));
        assertEquals("253:4 2097152", Files.readString(pod.resolve("blkio.throttle.write_bps_device")));
        assertEquals("253:4 0", Files.readString(pod.resolve("blkio.throttle.read_iops_device")));
        assertEquals("253:4 200", Files.readString(pod.resolve("blkio.throttle.write_iops_device")));
    }

    private Path v1Cgroup(Path dir) throws IOException {
        Files.createDirectories(dir);
        for (BlkioThrottle file : BlkioThrottle.values()) {
            Files.writeString(dir.resolve(file.file), "");
        }
        return dir;
    }

    @Test
    void v1WritesThePodsLimitsIntoEveryContainerCgroupBelowItAndLiftsThemThere() throws IOException {
        v1Cgroup(root.resolve("blkio"));
        Path pod = v1Cgroup(root.resolve("blkio/kubepods/burstable/pod1234-abcd"));
        Path pause = v1Cgroup(pod.resolve("aaaa"));
        Path app = v1Cgroup(pod.resolve("bbbb"));
        CgroupLimitsWriter writer = CgroupLimitsWriters.forNode(root);
        writer.apply(pod, LV, LIMITS);
        for (Path container : java.util.List.of(pause, app)) {
            assertEquals("253:4 2097152", Files.readString(container.resolve("blkio.throttle.write_bps_device")));
            assertEquals("253:4 200", Files.readString(container.resolve("blkio.throttle.write_iops_device")));
        }
        assertTrue(!writer.limitedDevices(pod).isEmpty());
        writer.remove(pod, LV);
        for (Path cgroup : java.util.List.of(pod, pause, app)) {
            assertEquals("253:4 0", Files.readString(cgroup.resolve("blkio.throttle.write_bps_device")), "lifted in " + cgroup);
        }
    }

    @Test
    void v1CopiesThePodsLinesIntoAContainerCgroupMadeLater() throws IOException {
        v1Cgroup(root.resolve("blkio"));
        Path pod = v1Cgroup(root.resolve("blkio/kubepods/pod1234-abcd"));
        Files.writeString(pod.resolve("blkio.throttle.write_bps_device"), "253:4 4194304\n");
        Files.writeString(pod.resolve("blkio.throttle.read_iops_device"), "253:4 200\n");
        Path later = v1Cgroup(pod.resolve("cccc"));
        CgroupLimitsWriters.forNode(root).copyPodLimits(pod, later);
        assertEquals("253:4 4194304", Files.readString(later.resolve("blkio.throttle.write_bps_device")));
        assertEquals("253:4 200", Files.readString(later.resolve("blkio.throttle.read_iops_device")));
        assertEquals("", Files.readString(later.resolve("blkio.throttle.read_bps_device")), "no line the pod lacks");
        CgroupLimitsWriters.forNode(root).copyPodLimits(pod, pod.resolve("gone")); // a container that already ended
    }

    @Test
    void theWatcherReportsADirectoryMadeBelowAWatchedPodAndBelowThat() throws Exception {
        Path pod = Files.createDirectories(root.resolve("pod"));
        java.util.concurrent.BlockingQueue<Path> made = new java.util.concurrent.LinkedBlockingQueue<>();
        try (ContainerCgroupWatcher watcher = new ContainerCgroupWatcher((p, child) -> {
            assertEquals(pod, p);
            made.add(child);
        })) {
            watcher.watch(pod);
            Path container = Files.createDirectory(pod.resolve("ctr"));
            assertEquals(container, made.poll(5, java.util.concurrent.TimeUnit.SECONDS));
            Path nested = Files.createDirectory(container.resolve("nested"));
            assertEquals(nested, made.poll(5, java.util.concurrent.TimeUnit.SECONDS));
            watcher.unwatch(pod);
            Path after = Files.createDirectory(pod.resolve("after"));
            // a cgroup made just after its parent was registered is reported twice, by the scan below
            // the parent and by the parent's own event; copying the pod's lines twice is harmless, so
            // only a report of a directory made after unwatch is wrong
            for (Path late = made.poll(300, java.util.concurrent.TimeUnit.MILLISECONDS); late != null;
                    late = made.poll(300, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                assertNotEquals(after, late, "no longer watched");
                assertEquals(nested, late, "only a repeat of a report already made");
            }
        }
    }

    @Test
    void aPodCgroupOutsideTheHierarchyIsRefused(@TempDir Path elsewhere) throws IOException {
        v2Pod();
        assertThrows(DriverException.InvalidArgument.class,
                () -> CgroupLimitsWriters.forNode(root).apply(elsewhere, LV, LIMITS));
        assertThrows(DriverException.InvalidArgument.class,
                () -> CgroupLimitsWriters.forNode(root).apply(root, LV, LIMITS));
        assertThrows(DriverException.InvalidArgument.class,
                () -> CgroupLimitsWriters.forNode(root).apply(root.resolve("kubepods.slice/../x"), LV, LIMITS));
    }

    @Test
    void removingFromAPodCgroupThatIsGoneIsFine() throws IOException {
        Path pod = v2Pod();
        Files.delete(pod.resolve("io.max"));
        Files.delete(pod);
        CgroupLimitsWriters.forNode(root).remove(pod, LV);
    }
}
