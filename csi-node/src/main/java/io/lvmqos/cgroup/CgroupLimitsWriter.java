package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoLimits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Writes one device's I/O limits into a pod's cgroup, through plain file writes (no fork).
 *
 * <p>cgroup v2: a single write of "MAJ:MIN rbps= wbps= riops= wiops=" to io.max, after making
 * sure every ancestor from the root down to the pod cgroup's parent has "io" in
 * cgroup.subtree_control (without that the pod cgroup has no io.max). cgroup v1: the four
 * blkio.throttle.*_device files, "MAJ:MIN 0" for a direction without a limit. The kernel keeps one
 * line per device in each file, so other volumes' limits in the same pod are never touched.
 *
 * <p>On v2 io.max is hierarchical: the pod cgroup's line holds for every container cgroup below
 * it, from before the container's first process. On v1 it is not (blk-throttle links a group to
 * its parent only on the default hierarchy), so a limit on the pod cgroup alone holds for no
 * container: on v1 every write to the pod cgroup is also made in every cgroup below it, and
 * {@link #copyPodLimits} writes the pod's lines into a container cgroup made later (see
 * {@link ContainerCgroupWatcher}). The pod cgroup's own files stay the record of what the pod
 * should have.
 *
 * <p>Every write is read back and compared: a limit the kernel did not take is an error, never a
 * warning, because a volume published without its limit silently breaks the QoS promise. A failed
 * v1 apply may leave some directions updated; apply is idempotent and the caller's retry fixes it.
 */
public final class CgroupLimitsWriter {

    private final Path root;
    /**
     * v1 writes to a pod's subtree and the copies into a new container cgroup take this lock, so
     * that a copy made from the pod's old lines cannot land after a change reached the children.
     * One lock for the node: each holder does a few small file writes.
     */
    private final Object v1Tree = new Object();

    /** @param cgroupRoot the host's cgroup mount point, the same one {@link PodCgroups} searched */
    public CgroupLimitsWriter(Path cgroupRoot) {
        this.root = cgroupRoot.toAbsolutePath().normalize();
    }

    /** Writes the device's limits; within the kernel's bounds by construction ({@link IoLimits}). */
    public void apply(Path podCgroup, DeviceNumber device, IoLimits limits) {
        CgroupMode mode = CgroupMode.detect(root);
        Path cgroup = inside(mode, podCgroup);
        switch (mode) {
            case V2 -> {
                enableIoController(cgroup);
                write(cgroup.resolve(IoMax.FILE), IoMax.line(device, limits));
            }
            case V1 -> {
                synchronized (v1Tree) {
                    writeV1(cgroup, device, limits);
                    checkKept(mode, cgroup, device, limits);
                    for (Path child : descendants(cgroup)) {
                        if (whileItExists(child, () -> writeV1(child, device, limits))) {
                            checkKept(mode, child, device, limits);
                        }
                    }
                }
                return;
            }
        }
        checkKept(mode, cgroup, device, limits);
    }

    private void checkKept(CgroupMode mode, Path cgroup, DeviceNumber device, IoLimits limits) {
        IoLimits now = read(mode, cgroup, device).orElse(IoLimits.NONE);
        if (!now.equals(limits)) {
            throw DriverException.internal("the kernel did not keep the I/O limits for " + device + " in " + cgroup
                    + ": wrote " + limits + ", read back " + now);
        }
    }

    private static void writeV1(Path cgroup, DeviceNumber device, IoLimits limits) {
        for (Map.Entry<BlkioThrottle, OptionalLong> e : v1Values(limits).entrySet()) {
            write(cgroup.resolve(e.getKey().file), device + " " + e.getValue().orElse(0));
        }
    }

