package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.device.LoopDevice;
import io.lvmqos.device.RootRequired;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoLimits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * cgroup v1 blkio throttling on the host kernel, in a private subtree of the host's blkio
 * hierarchy laid out like kubelet's cgroupfs driver. Needs root and a v1 blkio mount at
 * /sys/fs/cgroup/blkio (this machine kind has one; cgroup v2 io runs in the UML tests).
 * Workloads run in container cgroups below the pod cgroup, as kubelet runs them, because v1
 * blk-throttle is not hierarchical: a limit on the pod cgroup alone holds for no container.
 */
class CgroupV1RootTest {

    static final Path CGROUP_ROOT = Path.of("/sys/fs/cgroup");
    static final String POD_UID = UUID.randomUUID().toString();

    @TempDir
    Path dir;
    final List<LoopDevice> loops = new ArrayList<>();
    final CgroupLimitsWriter writer = CgroupLimitsWriters.forNode(CGROUP_ROOT);
    final ContainerCgroupWatcher watcher = new ContainerCgroupWatcher(writer::copyPodLimits);
    Path testRoot;
    Path pod;

    @BeforeEach
    void createPodCgroup() throws IOException {
        RootRequired.check();
        assertEquals(CgroupMode.V1, CgroupMode.detect(CGROUP_ROOT), "this machine's blkio is on cgroup v1");
        String parent = "lvmqos-test-" + UUID.randomUUID();
        testRoot = CGROUP_ROOT.resolve("blkio").resolve(parent);
        Path created = Files.createDirectories(testRoot.resolve("kubepods/besteffort/pod" + POD_UID));
        pod = new PodCgroups(CGROUP_ROOT).require(POD_UID);
        assertEquals(created, pod);
        loops.add(LoopDevice.create(dir, "a", 64L << 20));
        loops.add(LoopDevice.create(dir, "b", 64L << 20));
    }

    @AfterEach
    void removeEverything() throws IOException {
        try {
            watcher.close();
            if (testRoot != null && Files.isDirectory(testRoot)) {
                // Children first; cgroupfs directories are removed with rmdir, their files never.
                List<Path> cgroups = new ArrayList<>(CgroupLimitsWriter.descendants(testRoot));
                for (Path cgroup : cgroups.reversed()) {
                    Files.deleteIfExists(cgroup);
                }
                Files.deleteIfExists(testRoot);
            }
        } finally {
            for (LoopDevice loop : loops) {
                loop.close();
            }
        }
    }

    @Test
    void appliesReadsBackAndRemovesLimitsPerDevice() throws IOException {
        DeviceNumber a = loops.get(0).number();
        DeviceNumber b = loops.get(1).number();
        IoLimits limitsA = new IoLimits(OptionalLong.of(4194304), OptionalLong.of(2097152), OptionalLong.empty(),
                OptionalLong.of(200));
        IoLimits limitsB = new IoLimits(OptionalLong.empty(), OptionalLong.empty(), OptionalLong.of(1000),
                OptionalLong.empty());

        writer.apply(pod, a, limitsA);
        writer.apply(pod, b, limitsB);

        assertTrue(Files.readString(pod.resolve("blkio.throttle.read_bps_device")).contains(a + " 4194304"));
        assertTrue(Files.readString(pod.resolve("blkio.throttle.write_bps_device")).contains(a + " 2097152"));
        assertTrue(Files.readString(pod.resolve("blkio.throttle.write_iops_device")).contains(a + " 200"));
        assertTrue(Files.readString(pod.resolve("blkio.throttle.read_iops_device")).contains(b + " 1000"));
        assertEquals(Optional.of(limitsA), writer.read(pod, a), "the second device's limits left the first alone");
        assertEquals(Optional.of(limitsB), writer.read(pod, b));

        IoLimits changed = new IoLimits(OptionalLong.empty(), OptionalLong.of(1048576), OptionalLong.empty(),
                OptionalLong.empty());
        writer.apply(pod, a, changed);
        assertEquals(Optional.of(changed), writer.read(pod, a), "directions no longer limited were cleared");

        writer.remove(pod, a);
        assertEquals(Optional.empty(), writer.read(pod, a));
        assertEquals(Optional.of(limitsB), writer.read(pod, b));
        for (BlkioThrottle file : BlkioThrottle.values()) {
            assertTrue(!Files.readString(pod.resolve(file.file)).contains(a + " "), file.file);
        }
        writer.remove(pod, a);
    }

    /** A container ID as containerd makes them: 64 hex digits. */
    static String containerId() {
        return (UUID.randomUUID().toString() + UUID.randomUUID()).replace("-", "");
    }

