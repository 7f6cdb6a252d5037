package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * cgroup v2: a single write of "MAJ:MIN rbps= wbps= riops= wiops=" to io.max, after making sure
 * every ancestor from the root down to the pod cgroup's parent has "io" in cgroup.subtree_control
 * (without that the pod cgroup has no io.max). io.max is hierarchical: the pod cgroup's line holds
 * for every container cgroup below it, from before the container's first process.
 */
final class V2LimitsWriter implements CgroupLimitsWriter {

    private final Path root;

    V2LimitsWriter(Path root) {
        this.root = root;
    }

    @Override
    public void apply(Path podCgroup, DeviceNumber device, IoLimits limits) {
        Path cgroup = CgroupLimitsWriter.inside(root, podCgroup);
        CgroupFiles.enableIoController(root, cgroup);
        CgroupFiles.write(cgroup.resolve(IoMax.FILE), IoMax.line(device, limits));
        IoLimits now = read(podCgroup, device).orElse(IoLimits.NONE);
        if (!now.equals(limits)) {
            throw DriverException.internal("the kernel did not keep the I/O limits for " + device + " in " + cgroup
                    + ": wrote " + limits + ", read back " + now);
        }
    }

    @Override
    public void remove(Path podCgroup, DeviceNumber device) {
        Path cgroup = CgroupLimitsWriter.inside(root, podCgroup);
        if (!Files.isDirectory(cgroup) || read(podCgroup, device).isEmpty()) {
            return;
        }
        CgroupFiles.write(cgroup.resolve(IoMax.FILE), IoMax.line(device, IoLimits.NONE));
        Optional<IoLimits> left = read(podCgroup, device);
        if (left.isPresent()) {
            throw DriverException.internal("the I/O limits for " + device + " in " + cgroup
                    + " are still there after removing them: " + left.get());
        }
    }

    @Override
    public Optional<IoLimits> read(Path podCgroup, DeviceNumber device) {
        return CgroupFiles.read(CgroupLimitsWriter.inside(root, podCgroup).resolve(IoMax.FILE))
                .map(IoMax::parse).map(lines -> lines.get(device));
    }

    @Override
    public Set<DeviceNumber> limitedDevices(Path podCgroup) {
        Set<DeviceNumber> devices = new LinkedHashSet<>();
        CgroupFiles.read(CgroupLimitsWriter.inside(root, podCgroup).resolve(IoMax.FILE)).map(IoMax::parse)
                .ifPresent(lines -> devices.addAll(lines.keySet()));
        return devices;
    }
}
