package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.errors.DriverException;
import io.lvmqos.mount.HostPath;
import io.lvmqos.mount.KubeletPaths;
import io.lvmqos.mount.MountEntry;
import io.lvmqos.mount.MountTable;
import io.lvmqos.mount.Mounter;
import io.lvmqos.mount.PinnedMount;
import io.lvmqos.mount.StatMount;
import io.lvmqos.mount.UnmountOutcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The two ways the node plugin finds one mount, on a kernel that has both: statmount(2) by the
 * unique id statx reads from a pinned descriptor, and the line of /proc/self/mountinfo by the
 * fdinfo id (the fallback of kernels before 6.8, forced here with {@code lvmqos.mountinfo=procfs}).
 * Both must read the same line for every kind of mount a publish makes or meets, and both must
 * refuse an unmount when another mount took the pinned one's place.
 */
public class MountLookupCheck {

    private static final Path KUBELET = Path.of("/run/lookup-kubelet");
    private static final Path SOURCE = Path.of("/run/lookup-source");
    private static final Path VOLUMES = KUBELET.resolve("pods/uid/volumes/kubernetes.io~csi");

    private static MountTable byStatmount;
    private static MountTable byMountinfo;
    private static KubeletPaths paths;

    @BeforeAll
    static void layOut() throws Exception {
        GuestEnv.assumeInGuest();
        Files.createDirectories(KUBELET);
        Files.createDirectories(SOURCE);
        ok("mount", "-t", "tmpfs", "-o", "size=4m", "lookup-kubelet", KUBELET.toString());
        ok("mount", "--make-rshared", KUBELET.toString());
        ok("mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "lookup-source", SOURCE.toString());
        byStatmount = new MountTable();
        System.setProperty(StatMount.PROPERTY, "procfs");
        try {
            byMountinfo = new MountTable();
        } finally {
            System.clearProperty(StatMount.PROPERTY);
        }
        paths = new KubeletPaths(KUBELET, "lvmqos.csi.io");
    }

    @AfterAll
    static void cleanUp() {
        ok("umount", "-R", KUBELET.toString());
        ok("umount", SOURCE.toString());
    }

    private static Path target(String name) throws Exception {
        return Files.createDirectories(VOLUMES.resolve(name).resolve("mount"));
    }

    @Test
    void thisKernelHasStatmountAndThePropertyTurnsItOff() {
        assertEquals("statmount", byStatmount.lookup(), "kernel " + System.getProperty("os.version"));
        assertEquals("mountinfo", byMountinfo.lookup());
    }

    @Test
    void bothReadTheSameLineOfEveryKindOfMount() throws Exception {
        Mounter mounter = Mounter.create(byStatmount, paths);
        Path rw = target("rw");
        mounter.bindMount(new HostPath(SOURCE), rw, false);
        Path ro = target("read only");
        mounter.bindMount(new HostPath(SOURCE), ro, true);
        Path flagged = target("flags");
        ok("mount", "-t", "tmpfs", "-o", "size=2m,nosuid,nodev,noexec,noatime,nodiratime", "lookup flags",
                flagged.toString());
        Path slave = target("slave");
        ok("mount", "-t", "tmpfs", "-o", "size=1m,strictatime", "lookup-slave", slave.toString());
        ok("mount", "--make-slave", slave.toString());
        Path stacked = target("stacked");
        mounter.bindMount(new HostPath(SOURCE), stacked, false);
        ok("mount", "-t", "tmpfs", "-o", "size=1m", "lookup-stacked", stacked.toString());
        for (Path path : List.of(rw, ro, flagged, slave, stacked)) {
            MountEntry fast = pinned(byStatmount, path);
            MountEntry slow = pinned(byMountinfo, path);
            assertEquals(slow, fast, "the line of the mount at " + path);
            assertEquals(byMountinfo.at(path).orElseThrow(), slow, "mountinfo's top line at " + path);
        }
        assertTrue(pinned(byStatmount, ro).readOnly());
        assertEquals(List.of("rw", "nosuid", "nodev", "noexec", "noatime", "nodiratime"),
                pinned(byStatmount, flagged).options());
        assertEquals("lookup flags", pinned(byStatmount, flagged).source());
    }

    @Test
    void bothRefuseToUnmountAMountThatTookThePinnedOnesPlace() throws Exception {
        for (MountTable table : List.of(byStatmount, byMountinfo)) {
            Mounter mounter = Mounter.create(table, paths);
            Path path = target("swap-" + table.lookup());
            mounter.bindMount(new HostPath(SOURCE), path, false);
            long pinnedId;
            try (PinnedMount pinned = mounter.pin(path).orElseThrow()) {
                pinnedId = pinned.id();
            }
            mounter.bindMount(new HostPath(SOURCE), path, false);
            var refused = assertThrows(DriverException.FailedPrecondition.class,
                    () -> mounter.unmount(path, OptionalLong.of(pinnedId)), table.lookup());
            assertTrue(refused.getMessage().contains("changed while it was being unmounted"), refused.getMessage());
            assertEquals(2, byMountinfo.read().stream().filter(m -> m.mountPoint().equals(path)).count(),
                    table.lookup() + ": nothing unmounted");
            assertEquals(UnmountOutcome.UNMOUNTED, mounter.unmount(path));
            assertEquals(UnmountOutcome.UNMOUNTED, mounter.unmount(path, OptionalLong.of(pinnedId)));
            assertEquals(Optional.empty(), mounter.pin(path), table.lookup() + ": nothing left");
            assertEquals(UnmountOutcome.NOT_A_MOUNT_POINT, mounter.unmount(path));
        }
    }

    private static MountEntry pinned(MountTable table, Path path) {
        try (PinnedMount mount = Mounter.create(table, paths).pin(path).orElseThrow()) {
            return mount.entry();
        }
    }
}
