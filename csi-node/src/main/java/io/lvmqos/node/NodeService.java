package io.lvmqos.node;

import static io.lvmqos.errors.DriverException.requireArgument;

import csi.v1.Csi;
import csi.v1.NodeGrpc;
import io.grpc.stub.StreamObserver;
import io.lvmqos.controller.VolumeExpansion;
import io.lvmqos.device.BlockDeviceProbe;
import io.lvmqos.device.DeviceContents;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.device.Filesystems;
import io.lvmqos.device.FsType;
import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.mount.HostPath;
import io.lvmqos.mount.KubeletPaths;
import io.lvmqos.mount.MountEntry;
import io.lvmqos.mount.MountOptions;
import io.lvmqos.mount.MountTable;
import io.lvmqos.mount.Mounter;
import io.lvmqos.mount.PinnedMount;
import io.lvmqos.volume.Capabilities;
import io.lvmqos.volume.IoLimits;
import io.lvmqos.volume.KeyedLocks;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.Topology;
import io.lvmqos.volume.VolumeCatalog;
import io.lvmqos.volume.VolumeId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CSI Node: stage (format if blank, mount), publish (bind mount into the pod's volume directory
 * and, before returning, limit the pod's I/O on the device in its cgroup), and the reverse.
 * Mounts and limits are re-derived from the mount table and the cgroup tree, never remembered
 * (the targets a volume was bound to are kept only as places to look, each checked before it
 * counts: {@link Publishes}).
 */
public final class NodeService extends NodeGrpc.NodeImplBase {

    private static final Logger log = LoggerFactory.getLogger(NodeService.class);
    private static final long MAX_VOLUMES_PER_NODE = 1000;

    public static final List<Csi.NodeServiceCapability.RPC.Type> CAPABILITIES = List.of(
            Csi.NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME,
            Csi.NodeServiceCapability.RPC.Type.EXPAND_VOLUME,
            Csi.NodeServiceCapability.RPC.Type.GET_VOLUME_STATS,
            Csi.NodeServiceCapability.RPC.Type.VOLUME_CONDITION,
            Csi.NodeServiceCapability.RPC.Type.SINGLE_NODE_MULTI_WRITER);

    private final VolumeCatalog catalog;
    private final Lvm lvm;
    private final KubeletPaths paths;
    private final Mounter mounter;
    private final MountTable mountTable;
    private final BlockDeviceProbe probe;
    private final Filesystems filesystems;

    private final PodLimits podLimits;
    private final Publishes publishes;
    private final PodShares podShares;
    private final VolumeStats stats;
    private final KeyedLocks locks;

    public NodeService(VolumeCatalog catalog, Lvm lvm, KubeletPaths paths, Mounter mounter, MountTable mountTable,
                       BlockDeviceProbe probe, Filesystems filesystems, PodLimits podLimits, Publishes publishes,
                       PodShares podShares, VolumeStats stats, KeyedLocks locks) {
        this.publishes = publishes;
        this.podShares = podShares;
        this.catalog = catalog;
        this.lvm = lvm;
        this.paths = paths;
        this.mounter = mounter;
        this.mountTable = mountTable;
        this.probe = probe;
        this.filesystems = filesystems;
        this.podLimits = podLimits;
        this.stats = stats;
        this.locks = locks;
    }

    @Override
    public void nodeStageVolume(Csi.NodeStageVolumeRequest request, StreamObserver<Csi.NodeStageVolumeResponse> reply) {
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        requireArgument(!request.getStagingTargetPath().isEmpty(), "staging_target_path must not be empty");
        requireArgument(request.hasVolumeCapability(), "volume_capability must be given");
        Capabilities.requireSupported(List.of(request.getVolumeCapability()));
        Path staging = paths.checkStaging(Path.of(request.getStagingTargetPath()));
        ManagedVolume volume = volume(request.getVolumeId());
        try (KeyedLocks.Held held = locks.lock(volume.id().lvmPath())) {
            if (request.getVolumeCapability().hasMount()) {
                stage(volume, staging, request.getVolumeCapability());
            }
        }
        reply.onNext(Csi.NodeStageVolumeResponse.getDefaultInstance());
        reply.onCompleted();
    }

    private void stage(ManagedVolume volume, Path staging, Csi.VolumeCapability capability) {
        Path device = activeDevice(volume);
        DeviceNumber number = DeviceNumber.of(device);
        // only what is at the staging path or of this device: the rest of the table is not parsed
        List<MountEntry> mounts = mountTable.selected(List.of(staging), Optional.of(number), false);
        Optional<MountEntry> mounted = MountTable.topAt(mounts, staging);
        if (mounted.isPresent()) {
            if (mounted.get().device().equals(number)) {
                return; // staged already: a retry
            }
            throw DriverException.alreadyExists("staging path " + staging + " is already mounted from "
                    + mounted.get().source() + " (" + mounted.get().device() + "), not from " + device);
        }
        Optional<Path> elsewhere = StagedElsewhere.find(mounts, number, staging, paths::isStagingPath);
        if (elsewhere.isPresent()) {
            throw DriverException.failedPrecondition("volume " + volume.id() + " is already staged at "
                    + elsewhere.get() + "; a volume is staged at one path per node: unstage it there first, or"
                    + " stage at that path");
        }
        FsType wanted = FsType.fromCsi(capability.getMount().getFsType());
        FsType type = switch (probe.probe(device)) {
            case DeviceContents.Blank blank -> {
                filesystems.format(device, wanted, readsAsZeros(volume) ? Filesystems.Contents.ZEROED
                        : Filesystems.Contents.UNKNOWN);
                yield wanted;
            }
            case DeviceContents.Filesystem fs -> existingType(volume, fs.type(), capability);
            case DeviceContents.PartitionTable table -> throw DriverException.failedPrecondition("volume "
                    + volume.id() + " holds a " + table.type() + " partition table; it will not be formatted or mounted");
            case DeviceContents.Other other -> throw DriverException.failedPrecondition("volume " + volume.id()
                    + " holds data that is not a filesystem (" + other.description() + "); it will not be formatted");
        };
        MountOptions options = MountOptions.parse(capability.getMount().getMountFlagsList());
        if (type == FsType.XFS && volume.hasSource()) {
            // a snapshot or clone carries its origin's XFS UUID, which XFS refuses to mount twice
            options = options.withData("nouuid");
        }
        paths.createDirectory(staging);
        mounter.mount(new HostPath(device), staging, type, options);
        if (volume.hasSource()) {
            // restored or cloned larger than its source: the filesystem still has the source's size
            try (PinnedMount mount = mounter.pin(staging).orElseThrow(() -> DriverException
                    .failedPrecondition("the volume " + volume.id() + " mounted at " + staging
                            + " a moment ago is no longer mounted there"))) {
                filesystems.grow(device, mount.mounted(), type);
            }
        }
    }

    /**
     * True for a volume whose every byte reads as zero until something writes it: a thin LV made
     * empty (no snapshot or clone source) in a pool that zeroes the blocks it gives out, which the
     * driver requires of every pool it makes volumes in. Its blocks that nothing wrote read as zeros
     * from dm-thin, and a block first written in part is zeroed around the write. Before its first
     * stage nothing has written such a volume: a filesystem volume is formatted here, at its first
     * stage, and the blank device the probe found has no filesystem of anyone's.
     */
    static boolean readsAsZeros(ManagedVolume volume) {
        return volume.lv().isThin() && volume.lv().zeroing().orElse(false) && !volume.hasSource();
    }

    /**
     * The volume's device, its LV activated first when the device is missing. After a node boots,
     * nothing in the plugin's container activates LVs (there is no udev in it to run lvm's
     * autoactivation), and the host's autoactivation may be off or not have run yet; kubelet's
     * stage or publish after the reboot would otherwise find no device. Called under the volume's
     * lock; lvm takes the volume group's own lock.
     */
    private Path activeDevice(ManagedVolume volume) {
        Path device = volume.devicePath();
        if (!Files.exists(device, LinkOption.NOFOLLOW_LINKS)) {
            log.info("activating {}: its device {} is missing (inactive since the node booted?)",
                    volume.id().lvmPath(), device);
            lvm.activate(volume.id().volumeGroup(), volume.id().lvName());
        }
        return device;
    }

    private static FsType existingType(ManagedVolume volume, String found, Csi.VolumeCapability capability) {
        FsType type;
        try {
            type = FsType.fromCsi(found);
        } catch (DriverException e) {
            throw DriverException.failedPrecondition("volume " + volume.id() + " holds a " + found
                    + " filesystem, which this driver does not mount (ext4, xfs)");
        }
        String asked = capability.getMount().getFsType();
        if (!asked.isEmpty() && FsType.fromCsi(asked) != type) {
            throw DriverException.failedPrecondition("volume " + volume.id() + " already holds a " + found
                    + " filesystem but " + asked + " was asked for; it will not be reformatted");
        }
        return type;
    }

    @Override
    public void nodeUnstageVolume(Csi.NodeUnstageVolumeRequest request,
                                  StreamObserver<Csi.NodeUnstageVolumeResponse> reply) {
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        requireArgument(!request.getStagingTargetPath().isEmpty(), "staging_target_path must not be empty");
        Path staging = paths.checkStaging(Path.of(request.getStagingTargetPath()));
        try (KeyedLocks.Held held = locks.lock(lockKey(request.getVolumeId()))) {
            mounter.unmount(staging);
        }
        reply.onNext(Csi.NodeUnstageVolumeResponse.getDefaultInstance());
        reply.onCompleted();
    }

    /**
     * Bind-mounts the staged volume (or the device node, for a raw block volume) at the pod's
     * target, then caps, weights and floors on the pod's cgroup, all before kubelet starts any
     * container of the pod. A publish already there with the same capability only has its limits
     * written again; one that cannot be limited is undone.
     */
    @Override
    public void nodePublishVolume(Csi.NodePublishVolumeRequest request,
                                  StreamObserver<Csi.NodePublishVolumeResponse> reply) {
        StepTimes times = new StepTimes(log);
        // a publish that could only land in this container is refused, not done into the void
        paths.propagation().requireShared();
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        requireArgument(!request.getTargetPath().isEmpty(), "target_path must not be empty");
        requireArgument(request.hasVolumeCapability(), "volume_capability must be given");
        requireArgument(!request.getStagingTargetPath().isEmpty(), "staging_target_path must not be empty: this driver "
                + "stages volumes (STAGE_UNSTAGE_VOLUME)");
        Csi.VolumeCapability capability = request.getVolumeCapability();
        Capabilities.requireSupported(List.of(capability));
        Path target = paths.checkTarget(Path.of(request.getTargetPath()));
        Path staging = paths.checkStaging(Path.of(request.getStagingTargetPath()));
        ManagedVolume volume = volume(request.getVolumeId());
        boolean block = capability.hasBlock();
        boolean readOnly = request.getReadonly()
                || capability.getAccessMode().getMode() == Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_READER_ONLY;
        times.step("checks");
        try (KeyedLocks.Held held = locks.lock(volume.id().lvmPath())) {
            times.step("lock");
            Path device = activeDevice(volume);
            // read afresh: device-mapper minors change when an LV is activated again
            DeviceNumber number = DeviceNumber.of(device);
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
                limitPod(volume, request, target, number, times);
            } catch (RuntimeException e) {
                if (!alreadyPublished) {
                    undoPublish(target);
                }
                throw e;
            }
        } catch (IOException e) {
            throw DriverException.internal("publishing " + request.getVolumeId() + " at " + target + " failed: " + e, e);
        }
        times.log(log, "publish " + volume.id() + " at " + target);
        reply.onNext(Csi.NodePublishVolumeResponse.getDefaultInstance());
        reply.onCompleted();
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
    private void limitPod(ManagedVolume volume, Csi.NodePublishVolumeRequest request, Path target, DeviceNumber number,
                          StepTimes times) {
        IoLimits limits = volume.limits();
        boolean guaranteed = !volume.qos().guarantee().isNone();
        if (limits.isUnlimited() && !guaranteed) {
            return;
        }
        Optional<String> pod = PodUid.of(request.getVolumeContextMap(), target, paths.root());
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

    @Override
    public void nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest request,
                                    StreamObserver<Csi.NodeUnpublishVolumeResponse> reply) {
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        requireArgument(!request.getTargetPath().isEmpty(), "target_path must not be empty");
        Path target = paths.checkTarget(Path.of(request.getTargetPath()));
        StepTimes times = new StepTimes(log);
        try (KeyedLocks.Held held = locks.lock(lockKey(request.getVolumeId()))) {
            times.step("lock");
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
        times.log(log, "unpublish " + target);
        reply.onNext(Csi.NodeUnpublishVolumeResponse.getDefaultInstance());
        reply.onCompleted();
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

    /** A volume path of stats or expand: where kubelet stages or publishes, or NOT_FOUND. */
    private Path publishedPath(String requested) {
        return paths.volumePath(Path.of(requested)).orElseThrow(() -> DriverException.notFound("no volume of this"
                + " driver can be at " + Echo.of(requested) + ": it is not a staging or publish path under " + paths.root()));
    }

    @Override
    public void nodeGetVolumeStats(Csi.NodeGetVolumeStatsRequest request,
                                   StreamObserver<Csi.NodeGetVolumeStatsResponse> reply) {
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        requireArgument(!request.getVolumePath().isEmpty(), "volume_path must not be empty");
        ManagedVolume volume = volume(request.getVolumeId());
        Path path = publishedPath(request.getVolumePath());
        Optional<PinnedMount> pinned = mounter.pin(path);
        try (PinnedMount mount = pinned.orElse(null)) {
            reply.onNext(stats.of(volume, path, pinned));
        }
        reply.onCompleted();
    }

    @Override
    public void nodeExpandVolume(Csi.NodeExpandVolumeRequest request,
                                 StreamObserver<Csi.NodeExpandVolumeResponse> reply) {
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        requireArgument(!request.getVolumePath().isEmpty(), "volume_path must not be empty");
        ManagedVolume volume = volume(request.getVolumeId());
        Path volumePath = publishedPath(request.getVolumePath());
        long required = request.getCapacityRange().getRequiredBytes();
        long limit = request.getCapacityRange().getLimitBytes();
        if (required < 0 || limit < 0 || (limit > 0 && required > limit)) {
            throw DriverException.invalidArgument("capacity_range is not valid: required_bytes=" + required
                    + ", limit_bytes=" + limit);
        }
        ManagedVolume grown;
        // the mount at the path is pinned before anything changes and read only through the pin
        Optional<PinnedMount> pinned = mounter.pin(volumePath);
        try (KeyedLocks.Held held = locks.lock(volume.id().lvmPath());
             PinnedMount mount = pinned.orElse(null)) {
            boolean block = mount != null ? mount.isDeviceNode()
                    : request.hasVolumeCapability() && request.getVolumeCapability().hasBlock();
            DeviceNumber before = DeviceNumber.of(volume.devicePath());
            if (!block && (mount == null || !mount.entry().device().equals(before))) {
                throw DriverException.notFound("volume " + volume.id() + " is not mounted at " + volumePath
                        + (mount == null ? "" : " (" + mount.entry().source() + " " + mount.entry().device() + " is)"));
            }
            if (required > volume.sizeBytes()) {
                // ControllerExpandVolume grows the LV first; this is for a resize begun before it did,
                // with the same check of the room before any change
                new VolumeExpansion(lvm).grow(volume.id(), request.getCapacityRange());
            }
            grown = catalog.refresh(volume.id()).orElseThrow(() -> DriverException.notFound(
                    "volume " + volume.id() + " vanished while it was being expanded"));
            DeviceNumber number = DeviceNumber.of(grown.devicePath());
            if (!block) {
                filesystems.grow(grown.devicePath(), mount.mounted(), FsType.fromCsi(mount.entry().fsType()));
            }
            // per-GiB limits follow the new size, for every pod using the volume now
            Optional<String> nodeRoot = block ? Optional.of(podLimits.deviceNodeRoot(grown.devicePath())) : Optional.empty();
            if (!grown.limits().isUnlimited()) {
                podLimits.reapply(number, nodeRoot, grown.limits());
            }
        }
        reply.onNext(Csi.NodeExpandVolumeResponse.newBuilder().setCapacityBytes(grown.sizeBytes()).build());
        reply.onCompleted();
    }

    @Override
    public void nodeGetCapabilities(Csi.NodeGetCapabilitiesRequest request,
                                    StreamObserver<Csi.NodeGetCapabilitiesResponse> reply) {
        Csi.NodeGetCapabilitiesResponse.Builder answer = Csi.NodeGetCapabilitiesResponse.newBuilder();
        for (Csi.NodeServiceCapability.RPC.Type type : CAPABILITIES) {
            answer.addCapabilities(Csi.NodeServiceCapability.newBuilder()
                    .setRpc(Csi.NodeServiceCapability.RPC.newBuilder().setType(type)));
        }
        reply.onNext(answer.build());
        reply.onCompleted();
    }

    @Override
    public void nodeGetInfo(Csi.NodeGetInfoRequest request, StreamObserver<Csi.NodeGetInfoResponse> reply) {
        reply.onNext(Csi.NodeGetInfoResponse.newBuilder()
                .setNodeId(catalog.node())
                .setMaxVolumesPerNode(MAX_VOLUMES_PER_NODE)
                .setAccessibleTopology(Topology.of(catalog.node()))
                .build());
        reply.onCompleted();
    }

    private ManagedVolume volume(String volumeId) {
        return VolumeId.parse(VolumeId.Kind.VOLUME, volumeId).flatMap(catalog::find)
                .orElseThrow(() -> DriverException.notFound("volume " + Echo.of(volumeId) + " does not exist on node "
                        + catalog.node()));
    }

    private static String lockKey(String volumeId) {
        return VolumeId.parse(VolumeId.Kind.VOLUME, volumeId).map(VolumeId::lvmPath).orElse(volumeId);
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
