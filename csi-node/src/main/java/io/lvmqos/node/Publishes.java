package io.lvmqos.node;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.mount.KubeletPaths;
import io.lvmqos.mount.MountEntry;
import io.lvmqos.mount.MountTable;
import io.lvmqos.mount.Mounter;
import io.lvmqos.mount.PinnedMount;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Where volumes are published on this node, for the two questions a publish and an unpublish
 * ask, answered from the few paths that matter, each pinned through descriptors and its mount
 * looked up by id ({@link Mounter#pin}), so that neither call reads the whole mount table and its
 * cost does not grow with the volumes on the node.
 *
 * <ul>
 * <li>Which devices are published into a pod: kubelet's layout gives a pod's publish targets in
 *     its own directory ({@link KubeletPaths#podTargets}), so this is O(volumes of the pod). It is
 *     asked only to prune stale limit lines; whether one device is still published into a pod
 *     after an unpublish is answered from the remembered targets below instead.</li>
 * <li>Where else a device is published (the single-writer access modes): kubelet's layout puts a
 *     filesystem volume's targets under each pod's directory, keyed by the PV's name, which the
 *     driver does not know and which a second PV of the same volume handle would not share; finding
 *     them there would visit every pod. So the driver keeps, per device, the targets it bound it
 *     to (recorded after the bind, under the volume's lock, and dropped only after a successful
 *     unmount), seeded once per process from one read of the mount table, and every remembered
 *     target counts only if the mount pinned there now holds the device. The mount table stays the
 *     truth: a remembered target that no longer holds the device is forgotten, and one the
 *     driver did not record cannot be missed unless something other than the driver bound the
 *     volume into the kubelet directory after this process started (kubelet never does).</li>
 * </ul>
 */
public final class Publishes {

    private final KubeletPaths paths;
    private final Mounter mounter;
    private final MountTable mountTable;
    private final Path devDir;
    private final Map<DeviceNumber, Set<Path>> targets = new ConcurrentHashMap<>();
    private final Map<Path, DeviceNumber> devices = new ConcurrentHashMap<>();
    private volatile boolean seeded;

    /** @param devDir where the host's devtmpfs is, to read the device of a raw block publish when seeding */
    public Publishes(KubeletPaths paths, Mounter mounter, MountTable mountTable, Path devDir) {
        this.paths = paths;
        this.mounter = mounter;
        this.mountTable = mountTable;
        this.devDir = devDir;
    }

    /**
     * The devices published into the pod now, filesystems and raw block devices alike: each of
     * the pod's targets pinned, its mount's device read through the pin.
     */
    Set<DeviceNumber> inPod(String podUid) {
        Set<DeviceNumber> found = new LinkedHashSet<>();
        for (Path target : paths.podTargets(podUid)) {
            held(target).ifPresent(found::add);
        }
        return found;
    }

    /**
     * Whether {@code device} is published into the pod now at a target the driver knows of (the
     * unpublish asking has already had its own target forgotten): each known target of the device
     * in the pod is pinned and checked, none else is looked at. Unlike {@link #inPod}, this lists
     * no directory, so it does not grow with the pod's volumes, and it answers from the same
     * remembered targets, seeded from the mount table, as the second-writer check.
     */
    boolean inPod(String podUid, DeviceNumber device) {
        return holding(device, other -> PodUid.fromTargetPath(other, paths.root()).map(podUid::equals).orElse(false))
                .isPresent();
    }

    /** A target other than {@code target} where {@code device} is published now, if any. */
    Optional<Path> elsewhere(DeviceNumber device, Path target) {
        return holding(device, other -> !other.equals(target));
    }

    /**
     * The first remembered target of the device, among those {@code among} accepts, where the
     * mount pinned now holds the device; a remembered target that no longer holds it is forgotten.
     */
    private Optional<Path> holding(DeviceNumber device, Predicate<Path> among) {
        seed();
        for (Path other : List.copyOf(targets.getOrDefault(device, Set.of()))) {
            if (!among.test(other)) {
                continue;
            }
            if (held(other).map(device::equals).orElse(false)) {
                return Optional.of(other);
            }
            forget(other, device);
        }
        return Optional.empty();
    }

    /** The device is mounted at the target (called after the bind, under the volume's lock). */
    void published(DeviceNumber device, Path target) {
        DeviceNumber before = devices.put(target, device);
        if (before != null && !before.equals(device)) {
            forget(target, before);
        }
        targets.computeIfAbsent(device, d -> ConcurrentHashMap.newKeySet()).add(target);
    }

    /** Nothing is mounted at the target any more (called after a successful unmount). */
    void unpublished(Path target) {
        DeviceNumber device = devices.remove(target);
        if (device != null) {
            forget(target, device);
        }
    }

    private void forget(Path target, DeviceNumber device) {
        targets.computeIfPresent(device, (d, set) -> {
            set.remove(target);
            return set.isEmpty() ? null : set;
        });
        devices.remove(target, device);
    }

    /** The device of the mount at the path now, through a pin; empty when nothing is mounted or nothing is there. */
    private Optional<DeviceNumber> held(Path target) {
        Optional<PinnedMount> pinned = mounter.pinIfPresent(target);
        try (PinnedMount mount = pinned.orElse(null)) {
            return mount == null ? Optional.empty() : Optional.of(mount.device());
        }
    }

    /**
     * The publishes made before this process started, from one read of the mount table on the
     * first question that needs them. Publishes recorded meanwhile stay; a line read here whose
     * mount is gone by the time it is asked about is forgotten then.
     */
    private void seed() {
        if (seeded) {
            return;
        }
        synchronized (this) {
            if (seeded) {
                return;
            }
            for (MountEntry entry : mountTable.read()) {
                if (paths.isTargetPath(entry.mountPoint())) {
                    deviceOf(entry).ifPresent(device -> targets.computeIfAbsent(device,
                            d -> ConcurrentHashMap.newKeySet()).add(entry.mountPoint()));
                }
            }
            seeded = true;
        }
    }

    /** A filesystem's own device, or for a bind of a device node from devtmpfs the node's (empty if it left /dev). */
    private Optional<DeviceNumber> deviceOf(MountEntry entry) {
        if (!"devtmpfs".equals(entry.fsType()) || entry.root().equals("/")) {
            return Optional.of(entry.device());
        }
        Path node = devDir.resolve(entry.root().substring(1)).normalize();
        if (!node.startsWith(devDir)) {
            return Optional.empty();
        }
        try {
            return Optional.of(DeviceNumber.of(node));
        } catch (RuntimeException gone) {
            return Optional.empty();
        }
    }
}
