package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoLimits;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Writes one device's I/O limits into a pod's cgroup, through plain file writes (no fork). One
 * implementation per cgroup interface, chosen once from the node's cgroup mode by
 * {@link CgroupLimitsWriters#forNode}: {@link V2LimitsWriter} (io.max, hierarchical) and {@link V1LimitsWriter}
 * (blkio.throttle, which is not hierarchical, so it also writes every container cgroup below the
 * pod's and copies the pod's lines into one made later).
 *
 * <p>The kernel keeps one line per device in each file, so other volumes' limits in the same pod
 * are never touched. Every write is read back and compared: a limit the kernel did not take is an
 * error, never a warning, because a volume published without its limit silently breaks the QoS
 * promise.
 */
public sealed interface CgroupLimitsWriter permits V2LimitsWriter, V1LimitsWriter, CgroupLimitsWriter.NoController {

    /**
     * Writes the device's limits; within the kernel's bounds by construction ({@link IoLimits}).
     *
     * @return the devices the pod cgroup holds a limit line for afterwards, from the read that
     *     checked the write ({@link #limitedDevices} without a second read)
     */
    Set<DeviceNumber> apply(Path podCgroup, DeviceNumber device, IoLimits limits);

    /**
     * Removes the device's limits; nothing to remove is fine, and so is a pod cgroup already gone.
     *
     * @return the devices the pod cgroup still holds a limit line for, from the read that checked
     *     the removal; empty when the cgroup is gone
     */
    Set<DeviceNumber> remove(Path podCgroup, DeviceNumber device);

    /**
     * The limits the kernel holds for the device in this cgroup; empty when it holds none (no
     * line for the device, or on v2 no io.max because the io controller is not enabled there).
     */
    Optional<IoLimits> read(Path podCgroup, DeviceNumber device);

    /** The devices the cgroup itself holds a limit line for. */
    Set<DeviceNumber> limitedDevices(Path podCgroup);

    /**
     * Whether the pod's containers need the pod's lines copied into their own cgroups (cgroup v1),
     * and so a watch for containers made later.
     */
    default boolean copiesToContainers() {
        return false;
    }

    /** cgroup v1: writes the pod's lines into a cgroup below it, made later. Nothing to do elsewhere. */
    default void copyPodLimits(Path podCgroup, Path child) {
    }

    /** cgroup v1: copies the pod's lines into every cgroup below it (at start-up, and after a lost event). */
    default void copyPodLimitsToAll(Path podCgroup) {
        for (Path child : descendants(podCgroup)) {
            copyPodLimits(podCgroup, child);
        }
    }

    /** Every cgroup below this one, parents before children; empty when it is gone. */
    static List<Path> descendants(Path cgroup) {
        // level by level rather than Files.walk, which gives up on the whole tree when one
        // container cgroup is removed while it is being listed
        List<Path> found = new ArrayList<>();
        Deque<Path> pending = new ArrayDeque<>(List.of(cgroup));
        while (!pending.isEmpty()) {
            Path dir = pending.removeFirst();
            try (Stream<Path> entries = Files.list(dir)) {
                for (Path child : entries.filter(Files::isDirectory).sorted().toList()) {
                    found.add(child);
                    pending.addLast(child);
                }
            } catch (NoSuchFileException gone) {
                // a container that ended meanwhile
            } catch (IOException | UncheckedIOException e) {
                if (Files.isDirectory(dir)) {
                    throw DriverException.internal("listing the cgroups below " + dir + " failed: " + e.getMessage());
                }
            }
        }
        return found;
    }

    /**
     * The pod cgroup, checked to be a normalised directory below the hierarchy the writer governs,
     * so that no write lands anywhere else.
     */
    static Path inside(Path hierarchy, Path podCgroup) {
        if (!podCgroup.isAbsolute() || !podCgroup.normalize().equals(podCgroup) || !podCgroup.startsWith(hierarchy)
                || podCgroup.equals(hierarchy)) {
            throw DriverException.invalidArgument("pod cgroup " + podCgroup + " is not a cgroup below " + hierarchy);
        }
        return podCgroup;
    }

    /** A node where neither cgroup interface throttles I/O: every call answers why. */
    record NoController(Path root, String why) implements CgroupLimitsWriter {
        @Override
        public Set<DeviceNumber> apply(Path podCgroup, DeviceNumber device, IoLimits limits) {
            throw DriverException.unavailable(why);
        }

        @Override
        public Set<DeviceNumber> remove(Path podCgroup, DeviceNumber device) {
            throw DriverException.unavailable(why);
        }

        @Override
        public Optional<IoLimits> read(Path podCgroup, DeviceNumber device) {
            throw DriverException.unavailable(why);
        }

        @Override
        public Set<DeviceNumber> limitedDevices(Path podCgroup) {
            throw DriverException.unavailable(why);
        }
    }
}
