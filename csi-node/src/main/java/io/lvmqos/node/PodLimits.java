package io.lvmqos.node;

import io.lvmqos.cgroup.CgroupLimitsWriter;
import io.lvmqos.cgroup.PodCgroups;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.mount.MountEntry;
import io.lvmqos.mount.MountTable;
import io.lvmqos.volume.IoLimits;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A volume's I/O limits on the cgroups of the pods that use it. Which pods use a volume is read
 * from the mount table (the publish bind mounts under {@code <kubelet>/pods/<uid>/}), so nothing
 * is remembered that a restart could lose.
 */
public final class PodLimits {

    private final PodCgroups cgroups;
    private final CgroupLimitsWriter writer;
    private final MountTable mountTable;
    private final Path kubeletDir;

    public PodLimits(PodCgroups cgroups, CgroupLimitsWriter writer, MountTable mountTable, Path kubeletDir) {
        this.cgroups = cgroups;
        this.writer = writer;
        this.mountTable = mountTable;
        this.kubeletDir = kubeletDir;
    }

    /** Writes the limits for the device into the pod's cgroup; Unavailable when the cgroup is not there. */
    public void apply(String podUid, DeviceNumber device, IoLimits limits) {
        writer.apply(cgroups.require(podUid), device, limits);
    }

    /** Lifts the device's limits from the pod's cgroup, if the cgroup still exists. */
    public void lift(String podUid, DeviceNumber device) {
        Optional<Path> cgroup = cgroups.find(podUid).cgroup();
        cgroup.ifPresent(path -> writer.remove(path, device));
    }

    public Optional<IoLimits> current(String podUid, DeviceNumber device) {
        return cgroups.find(podUid).cgroup().flatMap(path -> writer.read(path, device));
    }

    /** The pods with a publish mount of this filesystem device (or of this block device node). */
    public Set<String> podsUsing(DeviceNumber device, Optional<String> deviceNodeRoot) {
        Set<String> pods = new LinkedHashSet<>();
        for (MountEntry entry : publishMounts(device, deviceNodeRoot)) {
            PodUid.fromTargetPath(entry.mountPoint(), kubeletDir).ifPresent(pods::add);
        }
        return pods;
    }

    /** Rewrites a volume's limits in every pod using it, as a filesystem or as a block device. */
    public void reapply(io.lvmqos.volume.ManagedVolume volume) {
        DeviceNumber device = DeviceNumber.of(volume.devicePath());
        reapply(device, Optional.of(NodeService.deviceNodeRoot(volume.devicePath())), volume.limits());
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
     * Mounts that publish the volume: bind mounts of its filesystem (same device number), or
     * bind mounts of its device node (a devtmpfs mount whose root is the node's path in /dev).
     */
    public List<MountEntry> publishMounts(DeviceNumber device, Optional<String> deviceNodeRoot) {
        return publishMounts(mountTable.read(), device, deviceNodeRoot);
    }

    /** As {@link #publishMounts(DeviceNumber, Optional)}, among mount table entries already read. */
    public List<MountEntry> publishMounts(List<MountEntry> mounts, DeviceNumber device,
                                          Optional<String> deviceNodeRoot) {
        return mounts.stream()
                .filter(e -> e.mountPoint().startsWith(kubeletDir))
                .filter(e -> e.device().equals(device) || deviceNodeRoot.map(root -> root.equals(e.root())).orElse(false))
                .toList();
    }
}