    /** Waits (up to 2 s) for the watcher to have written the pod's line into the container cgroup. */
    static boolean awaitLine(Path cgroup, DeviceNumber device) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() < deadline) {
            if (Files.readString(cgroup.resolve("blkio.throttle.write_bps_device")).contains(device + " ")) {
                return true;
            }
            Thread.sleep(0, 200_000);
        }
        return false;
    }

    /** Runs dd with direct writes in the cgroup; answers how long it took, in seconds. */
    static double ddIn(Path cgroup, Path device, int mebibytes) throws Exception {
        // The shell puts itself in the cgroup, then becomes dd, so every write is charged there.
        Process dd = new ProcessBuilder("/bin/sh", "-c",
                "echo $$ > \"$1/cgroup.procs\" && exec dd if=/dev/zero of=\"$2\" bs=1M count=" + mebibytes
                        + " oflag=direct", "sh", cgroup.toString(), device.toString()).redirectErrorStream(true).start();
        long started = System.nanoTime();
        assertTrue(dd.waitFor(60, TimeUnit.SECONDS), "dd finished");
        double seconds = (System.nanoTime() - started) / 1e9;
        String output = new String(dd.getInputStream().readAllBytes());
        assertEquals(0, dd.exitValue(), output);
        return seconds;
    }

    @Test
    void aContainerCgroupMadeAfterTheLimitIsThrottledAndCountedInThePodsRecursiveStats() throws Exception {
        LoopDevice loop = loops.get(0);
        Path before = Files.createDirectory(pod.resolve(containerId())); // the pause container, say
        watcher.watch(pod);
        writer.apply(pod, loop.number(), new IoLimits(OptionalLong.empty(), OptionalLong.of(1L << 20),
                OptionalLong.empty(), OptionalLong.empty()));
        assertTrue(Files.readString(before.resolve("blkio.throttle.write_bps_device"))
                .contains(loop.number() + " 1048576"), "a container that existed at publish got the line");

        Path container = Files.createDirectory(pod.resolve(containerId()));
        assertTrue(awaitLine(container, loop.number()), "the watcher wrote the pod's line into the new container");
        double seconds = ddIn(container, loop.path(), 3);
        System.out.printf("3 MiB of direct writes in a container cgroup under wbps=1MiB/s took %.2f s%n", seconds);
        assertTrue(seconds > 1.5, "throttled to about 1 MiB/s, took " + seconds + " s");

        String recursive = Files.readString(pod.resolve("blkio.throttle.io_service_bytes_recursive"));
        String own = Files.readString(pod.resolve("blkio.throttle.io_service_bytes"));
        assertTrue(recursive.contains(loop.number() + " Write " + (3L << 20)),
                "the pod's recursive counter holds the container's writes: " + recursive);
        assertTrue(!own.contains(loop.number() + " Write " + (3L << 20)),
                "the pod's own counter does not, which is why the metrics read the recursive one: " + own);

        writer.remove(pod, loop.number());
        for (Path cgroup : List.of(pod, before, container)) {
            assertTrue(!Files.readString(cgroup.resolve("blkio.throttle.write_bps_device")).contains(loop.number() + " "),
                    "lifted in " + cgroup);
        }
        seconds = ddIn(container, loop.path(), 3);
        assertTrue(seconds < 1.5, "unthrottled after the lift, took " + seconds + " s");
    }

    /**
     * The window in which a v1 container cgroup has no limit yet: from its mkdir to the moment
     * its throttle file holds the pod's line, over 200 container cgroups. docs/benchmarks.md quotes it.
     */
    @Test
    void theWindowBetweenAContainerCgroupAppearingAndItsLimitOver200Containers() throws Exception {
        LoopDevice loop = loops.get(0);
        watcher.watch(pod);
        writer.apply(pod, loop.number(), new IoLimits(OptionalLong.empty(), OptionalLong.of(4L << 20),
                OptionalLong.empty(), OptionalLong.of(200)));
        int rounds = 200;
        long[] micros = new long[rounds];
        for (int i = 0; i < rounds; i++) {
            Path container = pod.resolve(containerId());
            long made = System.nanoTime();
            Files.createDirectory(container);
            while (!Files.readString(container.resolve("blkio.throttle.write_iops_device")).contains(loop.number() + " ")) {
                assertTrue(System.nanoTime() - made < TimeUnit.SECONDS.toNanos(2), "no limit after 2 s in " + container);
                Thread.onSpinWait();
            }
            micros[i] = (System.nanoTime() - made) / 1000;
            Files.delete(container);
        }
        java.util.Arrays.sort(micros);
        String line = String.format("cgroup v1 container limit window over %d container cgroups: p50 %.2f ms, p99 %.2f ms,"
                + " max %.2f ms", rounds, micros[rounds / 2] / 1e3, micros[(int) (rounds * 0.99) - 1] / 1e3,
                micros[rounds - 1] / 1e3);
        System.out.println(line);
        Path report = Path.of("target", "container-window.txt");
        Files.writeString(report, line + "\n");
        writer.remove(pod, loop.number());
    }

    @Test
    void aDeviceThatDoesNotExistIsAnError() {
        assertThrows(DriverException.class, () -> writer.apply(pod, new DeviceNumber(7, 1048000),
                new IoLimits(OptionalLong.of(1), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty())));
    }
}
