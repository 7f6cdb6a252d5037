package io.lvmqos.node;

import csi.v1.Csi;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.guarantee.PodShares;
import io.lvmqos.mount.HostPath;
import io.lvmqos.mount.KubeletPaths;
import io.lvmqos.mount.MountEntry;
import io.lvmqos.mount.MountTable;
import io.lvmqos.mount.Mounter;
import io.lvmqos.mount.PinnedMount;
import io.lvmqos.volume.IoLimits;
import io.lvmqos.volume.ManagedVolume;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NodePublishVolume's and NodeUnpublishVolume's work, under the volume's lock that
 * {@link NodeService} holds: the bind mount at the pod's target and the pod's limits, caps,
 * weights and floors, written before the call returns; and the reverse. What is published where is
 * read from the mount table through pinned mounts; the targets a volume was bound to are kept only
 * as places to look ({@link Publishes}).
 */
public final class PublishFlow {

    private static final Logger log = LoggerFactory.getLogger(PublishFlow.class);

    private final KubeletPaths paths;
    private final Mounter mounter;
    private final MountTable mountTable;
    private final PodLimits podLimits;
    private final Publishes publishes;
    private final PodShares podShares;
    private final ActiveDevices devices;

    public PublishFlow(KubeletPaths paths, Mounter mounter, MountTable mountTable, PodLimits podLimits, Publishes publishes,
                PodShares podShares, ActiveDevices devices) {
        this.paths = paths;
        this.mounter = mounter;
        this.mountTable = mountTable;
        this.podLimits = podLimits;
        this.publishes = publishes;
        this.podShares = podShares;
        this.devices = devices;
    }

    /**
     * Bind-mounts the staged volume (or the device node, for a raw block volume) at the pod's
     * target, then caps, weights and floors on the pod's cgroup, all before kubelet starts any
     * container of the pod. A publish already there with the same capability only has its limits
     * written again; one that cannot be limited is undone.
     */
    void publish(ManagedVolume volume, Csi.VolumeCapability capability, Path staging, Path target, boolean readOnly,
                 Map<String, String> volumeContext, StepTimes times) throws IOException {
        boolean block = capability.hasBlock();
        ActiveDevices.Device active = devices.of(volume);
        Path device = active.path();
        DeviceNumber number = active.number();
        Optional<String> nodeRoot = block ? Optional.of(podLimits.deviceNodeRoot(device)) : Optional.empty();
        times.step("device");
        // what is at the target, and where else the volume is published, each from the few
        // paths that matter, pinned: no read of the whole mount table
        boolean alreadyPublished = publishedAt(target, volume, number, nodeRoot, readOnly);
        times.step("target");
        if (!alreadyPublished) {
            refuseSecondWriter(volume, capability, number, target);
        }
        times.step("elsewhere");
        if (!alreadyPublished) {
            bindAtTarget(volume, device, number, staging, target, block, readOnly);
        }
        publishes.published(number, target);
        times.step("bind (" + mountTable.lookup() + ")");
        try {
            limitPod(volume, volumeContext, target, number, times);
        } catch (RuntimeException e) {
            if (!alreadyPublished) {
                undoPublish(target);
            }
            throw e;
        }
    }

    /**
     * Unmounts the target, then lifts the pod's limit on the device unless the pod still has it
     * at another target, and works the pod's weights out again.
     */
    void unpublish(Path target, StepTimes times) {
        // What was published there comes from the mount table and the target alone: no lvm and no
        // look-up in /dev, so that a pod can be torn down while LVM hangs or the LV's device is gone.
        Optional<PublishedDevice> published = publishedAt(target);
        times.step("pin (" + mountTable.lookup() + ")");
        mounter.unmount(target,
                published.map(p -> OptionalLong.of(p.mountId())).orElse(OptionalLong.empty()));
        publishes.unpublished(target);
        times.step("unmount");
        paths.remove(target);
        times.step("remove");
        Optional<String> pod = PodUid.fromTargetPath(target, paths.root());
        if (pod.isPresent()) {
            boolean stillUsed = published.isEmpty() || stillUses(pod.get(), published.get().device());
            times.step("pod's publishes");
            Optional<PodLimits.PodLines> left = stillUsed ? Optional.empty()
                    : podLimits.lift(pod.get(), published.get().device());
            times.step("lift");
            pruneStale(pod.get(), left, Optional.empty());
            times.step("stale lines");
            if (published.isPresent()) {
                releaseShares(published.get().device(), pod.get());
            }
            times.step("shares");
        }
    }

