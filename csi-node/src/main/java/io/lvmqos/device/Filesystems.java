package io.lvmqos.device;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Command;
import io.lvmqos.exec.CommandResult;
import io.lvmqos.exec.CommandRunner;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * mkfs and online grow for the supported filesystems.
 *
 * <p>{@link #format} is only for a device {@link BlockDeviceProbe} has just called blank; it is
 * never forced. mkfs.xfs without {@code -f} refuses a device with a signature on its own;
 * mke2fs without a terminal does not, so for ext4 the probe is the only guard.
 *
 * <p>ext4 is made with {@code -m 0}: the 5% reserved for root is meant to let root log in to a
 * full system disk; on a volume that one pod owns it only makes the volume smaller than the size
 * the user asked for. Lazy inode-table and journal initialisation stay on (mke2fs's default) so
 * that formatting a large volume fits inside an RPC deadline. xfs keeps mkfs.xfs's defaults.
 *
 * <p>A device that reads as zeros throughout ({@link Contents#ZEROED}: a new thin LV of a pool that
 * zeroes its new blocks) is made with {@code -E assume_storage_prezeroed=1} (e2fsprogs 1.47): mke2fs
 * then writes neither the journal's zeros nor leaves the inode tables to the kernel's lazy
 * initialisation, which would otherwise write zeros over every inode table after the first mount.
 * On a thin LV those zeros are not free: each one takes a block of the pool (about 1.6 GiB of
 * inode tables and 1 GiB of journal for a 100 GiB volume), and the writes run in the background
 * beside the pod's own I/O. An mke2fs older than the option refuses it; the format is then made
 * again without it.
 */
public final class Filesystems {

    private static final Duration TIMEOUT = Duration.ofMinutes(2);
    /** mke2fs's extended option for a device that reads as zeros (e2fsprogs 1.47). */
    private static final String PREZEROED = "assume_storage_prezeroed";

    private final CommandRunner runner;
    private final Duration timeout;
    private final Function<String, Path> programs;

    /** {@code programs} finds a tool by name; tests give it their own stand-ins. */
    Filesystems(CommandRunner runner, Duration timeout, Function<String, Path> programs) {
        this.runner = runner;
        this.timeout = timeout;
        this.programs = programs;
    }

    public Filesystems(CommandRunner runner, Duration timeout) {
        this(runner, timeout, CommandRunner::locate);
    }

    public Filesystems(CommandRunner runner) {
        this(runner, TIMEOUT);
    }

    /** What a device to be formatted holds besides no filesystem: anything, or zeros throughout. */
    public enum Contents {
        UNKNOWN, ZEROED
    }

    public void format(Path device, FsType type) {
        format(device, type, Contents.UNKNOWN);
    }

    public void format(Path device, FsType type, Contents contents) {
        DeviceNumber.of(device);
        Path mkfs = programs.apply("mkfs." + type.kernelName());
        CommandResult result = runner.run(Command.of(mkfs, timeout, arguments(device, type, contents)));
        if (!result.succeeded() && contents == Contents.ZEROED && type == FsType.EXT4
                && result.diagnostic().contains(PREZEROED)) {
            // an mke2fs before 1.47 does not know the option and wrote nothing: format as for any device
            result = runner.run(Command.of(mkfs, timeout, arguments(device, type, Contents.UNKNOWN)));
        }
        if (!result.succeeded()) {
            throw DriverException.internal("formatting " + device + " as " + type + " failed: "
                    + result.command().display() + " exited " + result.exitCode() + ": " + result.diagnostic());
        }
    }

    static List<String> arguments(Path device, FsType type, Contents contents) {
        return switch (type) {
            case EXT4 -> contents == Contents.ZEROED
                    ? List.of("-q", "-m", "0", "-E", PREZEROED + "=1", "--", device.toString())
                    : List.of("-q", "-m", "0", "--", device.toString());
            case XFS -> List.of("-q", "--", device.toString());
        };
    }

    /**
     * Grows the filesystem on {@code device}, mounted as {@code mount} says, to fill the device.
     * Both tools grow online; resize2fs would refuse an unmounted ext4 that has not just been
     * fsck'd, and xfs_growfs works only on a mount point, so the mount is required and checked.
     * xfs_growfs is given the mount's path for a child (a pinned descriptor's), so that it opens
     * that filesystem and no other, whatever a path's name leads to by then.
     */
    public void grow(Path device, MountedFilesystem mount, FsType type) {
        DeviceNumber number = DeviceNumber.of(device);
        Path mountPoint = mount.mountPoint();
        if (mount.deviceNode() || !mount.device().equals(number)) {
            throw DriverException.failedPrecondition("cannot grow " + device + " (" + number + "): "
                    + mountPoint + " is a mount of " + mount.device() + " " + mount.source()
                    + "; it must be mounted there to grow online");
        }
        List<String> args = new ArrayList<>();
        Path program = switch (type) {
            case EXT4 -> {
                args.addAll(List.of("--", device.toString()));
                yield programs.apply("resize2fs");
            }
            case XFS -> {
                args.addAll(List.of("-d", "--", mount.pathForChild()));
                yield programs.apply("xfs_growfs");
            }
        };
        CommandResult result = runner.run(Command.of(program, timeout, args));
        if (!result.succeeded() && type == FsType.EXT4
                && result.stderr().contains("Permission denied to resize filesystem")) {
            // EXT4_IOC_RESIZE_FS answers EPERM without CAP_SYS_RESOURCE, even to root.
            throw DriverException.failedPrecondition("growing the ext4 filesystem on " + device + " at " + mountPoint
                    + " was refused by the kernel: online ext4 resize needs CAP_SYS_RESOURCE, which the node"
                    + " plugin does not have (run its container privileged or add that capability)");
        }
        if (!result.succeeded()) {
            throw DriverException.internal("growing the " + type + " filesystem on " + device + " at " + mountPoint
                    + " failed: " + result.command().display() + " exited " + result.exitCode() + ": "
                    + result.diagnostic());
        }
    }
}
