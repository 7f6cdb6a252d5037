package io.lvmqos.e2e.guest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import csi.v1.Csi;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.CsiClient;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.function.Executable;

/** Request builders and assertions shared by the guest checks. */
final class Csi2 {

    static final long MIB = 1L << 20;
    static final long GIB = 1L << 30;

    private Csi2() {
    }

    static Csi.VolumeCapability mount(String fsType, Csi.VolumeCapability.AccessMode.Mode mode) {
        return Csi.VolumeCapability.newBuilder()
                .setMount(Csi.VolumeCapability.MountVolume.newBuilder().setFsType(fsType))
                .setAccessMode(Csi.VolumeCapability.AccessMode.newBuilder().setMode(mode))
                .build();
    }

    static Csi.VolumeCapability mount() {
        return mount("", Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER);
    }

    static Csi.VolumeCapability block() {
        return Csi.VolumeCapability.newBuilder()
                .setBlock(Csi.VolumeCapability.BlockVolume.getDefaultInstance())
                .setAccessMode(Csi.VolumeCapability.AccessMode.newBuilder()
                        .setMode(Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER))
                .build();
    }

    static Csi.CreateVolumeRequest.Builder create(String name, long bytes, Map<String, String> parameters) {
        return Csi.CreateVolumeRequest.newBuilder()
                .setName(name)
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(bytes))
                .addVolumeCapabilities(mount())
                .putAllParameters(parameters);
    }

    /**
     * Stages a volume where kubelet would (a directory per volume under the driver's plugin
     * directory) and queues its unstage on {@code cleanup}, through whichever client the driver
     * has by then (a check may have restarted it).
     */
    static Path stage(Supplier<CsiClient> client, Csi.Volume volume, Csi.VolumeCapability capability,
                      List<Runnable> cleanup) {
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io")
                .resolve(Integer.toHexString(volume.getVolumeId().hashCode())).resolve("globalmount");
        client.get().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                .setVolumeCapability(capability).build());
        cleanup.add(() -> client.get().node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString()).build()));
        return staging;
    }

    /** Stages a volume where kubelet would, in a directory named after its LV; the caller unstages it. */
    static Path stageByLvName(CsiClient client, String volumeId, Csi.VolumeCapability capability) {
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io")
                .resolve(lvName(volumeId)).resolve("globalmount");
        client.node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volumeId)
                .setStagingTargetPath(staging.toString()).setVolumeCapability(capability).build());
        return staging;
    }

    /** Deletes what a test made: its snapshots first, then its volumes. */
    static void deleteAll(CsiClient client, List<String> snapshots, List<String> volumes) {
        snapshots.forEach(id -> client.controller().deleteSnapshot(
                Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(id).build()));
        volumes.forEach(id -> client.controller().deleteVolume(
                Csi.DeleteVolumeRequest.newBuilder().setVolumeId(id).build()));
    }

    /** The end of a check that published a volume: unpublish every target, unstage, delete. */
    static void unpublishUnstageDelete(CsiClient client, String volumeId, Path staging, List<Path> targets) {
        for (Path target : targets) {
            client.node().nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.newBuilder()
                    .setVolumeId(volumeId).setTargetPath(target.toString()).build());
        }
        client.node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder()
                .setVolumeId(volumeId).setStagingTargetPath(staging.toString()).build());
        client.controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volumeId).build());
    }

    /** The LV name at the end of a volume or snapshot id ({@code <prefix>/<node>/<vg>/<lv>}). */
    static String lvName(String volumeId) {
        return volumeId.substring(volumeId.lastIndexOf('/') + 1);
    }

    static StatusRuntimeException expectCode(Status.Code code, Executable call) {
        StatusRuntimeException failure = assertThrows(StatusRuntimeException.class, call);
        assertEquals(code, failure.getStatus().getCode(), failure.getStatus().toString());
        return failure;
    }
}