    /**
     * cgroup v1: writes every line of the pod cgroup's throttle files into a cgroup below it, as
     * they are now. Used for a container cgroup made after the limits were applied. A child that
     * is gone again (a container that ended) is no error.
     */
    public void copyPodLimits(Path podCgroup, Path child) {
        CgroupMode mode = CgroupMode.detect(root);
        Path cgroup = inside(mode, podCgroup);
        if (mode != CgroupMode.V1 || !child.startsWith(cgroup) || child.equals(cgroup)) {
            return;
        }
        synchronized (v1Tree) {
            for (BlkioThrottle file : BlkioThrottle.values()) {
                Map<DeviceNumber, Long> lines = readText(cgroup.resolve(file.file)).map(BlkioThrottle::parse)
                        .orElse(Map.of());
                for (Map.Entry<DeviceNumber, Long> line : lines.entrySet()) {
                    String text = line.getKey() + " " + Long.toUnsignedString(line.getValue());
                    if (!whileItExists(child, () -> write(child.resolve(file.file), text))) {
                        return;
                    }
                }
            }
        }
    }

    /** cgroup v1: copies the pod's lines into every cgroup below it (at start-up, and after a lost event). */
    public void copyPodLimitsToAll(Path podCgroup) {
        for (Path child : descendants(podCgroup)) {
            copyPodLimits(podCgroup, child);
        }
    }

    /** The devices the cgroup itself holds a limit line for (io.max, or any of the four v1 files). */
    public java.util.Set<DeviceNumber> limitedDevices(Path podCgroup) {
        CgroupMode mode = CgroupMode.detect(root);
        Path cgroup = inside(mode, podCgroup);
        java.util.Set<DeviceNumber> devices = new java.util.LinkedHashSet<>();
        switch (mode) {
            case V2 -> readText(cgroup.resolve(IoMax.FILE)).map(IoMax::parse).ifPresent(m -> devices.addAll(m.keySet()));
            case V1 -> {
                for (BlkioThrottle file : BlkioThrottle.values()) {
                    readText(cgroup.resolve(file.file)).map(BlkioThrottle::parse).ifPresent(m -> devices.addAll(m.keySet()));
                }
            }
        }
        return devices;
    }

    /** Whether the cgroup itself holds any limit line on v1 (0 deletes a line, so any line is one). */
    public boolean hasV1Limits(Path podCgroup) {
        CgroupMode mode = CgroupMode.detect(root);
        Path cgroup = inside(mode, podCgroup);
        if (mode != CgroupMode.V1) {
            return false;
        }
        for (BlkioThrottle file : BlkioThrottle.values()) {
            if (readText(cgroup.resolve(file.file)).map(BlkioThrottle::parse).map(m -> !m.isEmpty()).orElse(false)) {
                return true;
            }
        }
        return false;
    }

