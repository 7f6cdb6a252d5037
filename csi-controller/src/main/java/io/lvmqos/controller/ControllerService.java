package io.lvmqos.controller;

import static io.lvmqos.errors.DriverException.requireArgument;

import com.google.protobuf.Timestamp;
import csi.v1.Csi;
import csi.v1.ControllerGrpc;
import io.grpc.stub.StreamObserver;
import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import io.lvmqos.volume.Capabilities;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.QosChange;
import io.lvmqos.volume.QosParameters;
import io.lvmqos.volume.Topology;
import io.lvmqos.volume.VolumeId;
import io.lvmqos.volume.VolumeParameters;
import io.lvmqos.volume.VolumeTags;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * CSI Controller, run on every node beside its own volume groups (the external-provisioner runs
 * with --node-deployment). Validates, delegates to {@link VolumeProvisioner} (and a change of
 * limits to {@link QosModifier}), answers.
 */
public final class ControllerService extends ControllerGrpc.ControllerImplBase {

    /** The capabilities we advertise. */
    public static final List<Csi.ControllerServiceCapability.RPC.Type> CAPABILITIES = List.of(
            Csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME,
            Csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT,
            Csi.ControllerServiceCapability.RPC.Type.LIST_SNAPSHOTS,
            Csi.ControllerServiceCapability.RPC.Type.LIST_VOLUMES,
            Csi.ControllerServiceCapability.RPC.Type.GET_CAPACITY,
            Csi.ControllerServiceCapability.RPC.Type.CLONE_VOLUME,
            Csi.ControllerServiceCapability.RPC.Type.GET_VOLUME,
            Csi.ControllerServiceCapability.RPC.Type.MODIFY_VOLUME,
            Csi.ControllerServiceCapability.RPC.Type.EXPAND_VOLUME,
            Csi.ControllerServiceCapability.RPC.Type.SINGLE_NODE_MULTI_WRITER);

    private final VolumeProvisioner provisioner;
    private final QosModifier qos;
    private final String node;
    /** Every node's plugin watches its PersistentVolumes and applies their VolumeAttributesClass itself. */
    private final boolean ownersApplyClasses;

    public ControllerService(VolumeProvisioner provisioner, QosModifier qos, boolean ownersApplyClasses) {
        this.provisioner = provisioner;
        this.qos = qos;
        this.node = provisioner.catalog().node();
        this.ownersApplyClasses = ownersApplyClasses;
    }

    @Override
    public void createVolume(Csi.CreateVolumeRequest request, StreamObserver<Csi.CreateVolumeResponse> reply) {
        requireArgument(!request.getName().isEmpty(), "name must not be empty");
        Capabilities.requireSupported(request.getVolumeCapabilitiesList());
        CapacityRequest capacity = CapacityRequest.of(request.getCapacityRange());
        Map<String, String> parameters = withMutableParameters(request.getParametersMap(),
                request.getModifiableParametersMap());
        VolumeParameters volumeParameters = VolumeParameters.parse(parameters);
        if (request.hasAccessibilityRequirements()
                && !Topology.allows(request.getAccessibilityRequirements(), node)) {
            throw DriverException.resourceExhausted("this plugin provisions only on node " + node
                    + ", which is not among the requested topologies");
        }
        Optional<VolumeId> source = contentSource(request);
        String digest = VolumeTags.parametersDigest(VolumeParameters.significant(parameters));
        ManagedVolume volume = provisioner.createVolume(new VolumeProvisioner.VolumeRequest(
                request.getName(), capacity, volumeParameters, digest, source));
        Csi.Volume.Builder answer = describe(volume).toBuilder();
        if (request.hasVolumeContentSource()) {
            answer.setContentSource(request.getVolumeContentSource());
        }
        reply.onNext(Csi.CreateVolumeResponse.newBuilder().setVolume(answer).build());
        reply.onCompleted();
    }

    @Override
    public void deleteVolume(Csi.DeleteVolumeRequest request, StreamObserver<Csi.DeleteVolumeResponse> reply) {
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        VolumeId.parse(VolumeId.Kind.VOLUME, request.getVolumeId()).ifPresent(id -> {
            requireLocal(id);
            if (provisioner.catalog().volumeGroups().contains(id.volumeGroup())) {
                provisioner.deleteVolume(id);
            }
        });
        reply.onNext(Csi.DeleteVolumeResponse.getDefaultInstance());
        reply.onCompleted();
    }

