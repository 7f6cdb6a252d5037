package io.lvmqos.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.CommandRunner;
import io.lvmqos.mount.MountOptions;
import io.lvmqos.mount.KubeletPaths;
import io.lvmqos.mount.MountTable;
import io.lvmqos.mount.Mounter;
import io.lvmqos.mount.PathMounter;
import io.lvmqos.mount.PinnedMount;
import io.lvmqos.mount.UnmountOutcome;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** mkfs, mount and online grow on real loop devices. Needs root. */
class FilesystemsRootTest {

    // mkfs.xfs 5.19 and later refuse filesystems under 300 MiB.
    static final long SMALL = 320L << 20;
    static final long LARGE = 512L << 20;

    @TempDir
    Path dir;
    final CommandRunner runner = new CommandRunner();
    final Filesystems filesystems = new Filesystems(runner);
    final PathMounter mounter = PathMounter.create();
    LoopDevice loop;
    Path mountPoint;

    @BeforeEach
    void attach() throws IOException {
        RootRequired.check();
        loop = LoopDevice.create(dir, "fs", SMALL);
        mountPoint = Files.createDirectory(dir.resolve("mnt"));
    }

    @AfterEach
    void cleanUp() throws IOException {
        try {
            if (mountPoint != null) {
                while (mounter.unmount(mountPoint) == UnmountOutcome.UNMOUNTED) {
                    // unmount everything stacked there
                }
            }
        } finally {
            if (loop != null) {
                loop.close();
            }
        }
    }

    @Test
    void formatsMountsAndGrowsExt4Online() throws IOException {
        if (!hasCapSysResource()) {
            // Root in a container without CAP_SYS_RESOURCE (this machine kind): the kernel refuses the
            // online-resize ioctl, and the driver must say why instead of failing obscurely.
            var e = assertThrows(DriverException.FailedPrecondition.class, () -> formatMountAndGrow(FsType.EXT4));
            assertTrue(e.getMessage().contains("CAP_SYS_RESOURCE"), e.getMessage());
            System.out.println("ext4 online grow not provable here: no CAP_SYS_RESOURCE; the refusal was checked");
        } else {
            formatMountAndGrow(FsType.EXT4);
        }
        assertEquals("0", tune2fsReservedBlocks(), "ext4 is made without blocks reserved for root");
    }

    @Test
    void formatsMountsAndGrowsXfsOnline() throws IOException {
        formatMountAndGrow(FsType.XFS);
    }

    @Test
    void ext4OnAZeroedDeviceLeavesNoInodeTableOrJournalToZeroAndChecksClean() {
        filesystems.format(loop.path(), FsType.EXT4, Filesystems.Contents.ZEROED);
        String groups = LoopDevice.runOrFail(io.lvmqos.exec.Command.of(CommandRunner.locate("dumpe2fs"),
                java.time.Duration.ofSeconds(30), loop.path().toString())).stdout();
        List<String> groupLines = groups.lines().filter(l -> l.matches("Group [0-9]+: .*")).toList();
        assertTrue(groupLines.size() >= 2, groups);
        // every group's inode table is marked zeroed: the kernel's lazy init has nothing to write
        assertTrue(groupLines.stream().allMatch(l -> l.contains("ITABLE_ZEROED")), String.join("\n", groupLines));
        var fsck = new CommandRunner().run(io.lvmqos.exec.Command.of(CommandRunner.locate("e2fsck"),
                java.time.Duration.ofSeconds(60), "-f", "-n", loop.path().toString()));
        assertEquals(0, fsck.exitCode(), fsck.stdout() + fsck.diagnostic());
    }

    /**
     * An mke2fs older than 1.47 answers {@code -E assume_storage_prezeroed=1} as e2fsprogs does for
     * any unknown extended option, before it writes anything; the format is then made again without
     * it. A stand-in mke2fs that answers so (and records each command line) shows both calls.
     */
    @Test
    void anMke2fsThatDoesNotKnowPrezeroedFormatsWithoutIt() throws IOException {
        Filesystems old = withStandInMkfsExt4("case \"$*\" in *assume_storage_prezeroed*) printf '\\nBad option(s)"
                + " specified: assume_storage_prezeroed\\n' >&2; exit 1;; esac\nexit 0\n");

        old.format(loop.path(), FsType.EXT4, Filesystems.Contents.ZEROED);

        List<String> lines = Files.readAllLines(dir.resolve("calls"));
        assertEquals(List.of("-q -m 0 -E assume_storage_prezeroed=1 -- " + loop.path(), "-q -m 0 -- " + loop.path()),
                lines);
    }

