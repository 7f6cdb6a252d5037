package io.lvmqos.group;

import static io.lvmqos.errors.DriverException.requireArgument;

import csi.v1.Csi;
import csi.v1.GroupControllerGrpc;
import io.grpc.stub.StreamObserver;
import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;

/** CSI GroupController: consistent snapshots of several thin volumes of this node ({@link GroupSnapshots}). */
public final class GroupControllerService extends GroupControllerGrpc.GroupControllerImplBase {

    private final GroupSnapshots groups;

    public GroupControllerService(GroupSnapshots groups) {
        this.groups = groups;
    }

    @Override
    public void groupControllerGetCapabilities(Csi.GroupControllerGetCapabilitiesRequest request,
                                               StreamObserver<Csi.GroupControllerGetCapabilitiesResponse> reply) {
        reply.onNext(Csi.GroupControllerGetCapabilitiesResponse.newBuilder()
                .addCapabilities(Csi.GroupControllerServiceCapability.newBuilder().setRpc(
                        Csi.GroupControllerServiceCapability.RPC.newBuilder().setType(
                                Csi.GroupControllerServiceCapability.RPC.Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT)))
                .build());
        reply.onCompleted();
    }

    @Override
    public void createVolumeGroupSnapshot(Csi.CreateVolumeGroupSnapshotRequest request,
                                          StreamObserver<Csi.CreateVolumeGroupSnapshotResponse> reply) {
        requireArgument(!request.getName().isEmpty(), "name must not be empty");
        requireArgument(request.getSourceVolumeIdsCount() > 0, "source_volume_ids must not be empty");
        requireArgument(request.getParametersMap().isEmpty(), "this driver takes no group snapshot parameters");
        reply.onNext(Csi.CreateVolumeGroupSnapshotResponse.newBuilder()
                .setGroupSnapshot(groups.create(request.getName(), request.getSourceVolumeIdsList())).build());
        reply.onCompleted();
    }

    @Override
    public void deleteVolumeGroupSnapshot(Csi.DeleteVolumeGroupSnapshotRequest request,
                                          StreamObserver<Csi.DeleteVolumeGroupSnapshotResponse> reply) {
        requireArgument(!request.getGroupSnapshotId().isEmpty(), "group_snapshot_id must not be empty");
        groups.delete(request.getGroupSnapshotId());
        reply.onNext(Csi.DeleteVolumeGroupSnapshotResponse.getDefaultInstance());
        reply.onCompleted();
    }

    @Override
    public void getVolumeGroupSnapshot(Csi.GetVolumeGroupSnapshotRequest request,
                                       StreamObserver<Csi.GetVolumeGroupSnapshotResponse> reply) {
        requireArgument(!request.getGroupSnapshotId().isEmpty(), "group_snapshot_id must not be empty");
        Csi.VolumeGroupSnapshot group = groups.get(request.getGroupSnapshotId()).orElseThrow(() -> DriverException
                .notFound("group snapshot " + Echo.of(request.getGroupSnapshotId()) + " does not exist"));
        reply.onNext(Csi.GetVolumeGroupSnapshotResponse.newBuilder().setGroupSnapshot(group).build());
        reply.onCompleted();
    }
}