    @Override
    public void validateVolumeCapabilities(Csi.ValidateVolumeCapabilitiesRequest request,
                                           StreamObserver<Csi.ValidateVolumeCapabilitiesResponse> reply) {
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        requireArgument(request.getVolumeCapabilitiesCount() > 0, "volume_capabilities must not be empty");
        findVolume(request.getVolumeId());
        Csi.ValidateVolumeCapabilitiesResponse.Builder answer = Csi.ValidateVolumeCapabilitiesResponse.newBuilder();
        Optional<String> unsupported = request.getVolumeCapabilitiesList().stream()
                .map(Capabilities::unsupportedReason).flatMap(Optional::stream).findFirst();
        if (unsupported.isPresent()) {
            answer.setMessage(unsupported.get());
        } else {
            answer.setConfirmed(Csi.ValidateVolumeCapabilitiesResponse.Confirmed.newBuilder()
                    .putAllVolumeContext(request.getVolumeContextMap())
                    .addAllVolumeCapabilities(request.getVolumeCapabilitiesList())
                    .putAllParameters(request.getParametersMap())
                    .putAllModifiableParameters(request.getModifiableParametersMap()));
        }
        reply.onNext(answer.build());
        reply.onCompleted();
    }

    @Override
    public void listVolumes(Csi.ListVolumesRequest request, StreamObserver<Csi.ListVolumesResponse> reply) {
        Page<ManagedVolume> page = Page.of(provisioner.catalog().list(VolumeId.Kind.VOLUME), request.getMaxEntries(),
                request.getStartingToken());
        Csi.ListVolumesResponse.Builder answer = Csi.ListVolumesResponse.newBuilder().setNextToken(page.nextToken());
        page.items().forEach(volume -> answer.addEntries(
                Csi.ListVolumesResponse.Entry.newBuilder().setVolume(describe(volume))));
        reply.onNext(answer.build());
        reply.onCompleted();
    }

    @Override
    public void controllerGetVolume(Csi.ControllerGetVolumeRequest request,
                                    StreamObserver<Csi.ControllerGetVolumeResponse> reply) {
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        ManagedVolume volume = findVolume(request.getVolumeId());
        reply.onNext(Csi.ControllerGetVolumeResponse.newBuilder().setVolume(describe(volume))
                .setStatus(Csi.ControllerGetVolumeResponse.VolumeStatus.getDefaultInstance()).build());
        reply.onCompleted();
    }

    @Override
    public void getCapacity(Csi.GetCapacityRequest request, StreamObserver<Csi.GetCapacityResponse> reply) {
        VolumeParameters parameters = VolumeParameters.parse(request.getParametersMap());
        long available = 0;
        if (!request.hasAccessibleTopology() || Topology.names(request.getAccessibleTopology(), node)) {
            available = provisioner.availableBytes(provisioner.volumeGroupFor(parameters), parameters);
        }
        reply.onNext(Csi.GetCapacityResponse.newBuilder().setAvailableCapacity(available).build());
        reply.onCompleted();
    }

    @Override
    public void controllerGetCapabilities(Csi.ControllerGetCapabilitiesRequest request,
                                          StreamObserver<Csi.ControllerGetCapabilitiesResponse> reply) {
        Csi.ControllerGetCapabilitiesResponse.Builder answer = Csi.ControllerGetCapabilitiesResponse.newBuilder();
        for (Csi.ControllerServiceCapability.RPC.Type type : CAPABILITIES) {
            answer.addCapabilities(Csi.ControllerServiceCapability.newBuilder()
                    .setRpc(Csi.ControllerServiceCapability.RPC.newBuilder().setType(type)));
        }
        reply.onNext(answer.build());
        reply.onCompleted();
    }

    /**
     * Changes the limits of a volume (the external-resizer calls this for a VolumeAttributesClass):
     * stored in its LV tags and rewritten at once in the cgroups of the pods using it. The resizer
     * is leader-elected and calls the plugin of its own node; for another node's volume, when the
     * plugins watch Kubernetes, the parameters are validated and OK is answered: the resizer then
     * records the class in the PersistentVolume, and the owning node's watcher applies it.
     */
    @Override
    public void controllerModifyVolume(Csi.ControllerModifyVolumeRequest request,
                                       StreamObserver<Csi.ControllerModifyVolumeResponse> reply) {
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        QosChange change = QosParameters.parseMutable(request.getMutableParametersMap());
        VolumeId id = VolumeId.parse(VolumeId.Kind.VOLUME, request.getVolumeId())
                .orElseThrow(() -> DriverException.notFound("volume " + Echo.of(request.getVolumeId()) + " does not exist"));
        if (id.isOn(node)) {
            qos.modify(id, change);
        } else if (!ownersApplyClasses) {
            throw DriverException.notFound("volume " + id + " lives on " + id.nodeDescription() + ", not on node " + node
                    + ", and the plugins do not watch Kubernetes (--watch-kubernetes) to hand the change to it");
        }
        reply.onNext(Csi.ControllerModifyVolumeResponse.getDefaultInstance());
        reply.onCompleted();
    }

