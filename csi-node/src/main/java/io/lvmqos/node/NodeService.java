package io.lvmqos.node;

import static io.lvmqos.errors.DriverException.requireArgument;

import csi.v1.Csi;
import csi.v1.NodeGrpc;
import io.grpc.stub.StreamObserver;
import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import io.lvmqos.mount.KubeletPaths;
import io.lvmqos.mount.Mounter;
import io.lvmqos.mount.PinnedMount;
import io.lvmqos.volume.Capabilities;
import io.lvmqos.volume.KeyedLocks;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.Topology;
import io.lvmqos.volume.VolumeCatalog;
import io.lvmqos.volume.VolumeId;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CSI Node: stage (format if blank, mount), publish (bind mount into the pod's volume directory
 * and, before returning, limit the pod's I/O on the device in its cgroup), and the reverse.
 * Mounts and limits are re-derived from the mount table and the cgroup tree, never remembered
 * (the targets a volume was bound to are kept only as places to look, each checked before it
 * counts: {@link Publishes}). This class validates each request, takes the volume's lock and
 * hands the work to {@link StageFlow}, {@link PublishFlow} or {@link ExpandFlow}.
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
    private final KubeletPaths paths;
    private final Mounter mounter;
    private final VolumeStats stats;
    private final KeyedLocks locks;
    private final StageFlow stage;
    private final PublishFlow publish;
    private final ExpandFlow expand;

    public NodeService(VolumeCatalog catalog, KubeletPaths paths, Mounter mounter, VolumeStats stats, KeyedLocks locks,
                       StageFlow stage, PublishFlow publish, ExpandFlow expand) {
        this.catalog = catalog;
        this.paths = paths;
        this.mounter = mounter;
        this.stats = stats;
        this.locks = locks;
        this.stage = stage;
        this.publish = publish;
        this.expand = expand;
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
                stage.stage(volume, staging, request.getVolumeCapability());
            }
        }
        reply.onNext(Csi.NodeStageVolumeResponse.getDefaultInstance());
        reply.onCompleted();
    }

    @Override
    public void nodeUnstageVolume(Csi.NodeUnstageVolumeRequest request,
                                  StreamObserver<Csi.NodeUnstageVolumeResponse> reply) {
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        requireArgument(!request.getStagingTargetPath().isEmpty(), "staging_target_path must not be empty");
        Path staging = paths.checkStaging(Path.of(request.getStagingTargetPath()));
        try (KeyedLocks.Held held = locks.lock(lockKey(request.getVolumeId()))) {
            stage.unstage(staging);
        }
        reply.onNext(Csi.NodeUnstageVolumeResponse.getDefaultInstance());
        reply.onCompleted();
    }

    /** Bind-mounts the volume at the pod's target and limits the pod's I/O on it: {@link PublishFlow#publish}. */
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
        boolean readOnly = request.getReadonly()
                || capability.getAccessMode().getMode() == Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_READER_ONLY;
        times.step("checks");
        try (KeyedLocks.Held held = locks.lock(volume.id().lvmPath())) {
            times.step("lock");
            publish.publish(volume, capability, staging, target, readOnly, request.getVolumeContextMap(), times);
        } catch (IOException e) {
            throw DriverException.internal("publishing " + request.getVolumeId() + " at " + target + " failed: " + e, e);
        }
        times.log(log, "publish " + volume.id() + " at " + target);
        reply.onNext(Csi.NodePublishVolumeResponse.getDefaultInstance());
        reply.onCompleted();
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
            publish.unpublish(target, times);
        }
        times.log(log, "unpublish " + target);
        reply.onNext(Csi.NodeUnpublishVolumeResponse.getDefaultInstance());
        reply.onCompleted();
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
        // the mount at the path is pinned before anything changes and read only through the pin
        Optional<PinnedMount> pinned = mounter.pin(volumePath);
        ManagedVolume grown;
        try (KeyedLocks.Held held = locks.lock(volume.id().lvmPath());
             PinnedMount mount = pinned.orElse(null)) {
            grown = expand.expand(volume, volumePath, mount, request.getCapacityRange(),
                    request.hasVolumeCapability() && request.getVolumeCapability().hasBlock());
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

}