    /**
     * Whether this volume is published at the target already, as asked; ALREADY_EXISTS when
     * something else is mounted there, or this volume with the other read-only setting. The mount
     * on the target is pinned and looked up by id.
     */
    private boolean publishedAt(Path target, ManagedVolume volume, DeviceNumber number, Optional<String> nodeRoot,
                                boolean readOnly) {
        Optional<PinnedMount> pinned = mounter.pinIfPresent(target);
        if (pinned.isEmpty()) {
            return false;
        }
        MountEntry mount;
        try (PinnedMount held = pinned.get()) {
            mount = held.entry();
        }
        boolean ours = nodeRoot.map(root -> root.equals(mount.root())).orElse(mount.device().equals(number));
        if (!ours) {
            throw DriverException.alreadyExists("target path " + target + " is already mounted from "
                    + mount.source() + " (" + mount.device() + " " + mount.root() + "), not from volume "
                    + volume.id());
        }
        if (mount.readOnly() != readOnly) {
            throw DriverException.alreadyExists("target path " + target + " is already published "
                    + (mount.readOnly() ? "read-only" : "read-write") + " with another capability");
        }
        return true;
    }

    /** The bind mount itself: of the device node for a raw block volume, else of the pinned staging mount. */
    private void bindAtTarget(ManagedVolume volume, Path device, DeviceNumber number, Path staging, Path target,
                              boolean block, boolean readOnly) throws IOException {
        if (block) {
            paths.createDirectory(target.getParent());
            paths.createFile(target);
            mounter.bindMount(new HostPath(device.toRealPath()), target, readOnly);
            return;
        }
        Optional<PinnedMount> staged = pinStaging(staging);
        try (PinnedMount mount = staged.orElse(null)) {
            if (mount == null || !mount.entry().device().equals(number)) {
                throw DriverException.failedPrecondition("volume " + volume.id() + " is not staged at "
                        + staging + ": call NodeStageVolume first");
            }
            mounter.bindMount(mount, target, readOnly); // makes the target directory on its walk
        }
    }

    /** The staging mount, pinned; empty when nothing (or no staging directory) is there. */
    private Optional<PinnedMount> pinStaging(Path staging) {
        try {
            return mounter.pin(staging);
        } catch (DriverException.NotFound noDirectory) {
            return Optional.empty();
        }
    }

    /**
     * Caps, weights and floors on the pod's cgroup before any container of the pod runs: kubelet
     * starts them only after publish returns.
     */
    private void limitPod(ManagedVolume volume, Map<String, String> volumeContext, Path target, DeviceNumber number,
                          StepTimes times) {
        IoLimits limits = volume.limits();
        boolean guaranteed = !volume.qos().guarantee().isNone();
        if (limits.isUnlimited() && !guaranteed) {
            return;
        }
        Optional<String> pod = PodUid.of(volumeContext, target, paths.root());
        if (pod.isEmpty()) {
            log.warn("volume {} has I/O limits ({}) but no pod UID is known for target {} (no {} in the volume "
                    + "context, not a kubelet pod path): published without limits", volume.id(), volume.qos(), target,
                    PodUid.CONTEXT_KEY);
            return;
        }
        if (!limits.isUnlimited()) {
            PodLimits.PodLines lines = podLimits.apply(pod.get(), number, limits);
            times.step("limits");
            pruneStale(pod.get(), Optional.of(lines), Optional.of(number));
            times.step("stale lines");
        }
        if (guaranteed) {
            podShares.published(volume, pod.get());
        }
    }