    /**
     * Grows the LV here, on its node, and refuses before any change when the room lacks; a
     * filesystem is then grown by NodeExpandVolume. A raw block volume needs nothing more: its new
     * size is the LV's.
     *
     * <p>The external-resizer is leader-elected (it has no per-node mode yet), so it may call the
     * plugin of a node that does not hold the volume and cannot see its volume group. That plugin
     * answers with the requested size and node_expansion_required, changing nothing: kubelet's
     * NodeExpandVolume on the owning node then grows the LV after the same check of the room. For
     * such volumes a refusal comes at that step, after Kubernetes has recorded the new size.
     */
    @Override
    public void controllerExpandVolume(Csi.ControllerExpandVolumeRequest request,
                                       StreamObserver<Csi.ControllerExpandVolumeResponse> reply) {
        requireArgument(!request.getVolumeId().isEmpty(), "volume_id must not be empty");
        requireArgument(request.hasCapacityRange(), "capacity_range must be given");
        if (request.hasVolumeCapability()) {
            Capabilities.requireSupported(List.of(request.getVolumeCapability()));
        }
        VolumeId id = VolumeId.parse(VolumeId.Kind.VOLUME, request.getVolumeId())
                .orElseThrow(() -> DriverException.notFound("volume " + Echo.of(request.getVolumeId()) + " does not exist"));
        if (!id.isOn(node)) {
            CapacityRequest.of(request.getCapacityRange());
            reply.onNext(Csi.ControllerExpandVolumeResponse.newBuilder()
                    .setCapacityBytes(request.getCapacityRange().getRequiredBytes())
                    .setNodeExpansionRequired(true).build());
            reply.onCompleted();
            return;
        }
        ManagedVolume volume = provisioner.expandVolume(id, request.getCapacityRange());
        boolean block = request.hasVolumeCapability() && request.getVolumeCapability().hasBlock();
        reply.onNext(Csi.ControllerExpandVolumeResponse.newBuilder().setCapacityBytes(volume.sizeBytes())
                .setNodeExpansionRequired(!block).build());
        reply.onCompleted();
    }

    @Override
    public void createSnapshot(Csi.CreateSnapshotRequest request, StreamObserver<Csi.CreateSnapshotResponse> reply) {
        requireArgument(!request.getName().isEmpty(), "name must not be empty");
        requireArgument(!request.getSourceVolumeId().isEmpty(), "source_volume_id must not be empty");
        VolumeId source = VolumeId.parse(VolumeId.Kind.VOLUME, request.getSourceVolumeId())
                .orElseThrow(() -> DriverException.notFound("source volume " + Echo.of(request.getSourceVolumeId())
                        + " does not exist"));
        ManagedVolume snapshot = provisioner.createSnapshot(request.getName(), source);
        reply.onNext(Csi.CreateSnapshotResponse.newBuilder().setSnapshot(describeSnapshot(snapshot)).build());
        reply.onCompleted();
    }

    @Override
    public void deleteSnapshot(Csi.DeleteSnapshotRequest request, StreamObserver<Csi.DeleteSnapshotResponse> reply) {
        requireArgument(!request.getSnapshotId().isEmpty(), "snapshot_id must not be empty");
        VolumeId.parse(VolumeId.Kind.SNAPSHOT, request.getSnapshotId()).ifPresent(id -> {
            requireLocal(id);
            if (provisioner.catalog().volumeGroups().contains(id.volumeGroup())) {
                provisioner.deleteSnapshot(id);
            }
        });
        reply.onNext(Csi.DeleteSnapshotResponse.getDefaultInstance());
        reply.onCompleted();
    }

