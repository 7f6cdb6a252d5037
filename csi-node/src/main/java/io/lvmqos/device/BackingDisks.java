package io.lvmqos.device;

import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The whole disks under a block device, read from sysfs: device-mapper's {@code slaves} links
 * followed down (a thin LV sits on its pool, the pool on its data LV, that on the PVs), and a
 * partition replaced by its disk. io.cost and its weights act on a disk's request queue, so a
 * weight for an LV is written for these; the kernel refuses one for a partition or a dm device.
 */
public final class BackingDisks {

    /** device-mapper stacks are shallow; a deeper one is a loop in what sysfs shows. */
    private static final int MAX_DEPTH = 16;

    private final Path sys;

    /** @param sys where sysfs is mounted, usually /sys */
    public BackingDisks(Path sys) {
        this.sys = sys;
    }

    /**
     * The disks under the device; the device itself when it is a disk.
     *
     * @throws DriverException.NotFound when sysfs does not know the device
     */
    public Set<DeviceNumber> of(DeviceNumber device) {
        Path top = sys.resolve("dev/block").resolve(device.toString());
        if (!Files.isDirectory(top)) {
            throw DriverException.notFound("block device " + device + " is not in " + sys.resolve("dev/block"));
        }
        Set<DeviceNumber> disks = new LinkedHashSet<>();
        Deque<Path> pending = new ArrayDeque<>(List.of(realPath(top)));
        Set<Path> seen = new LinkedHashSet<>();
        while (!pending.isEmpty()) {
            Path dir = pending.removeFirst();
            if (!seen.add(dir) || seen.size() > MAX_DEPTH * MAX_DEPTH) {
                continue;
            }
            List<Path> below = slaves(dir);
            if (!below.isEmpty()) {
                pending.addAll(below);
            } else if (Files.exists(dir.resolve("partition"))) {
                disks.add(number(dir.getParent()));
            } else {
                disks.add(number(dir));
            }
        }
        return disks;
    }

    private static List<Path> slaves(Path dir) {
        Path slaves = dir.resolve("slaves");
        if (!Files.isDirectory(slaves)) {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(slaves)) {
            return entries.sorted().map(BackingDisks::realPath).toList();
        } catch (IOException e) {
            throw DriverException.internal("cannot list " + slaves + ": " + e.getMessage(), e);
        }
    }

    private static DeviceNumber number(Path dir) {
        Path dev = dir.resolve("dev");
        try {
            return DeviceNumber.parse(Files.readString(dev, StandardCharsets.US_ASCII).strip());
        } catch (NoSuchFileException e) {
            throw DriverException.notFound("block device " + dir.getFileName() + " went away (no " + dev + ")");
        } catch (IOException e) {
            throw DriverException.internal("cannot read " + dev + ": " + e.getMessage(), e);
        }
    }

    private static Path realPath(Path path) {
        try {
            return path.toRealPath();
        } catch (IOException e) {
            throw DriverException.notFound("block device " + path + " went away: " + e.getMessage());
        }
    }
}