    /**
     * A stale line is a risk for later, not for this call: its removal failing is logged, not answered.
     *
     * @param justRead the pod cgroup's lines as the write just made read them back, if it made one
     * @param publishedNow the device a publish has just limited in the pod, whose line is not stale
     */
    private void pruneStale(String podUid, Optional<PodLimits.PodLines> justRead, Optional<DeviceNumber> publishedNow) {
        try {
            if (justRead.isPresent()) {
                podLimits.pruneStale(justRead.get(), () -> publishes.inPod(podUid), publishedNow);
            } else {
                podLimits.pruneStale(podUid, () -> publishes.inPod(podUid), publishedNow);
            }
        } catch (DriverException.Unavailable noCgroups) {
            log.debug("no stale limit lines to look for in pod {}: {}", podUid, noCgroups.getMessage());
        } catch (RuntimeException e) {
            log.warn("could not remove stale limit lines from pod {}: {}", podUid, e.getMessage());
        }
    }

    /**
     * The pod's weights on the device's disks are worked out again without it. The unmount is done
     * and cannot be retried from here, so a failure is logged, not answered: the next change on the
     * disk works them out again from the truth.
     */
    private void releaseShares(DeviceNumber device, String podUid) {
        try {
            podShares.released(device, podUid);
        } catch (RuntimeException e) {
            log.warn("could not work out the io.cost weights on the disks of {} again after pod {} let it go: {}",
                    device, podUid, e.getMessage());
        }
    }

    private void refuseSecondWriter(ManagedVolume volume, Csi.VolumeCapability capability, DeviceNumber number,
                                    Path target) {
        Csi.VolumeCapability.AccessMode.Mode mode = capability.getAccessMode().getMode();
        if (mode != Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER
                && mode != Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_SINGLE_WRITER) {
            return;
        }
        Optional<Path> elsewhere = publishes.elsewhere(number, target);
        if (elsewhere.isPresent()) {
            throw DriverException.failedPrecondition("volume " + volume.id() + " is already published at "
                    + elsewhere.get() + " and its access mode " + mode
                    + " allows one target only (SINGLE_NODE_MULTI_WRITER allows several)");
        }
    }

    private void undoPublish(Path target) {
        try {
            mounter.unmount(target);
            publishes.unpublished(target);
            paths.remove(target);
        } catch (RuntimeException cleanupFailure) {
            log.warn("could not undo the publish at {}: {}", target, cleanupFailure.getMessage());
        }
    }

    /**
     * Whether the pod still has the device published at another target, read after the unmount
     * from the targets where the device is published ({@link Publishes#inPod(String, DeviceNumber)}).
     * When that cannot be told (a path on the way was swapped meanwhile), the limit stays: a line
     * too many is pruned later, a lift too early frees the pod.
     */
    private boolean stillUses(String podUid, DeviceNumber device) {
        try {
            return publishes.inPod(podUid, device);
        } catch (RuntimeException e) {
            log.warn("could not tell whether pod {} still uses {} after an unpublish; its limit stays: {}", podUid,
                    device, e.getMessage());
            return true;
        }
    }

    /** The mount a publish left at a target, by id; the device it holds; for a raw block one, the node's path in devtmpfs. */
    private record PublishedDevice(long mountId, DeviceNumber device, Optional<String> nodeRoot) {
    }

    /**
     * A filesystem publish is a bind mount of the LV's filesystem, whose device the mount table
     * names. A raw block publish is a bind mount of the device node from devtmpfs: the mount table
     * names devtmpfs, and the node at the target itself gives the LV's number, even after the LV
     * is gone from /dev. Both are read through the pinned mount, never by the target's name.
     */
    private Optional<PublishedDevice> publishedAt(Path target) {
        Optional<PinnedMount> pinned = mounter.pinIfPresent(target);
        if (pinned.isEmpty()) {
            return Optional.empty();
        }
        try (PinnedMount mount = pinned.get()) {
            MountEntry entry = mount.entry();
            return Optional.of(new PublishedDevice(mount.id(), mount.device(),
                    mount.isDeviceNode() ? Optional.of(entry.root()) : Optional.empty()));
        }
    }
}
