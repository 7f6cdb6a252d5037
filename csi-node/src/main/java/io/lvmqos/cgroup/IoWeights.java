package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoCostWeight;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * Writes io.cost weights for one disk into cgroups (v2 only), as per-device lines of io.weight,
 * so that a cgroup's weight on other disks, and its default, stay as they were. Every write is
 * read back: a weight the kernel did not take is an error.
 */
public final class IoWeights {

    private final Path root;

    /** @param cgroupRoot the host's cgroup v2 mount point */
    public IoWeights(Path cgroupRoot) {
        this.root = cgroupRoot.toAbsolutePath().normalize();
    }

    public Path root() {
        return root;
    }

    /** The cgroup's weights; the kernel's default when it has no io.weight (io not enabled above it). */
    public IoWeight read(Path cgroup) {
        return CgroupFiles.read(inside(cgroup).resolve(IoWeight.FILE)).map(IoWeight::parse)
                .orElse(new IoWeight(IoCostWeight.DEFAULT, Map.of()));
    }

    /** Gives the cgroup its own weight on the disk. */
    public void set(Path cgroup, DeviceNumber disk, IoCostWeight weight) {
        Path dir = inside(cgroup);
        CgroupFiles.enableIoController(root, dir);
        CgroupFiles.write(dir.resolve(IoWeight.FILE), IoWeight.line(disk, weight));
        Optional<IoCostWeight> now = Optional.ofNullable(read(dir).perDevice().get(disk));
        if (!now.equals(Optional.of(weight))) {
            throw DriverException.internal("the kernel did not keep io.weight " + weight + " for " + disk + " in " + dir
                    + ": read back " + now.map(String::valueOf).orElse("no line"));
        }
    }

    /** Removes the cgroup's own weight on the disk; nothing to remove, or a cgroup gone, is fine. */
    public void remove(Path cgroup, DeviceNumber disk) {
        Path dir = inside(cgroup);
        if (!read(dir).perDevice().containsKey(disk)) {
            return;
        }
        try {
            CgroupFiles.write(dir.resolve(IoWeight.FILE), IoWeight.removal(disk));
        } catch (DriverException.Unavailable gone) {
            return; // the cgroup went away meanwhile
        }
        if (read(dir).perDevice().containsKey(disk)) {
            throw DriverException.internal("io.weight for " + disk + " in " + dir + " is still there after removing it");
        }
    }

    private Path inside(Path cgroup) {
        Path normal = cgroup.toAbsolutePath().normalize();
        if (!normal.startsWith(root) || normal.equals(root)) {
            throw DriverException.invalidArgument("cgroup " + cgroup + " is not a cgroup below " + root);
        }
        return normal;
    }
}
