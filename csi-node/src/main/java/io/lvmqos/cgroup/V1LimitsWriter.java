package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * cgroup v1: the four blkio.throttle.*_device files, "MAJ:MIN 0" for a direction without a limit.
 * blk-throttle is not hierarchical on v1 (it links a group to its parent only on the default
 * hierarchy), so a limit on the pod cgroup alone holds for no container: every write to the pod
 * cgroup is also made in every cgroup below it, and {@link #copyPodLimits} writes the pod's lines
 * into a container cgroup made later (see {@link ContainerCgroupWatcher}). The pod cgroup's own
 * files stay the record of what the pod should have. A failed apply may leave some directions
 * updated; apply is idempotent and the caller's retry fixes it.
 */
final class V1LimitsWriter implements CgroupLimitsWriter {

    private final Path hierarchy;
    /**
     * Writes to a pod's subtree and the copies into a new container cgroup take this lock, so that
     * a copy made from the pod's old lines cannot land after a change reached the children. One
     * lock for the node: each holder does a few small file writes.
     */
    private final Object tree = new Object();

    V1LimitsWriter(Path root) {
        this.hierarchy = CgroupMode.V1.hierarchy(root).normalize();
    }

    @Override
    public boolean copiesToContainers() {
        return true;
    }

    @Override
    public Set<DeviceNumber> apply(Path podCgroup, DeviceNumber device, IoLimits limits) {
        Path cgroup = CgroupLimitsWriter.inside(hierarchy, podCgroup);
        synchronized (tree) {
            write(cgroup, device, limits);
            checkKept(cgroup, device, limits);
            for (Path child : CgroupLimitsWriter.descendants(cgroup)) {
                if (whileItExists(child, () -> write(child, device, limits))) {
                    checkKept(child, device, limits);
                }
            }
        }
        return limitedDevices(cgroup);
    }

    @Override
    public Set<DeviceNumber> remove(Path podCgroup, DeviceNumber device) {
        Path cgroup = CgroupLimitsWriter.inside(hierarchy, podCgroup);
        if (!Files.isDirectory(cgroup)) {
            return Set.of();
        }
        // the children are looked at even when the pod has no line: a removal cut short after the
        // pod cgroup may have left lines in its containers
        synchronized (tree) {
            removeLines(cgroup, device);
            checkGone(cgroup, device);
            for (Path child : CgroupLimitsWriter.descendants(cgroup)) {
                if (whileItExists(child, () -> removeLines(child, device))) {
                    checkGone(child, device);
                }
            }
        }
        return limitedDevices(cgroup);
    }

    @Override
    public Optional<IoLimits> read(Path podCgroup, DeviceNumber device) {
        return readAt(CgroupLimitsWriter.inside(hierarchy, podCgroup), device);
    }

    @Override
    public Set<DeviceNumber> limitedDevices(Path podCgroup) {
        Path cgroup = CgroupLimitsWriter.inside(hierarchy, podCgroup);
        Set<DeviceNumber> devices = new LinkedHashSet<>();
        for (BlkioThrottle file : BlkioThrottle.values()) {
            lines(cgroup, file).ifPresent(m -> devices.addAll(m.keySet()));
        }
        return devices;
    }

    /**
     * Writes every line of the pod cgroup's throttle files into a cgroup below it, as they are now.
     * A child that is gone again (a container that ended) is no error.
     */
    @Override
    public void copyPodLimits(Path podCgroup, Path child) {
        Path cgroup = CgroupLimitsWriter.inside(hierarchy, podCgroup);
        if (!child.startsWith(cgroup) || child.equals(cgroup)) {
            return;
        }
        synchronized (tree) {
            for (BlkioThrottle file : BlkioThrottle.values()) {
                for (Map.Entry<DeviceNumber, Long> line : lines(cgroup, file).orElse(Map.of()).entrySet()) {
                    String text = line.getKey() + " " + Long.toUnsignedString(line.getValue());
                    if (!whileItExists(child, () -> CgroupFiles.write(child.resolve(file.file), text))) {
                        return;
                    }
                }
            }
        }
    }

    private static Optional<Map<DeviceNumber, Long>> lines(Path cgroup, BlkioThrottle file) {
        return CgroupFiles.read(cgroup.resolve(file.file)).map(file::parse);
    }

    private static void write(Path cgroup, DeviceNumber device, IoLimits limits) {
        for (Map.Entry<BlkioThrottle, OptionalLong> e : values(limits).entrySet()) {
            CgroupFiles.write(cgroup.resolve(e.getKey().file), device + " " + e.getValue().orElse(0));
        }
    }

    private static void removeLines(Path cgroup, DeviceNumber device) {
        for (BlkioThrottle file : BlkioThrottle.values()) {
            if (lines(cgroup, file).map(m -> m.containsKey(device)).orElse(false)) {
                CgroupFiles.write(cgroup.resolve(file.file), device + " 0");
            }
        }
    }

    private static Optional<IoLimits> readAt(Path cgroup, DeviceNumber device) {
        Map<BlkioThrottle, OptionalLong> values = new EnumMap<>(BlkioThrottle.class);
        boolean any = false;
        for (BlkioThrottle file : BlkioThrottle.values()) {
            Long value = lines(cgroup, file).map(m -> m.get(device)).orElse(null);
            boolean limited = value != null && file.isLimit(value);
            values.put(file, limited ? OptionalLong.of(value) : OptionalLong.empty());
            any |= limited;
        }
        return any ? Optional.of(new IoLimits(values.get(BlkioThrottle.READ_BPS), values.get(BlkioThrottle.WRITE_BPS),
                values.get(BlkioThrottle.READ_IOPS), values.get(BlkioThrottle.WRITE_IOPS))) : Optional.empty();
    }

    private static void checkKept(Path cgroup, DeviceNumber device, IoLimits limits) {
        IoLimits now = readAt(cgroup, device).orElse(IoLimits.NONE);
        if (!now.equals(limits)) {
            throw DriverException.internal("the kernel did not keep the I/O limits for " + device + " in " + cgroup
                    + ": wrote " + limits + ", read back " + now);
        }
    }

    private static void checkGone(Path cgroup, DeviceNumber device) {
        Optional<IoLimits> left = readAt(cgroup, device);
        if (left.isPresent()) {
            throw DriverException.internal("the I/O limits for " + device + " in " + cgroup
                    + " are still there after removing them: " + left.get());
        }
    }

    private static Map<BlkioThrottle, OptionalLong> values(IoLimits limits) {
        Map<BlkioThrottle, OptionalLong> values = new EnumMap<>(BlkioThrottle.class);
        values.put(BlkioThrottle.READ_BPS, limits.readBps());
        values.put(BlkioThrottle.WRITE_BPS, limits.writeBps());
        values.put(BlkioThrottle.READ_IOPS, limits.readIops());
        values.put(BlkioThrottle.WRITE_IOPS, limits.writeIops());
        return values;
    }

    /**
     * Runs a write into a container cgroup; a container that ended meanwhile took its cgroup with
     * it, which is no failure. Answers whether the cgroup is still there.
     */
    private static boolean whileItExists(Path cgroup, Runnable write) {
        try {
            write.run();
            return true;
        } catch (DriverException e) {
            if (!Files.isDirectory(cgroup)) {
                return false;
            }
            throw e;
        }
    }
}
