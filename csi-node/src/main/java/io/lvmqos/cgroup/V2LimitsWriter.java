package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * cgroup v2: a single write of "MAJ:MIN rbps= wbps= riops= wiops=" to io.max. When the pod
 * cgroup has no io.max, every ancestor from the root down to the pod cgroup's parent is first
 * given "io" in cgroup.subtree_control (without that the pod cgroup has no io.max), and the write
 * made again. io.max is hierarchical: the pod cgroup's line holds
 * for every container cgroup below it, from before the container's first process.
 */
final class V2LimitsWriter implements CgroupLimitsWriter {

    private final Path root;

    V2LimitsWriter(Path root) {
        this.root = root;
    }

    @Override
    public Set<DeviceNumber> apply(Path podCgroup, DeviceNumber device, IoLimits limits) {
        Path cgroup = CgroupLimitsWriter.inside(root, podCgroup);
        String line = IoMax.line(device, limits);
        try {
            CgroupFiles.write(cgroup.resolve(IoMax.FILE), line);
        } catch (DriverException.Unavailable noIoMax) {
            // io.max is there exactly when the parent passes io down, as it does once any pod has
            // been limited: the walk that turns io on from the root is needed only the first time
            CgroupFiles.enableIoController(root, cgroup);
            CgroupFiles.write(cgroup.resolve(IoMax.FILE), line);
        }
        Map<DeviceNumber, IoLimits> now = lines(cgroup);
        IoLimits kept = now.getOrDefault(device, IoLimits.NONE);
        if (!kept.equals(limits)) {
            throw DriverException.internal("the kernel did not keep the I/O limits for " + device + " in " + cgroup
                    + ": wrote " + limits + ", read back " + kept);
        }
        return Set.copyOf(now.keySet());
    }

    @Override
    public Set<DeviceNumber> remove(Path podCgroup, DeviceNumber device) {
        Path cgroup = CgroupLimitsWriter.inside(root, podCgroup);
        if (!Files.isDirectory(cgroup)) {
            return Set.of();
        }
        Map<DeviceNumber, IoLimits> before = lines(cgroup);
        if (!before.containsKey(device)) {
            return Set.copyOf(before.keySet());
        }
        CgroupFiles.write(cgroup.resolve(IoMax.FILE), IoMax.line(device, IoLimits.NONE));
        Map<DeviceNumber, IoLimits> left = lines(cgroup);
        if (left.containsKey(device)) {
            throw DriverException.internal("the I/O limits for " + device + " in " + cgroup
                    + " are still there after removing them: " + left.get(device));
        }
        return Set.copyOf(left.keySet());
    }

    /** The lines of the cgroup's io.max by device; none when it has no io.max (or is gone). */
    private static Map<DeviceNumber, IoLimits> lines(Path cgroup) {
        return CgroupFiles.read(cgroup.resolve(IoMax.FILE)).map(IoMax::parse).orElse(Map.of());
    }

    @Override
    public Optional<IoLimits> read(Path podCgroup, DeviceNumber device) {
        return Optional.ofNullable(lines(CgroupLimitsWriter.inside(root, podCgroup)).get(device));
    }

    @Override
    public Set<DeviceNumber> limitedDevices(Path podCgroup) {
        return new LinkedHashSet<>(lines(CgroupLimitsWriter.inside(root, podCgroup)).keySet());
    }
}
