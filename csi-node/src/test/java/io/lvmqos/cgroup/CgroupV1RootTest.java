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
 */
class CgroupV1RootTest {

    static final Path CGROUP_ROOT = Path.of("/sys/fs/cgroup");
    static final String POD_UID = UUID.randomUUID().toString();

    @TempDir
    Path dir;
    final List<LoopDevice> loops = new ArrayList<>();
    final CgroupLimitsWriter writer = new CgroupLimitsWriter(CGROUP_ROOT);
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
            if (testRoot != null && Files.isDirectory(testRoot)) {
                // Children first; cgroupfs directories are removed with rmdir, their files never.
                for (Path cgroup : List.of(testRoot.resolve("kubepods/besteffort/pod" + POD_UID),
                        testRoot.resolve("kubepods/besteffort"), testRoot.resolve("kubepods"), testRoot)) {
                    Files.deleteIfExists(cgroup);
                }
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

    @Test
    void theKernelThrottlesAProcessInThePodCgroup() throws Exception {
        LoopDevice loop = loops.get(0);
        writer.apply(pod, loop.number(), new IoLimits(OptionalLong.empty(), OptionalLong.of(1L << 20),
                OptionalLong.empty(), OptionalLong.empty()));
        // The shell puts itself in the cgroup, then becomes dd, so every write is charged there.
        Process dd = new ProcessBuilder("/bin/sh", "-c",
                "echo $$ > \"$1/cgroup.procs\" && exec dd if=/dev/zero of=\"$2\" bs=1M count=3 oflag=direct",
                "sh", pod.toString(), loop.path().toString()).redirectErrorStream(true).start();
        long started = System.nanoTime();
        assertTrue(dd.waitFor(30, TimeUnit.SECONDS), "dd finished");
        double seconds = (System.nanoTime() - started) / 1e9;
        String output = new String(dd.getInputStream().readAllBytes());
        assertEquals(0, dd.exitValue(), output);
        System.out.printf("3 MiB of direct writes under wbps=1MiB/s took %.2f s%n", seconds);
        assertTrue(seconds > 1.5, "throttled to about 1 MiB/s, took " + seconds + " s: " + output);
        writer.remove(pod, loop.number());
    }

    @Test
    void aDeviceThatDoesNotExistIsAnError() {
        assertThrows(DriverException.class, () -> writer.apply(pod, new DeviceNumber(7, 1048000),
                new IoLimits(OptionalLong.of(1), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty())));
    }
}