    /** Every cgroup below this one, parents before children; empty when it is gone. */
    public static java.util.List<Path> descendants(Path cgroup) {
        // level by level rather than Files.walk, which gives up on the whole tree when one
        // container cgroup is removed while it is being listed
        java.util.List<Path> found = new java.util.ArrayList<>();
        java.util.Deque<Path> pending = new java.util.ArrayDeque<>(java.util.List.of(cgroup));
        while (!pending.isEmpty()) {
            Path dir = pending.removeFirst();
            try (java.util.stream.Stream<Path> entries = Files.list(dir)) {
                for (Path child : entries.filter(Files::isDirectory).sorted().toList()) {
                    found.add(child);
                    pending.addLast(child);
                }
            } catch (NoSuchFileException gone) {
                // a container that ended meanwhile
            } catch (IOException | java.io.UncheckedIOException e) {
                if (Files.isDirectory(dir)) {
                    throw DriverException.internal("listing the cgroups below " + dir + " failed: " + e.getMessage());
                }
            }
        }
        return found;
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

    /** Removes the device's limits; nothing to remove is fine, and so is a pod cgroup already gone. */
    public void remove(Path podCgroup, DeviceNumber device) {
        CgroupMode mode = CgroupMode.detect(root);
        Path cgroup = inside(mode, podCgroup);
        if (!Files.isDirectory(cgroup)) {
            return;
        }
        // on v1 the children are looked at even when the pod has no line: a removal cut short
        // after the pod cgroup may have left lines in its containers
        if (mode == CgroupMode.V2 && read(mode, cgroup, device).isEmpty()) {
            return;
        }
        switch (mode) {
            case V2 -> {
                write(cgroup.resolve(IoMax.FILE), IoMax.line(device, IoLimits.NONE));
                checkGone(mode, cgroup, device);
            }
            case V1 -> {
                synchronized (v1Tree) {
                    removeV1(cgroup, device);
                    checkGone(mode, cgroup, device);
                    for (Path child : descendants(cgroup)) {
                        if (whileItExists(child, () -> removeV1(child, device))) {
                            checkGone(mode, child, device);
                        }
                    }
                }
            }
        }
    }

    private static void removeV1(Path cgroup, DeviceNumber device) {
        for (BlkioThrottle file : BlkioThrottle.values()) {
            boolean listed = readText(cgroup.resolve(file.file)).map(BlkioThrottle::parse)
                    .map(m -> m.containsKey(device)).orElse(false);
            if (listed) {
                write(cgroup.resolve(file.file), device + " 0");
            }
        }
    }

    private void checkGone(CgroupMode mode, Path cgroup, DeviceNumber device) {
        Optional<IoLimits> left = read(mode, cgroup, device);
        if (left.isPresent()) {
            throw DriverException.internal("the I/O limits for " + device + " in " + cgroup
                    + " are still there after removing them: " + left.get());
        }
    }

    /**
     * The limits the kernel holds for the device in this cgroup; empty when it holds none (no
     * line for the device, or on v2 no io.max because the io controller is not enabled there).
     */
    public Optional<IoLimits> read(Path podCgroup, DeviceNumber device) {
        CgroupMode mode = CgroupMode.detect(root);
        return read(mode, inside(mode, podCgroup), device);
    }

    private Optional<IoLimits> read(CgroupMode mode, Path cgroup, DeviceNumber device) {
        return switch (mode) {
            case V2 -> readText(cgroup.resolve(IoMax.FILE)).map(IoMax::parse).map(m -> m.get(device));
            case V1 -> {
                Map<BlkioThrottle, OptionalLong> values = new EnumMap<>(BlkioThrottle.class);
                boolean any = false;
                for (BlkioThrottle file : BlkioThrottle.values()) {
                    Long value = readText(cgroup.resolve(file.file)).map(BlkioThrottle::parse)
                            .map(m -> m.get(device)).orElse(null);
                    boolean limited = value != null && file.isLimit(value);
                    values.put(file, limited ? OptionalLong.of(value) : OptionalLong.empty());
                    any |= limited;
                }
                yield any ? Optional.of(new IoLimits(values.get(BlkioThrottle.READ_BPS),
                        values.get(BlkioThrottle.WRITE_BPS), values.get(BlkioThrottle.READ_IOPS),
                        values.get(BlkioThrottle.WRITE_IOPS))) : Optional.empty();
            }
        };
    }

    private void enableIoController(Path podCgroup) {
        CgroupFiles.enableIoController(root, podCgroup);
    }

    private Path inside(CgroupMode mode, Path podCgroup) {
        Path hierarchy = mode.hierarchy(root).normalize();
        if (!podCgroup.isAbsolute() || !podCgroup.normalize().equals(podCgroup) || !podCgroup.startsWith(hierarchy)
                || podCgroup.equals(hierarchy)) {
            throw DriverException.invalidArgument("pod cgroup " + podCgroup + " is not a cgroup below " + hierarchy);
        }
        return podCgroup;
    }

    private static Map<BlkioThrottle, OptionalLong> v1Values(IoLimits limits) {
        Map<BlkioThrottle, OptionalLong> values = new EnumMap<>(BlkioThrottle.class);
        values.put(BlkioThrottle.READ_BPS, limits.readBps());
        values.put(BlkioThrottle.WRITE_BPS, limits.writeBps());
        values.put(BlkioThrottle.READ_IOPS, limits.readIops());
        values.put(BlkioThrottle.WRITE_IOPS, limits.writeIops());
        return values;
    }

    private static void write(Path file, String line) {
        CgroupFiles.write(file, line);
    }

    private static Optional<String> readText(Path file) {
        return CgroupFiles.read(file);
    }
}
