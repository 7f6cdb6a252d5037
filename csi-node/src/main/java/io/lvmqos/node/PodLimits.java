package io.lvmqos.node;

import io.lvmqos.cgroup.CgroupLimitsWriter;
import io.lvmqos.cgroup.ContainerCgroupWatcher;
import io.lvmqos.cgroup.PodCgroups;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.guarantee.PublishedPods;
import io.lvmqos.mount.MountEntry;
import io.lvmqos.mount.MountTable;
import io.lvmqos.volume.IoLimits;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.PodLimitsApplier;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A volume's I/O limits on the cgroups of the pods that use it. Which pods use a volume is read
 * from the mount table (the publish bind mounts under {@code <kubelet>/pods/<uid>/}), so nothing
 * is remembered that a restart could lose.
 *
 * <p>On cgroup v1 the limits are also written into every container cgroup of the pod, and the pod
 * cgroup is watched for containers made later (blk-throttle is not hierarchical there); the
 * watches are rebuilt by {@link #resume()} at start-up from the publish mounts and the pod
 * cgroups' own throttle files.
 */
public final class PodLimits implements PodLimitsApplier, PublishedPods {

    private static final Logger log = LoggerFactory.getLogger(PodLimits.class);

    private final PodCgroups cgroups;
    private final CgroupLimitsWriter writer;
    private final ContainerCgroupWatcher watcher;
    private final MountTable mountTable;
    private final Path kubeletDir;
    private final Path devDir;
    private final Predicate<DeviceNumber> isOurVolume;

    /**
     * @param devDir where the host's devtmpfs is, to read the device of a block volume's publish
     * @param isOurVolume whether a device is an LV of this driver's volume groups: only such a
     *     device's lines are ever pruned, never a line another component wrote for another device
     */
    public PodLimits(PodCgroups cgroups, CgroupLimitsWriter writer, ContainerCgroupWatcher watcher,
                     MountTable mountTable, Path kubeletDir, Path devDir, Predicate<DeviceNumber> isOurVolume) {
        this.cgroups = cgroups;
        this.writer = writer;
        this.watcher = watcher;
        this.mountTable = mountTable;
        this.kubeletDir = kubeletDir;
        this.devDir = devDir;
        this.isOurVolume = isOurVolume;
    }

    /**
     * Removes every limit line in the pod's cgroup (and on v1 below it) for an LV of ours that is
     * not published into the pod now. Such a line is left when a lift was cut short, or was
     * never possible (an unpublish of a volume already deleted); device-mapper hands the lowest
     * free minor to the next LV activated, so the line could later throttle another volume the
     * pod is given, with the old volume's limits.
     *
     * <p>{@code publishedInPod} is asked only when the pod's cgroup holds a line for another
     * device than {@code publishedNow} (so a pod with one volume costs nothing more), and only
     * after the lines are read: a publish mounts before it writes its line, so a line seen here
     * has its mount in place when the pod's publishes are read, and a volume published into the
     * pod meanwhile keeps its line.
     *
     * @param publishedInPod the devices published into the pod, read when asked
     * @param publishedNow the device a publish has just limited in the pod, whose line is not stale
     */
    public void pruneStale(String podUid, Supplier<Set<DeviceNumber>> publishedInPod,
                           Optional<DeviceNumber> publishedNow) {
        Optional<Path> cgroup = cgroups.find(podUid).cgroup();
        if (cgroup.isEmpty()) {
            return;
        }
        pruneStale(new PodLines(podUid, cgroup.get(), writer.limitedDevices(cgroup.get())), publishedInPod,
                publishedNow);
    }

    /**
     * {@link #pruneStale(String, Supplier, Optional)} with the pod cgroup's lines as a write
     * just read them back ({@link #apply}, {@link #lift}): no second read of the same file.
     */
    public void pruneStale(PodLines lines, Supplier<Set<DeviceNumber>> publishedInPod,
                           Optional<DeviceNumber> publishedNow) {
        String podUid = lines.podUid();
        List<DeviceNumber> others = lines.devices().stream()
                .filter(device -> !publishedNow.map(device::equals).orElse(false))
                .filter(isOurVolume)
                .toList();
        if (others.isEmpty()) {
            return;
        }
        Set<DeviceNumber> published = publishedInPod.get();
        for (DeviceNumber device : others) {
            if (!published.contains(device)) {
                log.info("removing a stale limit line for {} from pod {}: no volume on that device is published into"
                        + " it", device, podUid);
                writer.remove(lines.cgroup(), device);
            }
        }
    }

    /**
     * Writes the limits for the device into the pod's cgroup (and on v1 into its container
     * cgroups, watching for more); Unavailable when the cgroup is not there yet.
     */
    public PodLines apply(String podUid, DeviceNumber device, IoLimits limits) {
        Path cgroup = cgroups.require(podUid);
        if (writer.copiesToContainers()) {
            watcher.watch(cgroup); // before the writes: a container made meanwhile is caught either way
        }
        return new PodLines(podUid, cgroup, writer.apply(cgroup, device, limits));
    }

    /**
     * Lifts the device's limits from the pod's cgroup and everything below it, if the cgroup still
     * exists; the lines left in it, empty when it is gone.
     */
    public Optional<PodLines> lift(String podUid, DeviceNumber device) {
        Optional<Path> cgroup = cgroups.find(podUid).cgroup();
        return cgroup.map(path -> {
            Set<DeviceNumber> left = writer.remove(path, device);
            if (writer.copiesToContainers() && left.isEmpty()) {
                watcher.unwatch(path);
            }
            return new PodLines(podUid, path, left);
        });
    }

    /** The devices a pod's cgroup holds limit lines for, as read right after a write to it. */
    public record PodLines(String podUid, Path cgroup, Set<DeviceNumber> devices) {
        public PodLines {
            devices = Set.copyOf(devices);
        }
    }

    /**
     * cgroup v1, at start-up: for every pod with a publish mount whose cgroup holds throttle
     * lines, copies them into every container cgroup (ones made while no plugin ran) and watches
     * for more. The pod cgroup's own files say what the pod should have.
     */
    public void resume() {
        if (!writer.copiesToContainers()) {
            return;
        }
        Set<String> pods = new LinkedHashSet<>();
        for (MountEntry entry : mountTable.read()) {
            if (entry.mountPoint().startsWith(kubeletDir)) {
                PodUid.fromTargetPath(entry.mountPoint(), kubeletDir).ifPresent(pods::add);
            }
        }
        for (String pod : pods) {
            try {
                Optional<Path> cgroup = cgroups.find(pod).cgroup();
                if (cgroup.isPresent() && !writer.limitedDevices(cgroup.get()).isEmpty()) {
                    watcher.watch(cgroup.get());
                    writer.copyPodLimitsToAll(cgroup.get());
                    log.info("cgroup v1: limits of pod {} resumed in the cgroups below {}", pod, cgroup.get());
                }
            } catch (RuntimeException e) {
                log.warn("cgroup v1: could not resume the limits of pod {}: {}", pod, e.getMessage());
            }
        }
    }

    /** The pods with a publish mount of this filesystem device (or of this block device node). */
    @Override
    public Set<String> podsUsing(DeviceNumber device, Optional<String> deviceNodeRoot) {
        return podsUsing(mountTable.snapshot(), device, deviceNodeRoot);
    }

    /** As {@link #podsUsing(DeviceNumber, Optional)}, in a mount table read already made. */
    @Override
    public Set<String> podsUsing(MountTable.Snapshot table, DeviceNumber device, Optional<String> deviceNodeRoot) {
        Set<String> pods = new LinkedHashSet<>();
        for (MountEntry entry : publishMounts(table.selected(List.of(), Optional.of(device),
                deviceNodeRoot.isPresent()), device, deviceNodeRoot)) {
            PodUid.fromTargetPath(entry.mountPoint(), kubeletDir).ifPresent(pods::add);
        }
        return pods;
    }

    /** Rewrites a volume's limits in every pod using it, as a filesystem or as a block device. */
    @Override
    public void applyToPodsUsing(ManagedVolume volume) {
        DeviceNumber device = DeviceNumber.of(volume.devicePath());
        reapply(device, Optional.of(deviceNodeRoot(volume.devicePath())), volume.limits());
    }

    /**
     * The device node's path inside devtmpfs (the device directory this was given), which is the
     * root mountinfo shows for a bind mount of that node: how a raw block publish is recognised.
     */
    @Override
    public String deviceNodeRoot(Path device) {
        try {
            Path real = device.toRealPath();
            return real.startsWith(devDir) ? "/" + devDir.relativize(real) : real.toString();
        } catch (IOException e) {
            throw DriverException.failedPrecondition("device " + device + " of the volume is missing: " + e.getMessage());
        }
    }

    /** Re-applies limits (after a resize or a change of QoS) to every pod using the volume. */
    public void reapply(DeviceNumber device, Optional<String> deviceNodeRoot, IoLimits limits) {
        for (String pod : podsUsing(device, deviceNodeRoot)) {
            if (cgroups.find(pod).cgroup().isPresent()) {
                apply(pod, device, limits);
            }
        }
    }

    /**
     * Mounts that publish the volume, among mount table entries already read: bind mounts of its
     * filesystem (same device number), or bind mounts of its device node (a devtmpfs mount whose
     * root is the node's path in /dev).
     */
    private List<MountEntry> publishMounts(List<MountEntry> mounts, DeviceNumber device,
                                          Optional<String> deviceNodeRoot) {
        return mounts.stream()
                .filter(e -> e.mountPoint().startsWith(kubeletDir))
                .filter(e -> e.device().equals(device) || deviceNodeRoot
                        .map(root -> e.fsType().equals("devtmpfs") && root.equals(e.root())).orElse(false))
                .toList();
    }
}