    @Test
    void anMke2fsFailureForAnotherReasonIsNotRetried() throws IOException {
        Filesystems failing = withStandInMkfsExt4("echo 'Device size reported to be zero' >&2\nexit 1\n");

        var e = assertThrows(DriverException.Internal.class,
                () -> failing.format(loop.path(), FsType.EXT4, Filesystems.Contents.ZEROED));
        assertTrue(e.getMessage().contains("Device size reported to be zero"), e.getMessage());
        assertEquals(1, Files.readAllLines(dir.resolve("calls")).size(), "one attempt");
    }

    /** Filesystems whose mkfs.ext4 is a shell script: it appends its arguments to {@code calls}, then runs {@code body}. */
    private Filesystems withStandInMkfsExt4(String body) throws IOException {
        Path bin = Files.createDirectory(dir.resolve("stand-in-bin"));
        Path mkfs = bin.resolve("mkfs.ext4");
        Files.writeString(mkfs, "#!/bin/sh\necho \"$*\" >> " + dir.resolve("calls") + "\n" + body);
        Files.setPosixFilePermissions(mkfs, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        return new Filesystems(runner, java.time.Duration.ofSeconds(30), bin::resolve);
    }

    @Test
    void xfsIsNeverMadeOverAnExistingFilesystem() {
        filesystems.format(loop.path(), FsType.EXT4);
        var e = assertThrows(DriverException.Internal.class, () -> filesystems.format(loop.path(), FsType.XFS));
        assertTrue(e.getMessage().contains("existing filesystem"), e.getMessage());
    }

    @Test
    void growingAFilesystemMountedFromAnotherDeviceIsRefused() throws IOException {
        filesystems.format(loop.path(), FsType.EXT4);
        // a tmpfs where the volume should be: the pinned mount is not the device's
        mounter.mount(Path.of("tmpfs"), mountPoint, "tmpfs", java.util.Set.of(), "size=1m");
        try (PinnedMount other = pin()) {
            var e = assertThrows(DriverException.FailedPrecondition.class,
                    () -> filesystems.grow(loop.path(), other.mounted(), FsType.EXT4));
            assertTrue(e.getMessage().contains("must be mounted there"), e.getMessage());
        }
    }

    /** The mount on the mount point, pinned through the temporary directory as a kubelet directory would be. */
    private PinnedMount pin() {
        return Mounter.create(new MountTable(), new KubeletPaths(dir)).pin(mountPoint.toAbsolutePath().normalize())
                .orElseThrow(() -> new AssertionError(mountPoint + " is a mount point"));
    }

    private void formatMountAndGrow(FsType type) throws IOException {
        filesystems.format(loop.path(), type);
        assertEquals(new DeviceContents.Filesystem(type.kernelName()), BlockDeviceProbe.onThisHost(runner).probe(loop.path()));

        mounter.mount(loop.path(), mountPoint, type, MountOptions.parse(List.of("noatime")));
        var entry = new MountTable().at(mountPoint).orElseThrow();
        assertEquals(loop.number(), entry.device());
        assertEquals(type.kernelName(), entry.fsType());
        assertTrue(entry.options().contains("noatime"), entry.options().toString());
        Files.writeString(mountPoint.resolve("data"), "kept across the grow");
        long before = Files.getFileStore(mountPoint).getTotalSpace();

        loop.grow(LARGE);
        assertEquals(LARGE, loop.sizeBytes());
        try (PinnedMount mount = pin()) {
            filesystems.grow(loop.path(), mount.mounted(), type);
        }

        long after = Files.getFileStore(mountPoint).getTotalSpace();
        assertTrue(after > before + (150L << 20), "grew from " + before + " to " + after + " bytes");
        assertEquals("kept across the grow", Files.readString(mountPoint.resolve("data")));
    }

    private static boolean hasCapSysResource() throws IOException {
        long effective = Files.readAllLines(Path.of("/proc/self/status")).stream()
                .filter(l -> l.startsWith("CapEff:")).map(l -> Long.parseUnsignedLong(l.substring(7).strip(), 16))
                .findFirst().orElseThrow();
        return (effective & (1L << 24)) != 0;
    }

    private String tune2fsReservedBlocks() {
        String out = LoopDevice.runOrFail(io.lvmqos.exec.Command.of(CommandRunner.locate("tune2fs"),
                java.time.Duration.ofSeconds(10), "-l", loop.path().toString())).stdout();
        return out.lines().filter(l -> l.startsWith("Reserved block count:")).map(l -> l.split(":")[1].strip())
                .findFirst().orElse("?");
    }
}
