package io.lvmqos.mount;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.device.MountedFilesystem;
import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The mount on top of a path under the kubelet directory, held open by an O_PATH descriptor that
 * was reached one component at a time ({@link Beneath}), with its mount table line found by mount
 * id rather than by the path's name. Whatever is read through it (statfs, the device number of a
 * published device node, a filesystem to grow) is of that mount, even if a directory on the path
 * is swapped for a symlink meanwhile. Close it before unmounting: it keeps the mount busy.
 *
 * @param fd the descriptor of the mount's root (or of the bind-mounted device node)
 * @param entry the mount table line of that mount
 * @param id the mount's id in the numbering of {@link MountTable} (unique where statmount is used),
 *     for {@link Mounter#unmount(java.nio.file.Path, java.util.OptionalLong)}
 */
public record PinnedMount(Beneath.Fd fd, MountEntry entry, long id) implements AutoCloseable {

    private static final String DEVTMPFS = "devtmpfs";

    /** A raw block publish: a bind mount of a device node from devtmpfs. */
    public boolean isDeviceNode() {
        return entry.fsType().equals(DEVTMPFS);
    }

    /**
     * The device a mount holds: a filesystem's own device, or for a bound device node the device
     * it stands for (its rdev, read from the pinned node, so even after the LV left /dev).
     */
    public DeviceNumber device() {
        if (!isDeviceNode()) {
            return entry.device();
        }
        try {
            return DeviceNumber.fromDev((Long) Files.getAttribute(Path.of(fd.procPath()), "unix:rdev"));
        } catch (IOException e) {
            throw DriverException.internal("cannot stat the device node mounted at " + entry.mountPoint() + ": " + e, e);
        }
    }

    /** statfs(2) of the pinned mount's filesystem, through the descriptor. */
    public FilesystemUsage usage() {
        return fd.usage();
    }

    /**
     * A path that leads a child process (stat, xfs_growfs) to exactly this mount: the descriptor's
     * magic link under this process's /proc entry, which the kernel resolves to the pinned file
     * without looking up any name on the way.
     */
    public String pathForChild() {
        return "/proc/" + ProcessHandle.current().pid() + "/fd/" + fd.number();
    }

    /** What growing the filesystem needs to know of this mount. */
    public MountedFilesystem mounted() {
        return new MountedFilesystem(entry.device(), entry.source(), entry.mountPoint(), isDeviceNode(), pathForChild());
    }

    @Override
    public void close() {
        fd.close();
    }
}