    @Override
    public void listSnapshots(Csi.ListSnapshotsRequest request, StreamObserver<Csi.ListSnapshotsResponse> reply) {
        List<ManagedVolume> snapshots = provisioner.catalog().list(VolumeId.Kind.SNAPSHOT).stream()
                .filter(s -> request.getSnapshotId().isEmpty() || VolumeId.parse(VolumeId.Kind.SNAPSHOT, request.getSnapshotId())
                        .filter(wanted -> wanted.sameVolume(s.id())).isPresent())
                .filter(s -> request.getSourceVolumeId().isEmpty()
                        || s.source().equals(Optional.of(request.getSourceVolumeId())))
                .toList();
        Page<ManagedVolume> page = Page.of(snapshots, request.getMaxEntries(), request.getStartingToken());
        Csi.ListSnapshotsResponse.Builder answer = Csi.ListSnapshotsResponse.newBuilder().setNextToken(page.nextToken());
        page.items().forEach(s -> answer.addEntries(
                Csi.ListSnapshotsResponse.Entry.newBuilder().setSnapshot(describeSnapshot(s))));
        reply.onNext(answer.build());
        reply.onCompleted();
    }

    /** Implemented but not advertised: csi-sanity v5.3.1 rejects GET_SNAPSHOT as an unknown capability. */
    @Override
    public void getSnapshot(Csi.GetSnapshotRequest request, StreamObserver<Csi.GetSnapshotResponse> reply) {
        requireArgument(!request.getSnapshotId().isEmpty(), "snapshot_id must not be empty");
        ManagedVolume snapshot = VolumeId.parse(VolumeId.Kind.SNAPSHOT, request.getSnapshotId())
                .flatMap(id -> provisioner.catalog().refresh(id))
                .orElseThrow(() -> DriverException.notFound("snapshot " + Echo.of(request.getSnapshotId()) + " does not exist"));
        reply.onNext(Csi.GetSnapshotResponse.newBuilder().setSnapshot(describeSnapshot(snapshot)).build());
        reply.onCompleted();
    }

    private Optional<VolumeId> contentSource(Csi.CreateVolumeRequest request) {
        if (!request.hasVolumeContentSource()) {
            return Optional.empty();
        }
        Csi.VolumeContentSource source = request.getVolumeContentSource();
        return switch (source.getTypeCase()) {
            case SNAPSHOT -> Optional.of(VolumeId.parse(VolumeId.Kind.SNAPSHOT, source.getSnapshot().getSnapshotId())
                    .orElseThrow(() -> DriverException.notFound("source snapshot "
                            + source.getSnapshot().getSnapshotId() + " does not exist")));
            case VOLUME -> Optional.of(VolumeId.parse(VolumeId.Kind.VOLUME, source.getVolume().getVolumeId())
                    .orElseThrow(() -> DriverException.notFound("source volume " + Echo.of(source.getVolume().getVolumeId())
                            + " does not exist")));
            case TYPE_NOT_SET -> throw DriverException.invalidArgument("volume_content_source has no snapshot or volume");
        };
    }

    /**
     * mutable_parameters may carry only QoS keys, and they win over the StorageClass's parameters;
     * their values are read once, with the rest, by {@link VolumeParameters#parse}.
     */
    private static Map<String, String> withMutableParameters(Map<String, String> parameters,
                                                             Map<String, String> mutable) {
        QosParameters.requireMutableKeys(mutable);
        Map<String, String> merged = new HashMap<>(parameters);
        merged.putAll(mutable);
        return merged;
    }

    private ManagedVolume findVolume(String volumeId) {
        return VolumeId.parse(VolumeId.Kind.VOLUME, volumeId)
                .flatMap(id -> provisioner.catalog().refresh(id).filter(v -> id.isOn(node)))
                .orElseThrow(() -> DriverException.notFound("volume " + volumeId + " does not exist on node " + node));
    }

    private void requireLocal(VolumeId id) {
        if (!id.isOn(node)) {
            throw DriverException.failedPrecondition(id + " lives on " + id.nodeDescription() + "; this plugin serves node "
                    + node + " and cannot reach it");
        }
    }

    /**
     * The volume as CSI describes it. No volume_context: the limits are in the LV's tags, and a copy
     * in the PersistentVolume's attributes, which Kubernetes never updates, would go stale at the
     * first ControllerModifyVolume.
     */
    private Csi.Volume describe(ManagedVolume volume) {
        return Csi.Volume.newBuilder()
                .setVolumeId(volume.id().toString())
                .setCapacityBytes(volume.sizeBytes())
                .addAccessibleTopology(Topology.of(node))
                .build();
    }

    private static Csi.Snapshot describeSnapshot(ManagedVolume snapshot) {
        return Csi.Snapshot.newBuilder()
                .setSnapshotId(snapshot.id().toString())
                .setSourceVolumeId(snapshot.source().orElse(""))
                .setSizeBytes(snapshot.sizeBytes())
                .setCreationTime(Timestamp.newBuilder().setSeconds(snapshot.lv().created().getEpochSecond()))
                .setReadyToUse(true)
                .build();
    }

}
