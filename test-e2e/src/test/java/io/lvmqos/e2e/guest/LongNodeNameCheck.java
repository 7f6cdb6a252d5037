package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Ids stay within CSI's 128 bytes on a node whose name has the 253 characters Kubernetes allows: a
 * thin volume, its snapshot and a restore from it are made, found, changed and deleted by their ids.
 */
public class LongNodeNameCheck {

    /** Four DNS labels of at most 63 characters: 253 characters in all. */
    static final String NODE = "a".repeat(63) + "." + "b".repeat(63) + "." + "c".repeat(63) + "." + "d".repeat(61);

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass().as(NODE);

    @BeforeAll
    static void theNameIsTheLongestAllowed() {
        assertEquals(253, NODE.length());
    }

    @Test
    void volumeSnapshotAndRestoreWorkByIdsOfAtMost128Bytes() {
        var controller = driver.client().controller();
        // the longest names external-provisioner and external-snapshotter make
        Csi.Volume volume = controller.createVolume(create("pvc-" + "1".repeat(36), 16 * MIB,
                Map.of("lvmType", "thin", "writeBPS", "4Mi")).build()).getVolume();
        Csi.Snapshot snapshot = controller.createSnapshot(Csi.CreateSnapshotRequest.newBuilder()
                .setName("snapshot-" + "2".repeat(36)).setSourceVolumeId(volume.getVolumeId()).build()).getSnapshot();
        Csi.Volume restored = controller.createVolume(create("pvc-" + "3".repeat(36), 16 * MIB,
                        Map.of("lvmType", "thin"))
                .setVolumeContentSource(Csi.VolumeContentSource.newBuilder().setSnapshot(
                        Csi.VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshot.getSnapshotId())))
                .build()).getVolume();

        for (String id : new String[] {volume.getVolumeId(), snapshot.getSnapshotId(), restored.getVolumeId()}) {
            assertTrue(id.getBytes(StandardCharsets.UTF_8).length <= 128, id.length() + " bytes: " + id);
        }
        assertEquals(snapshot.getSnapshotId(), controller.listSnapshots(Csi.ListSnapshotsRequest.newBuilder()
                .setSnapshotId(snapshot.getSnapshotId()).build()).getEntries(0).getSnapshot().getSnapshotId());
        assertEquals(volume.getVolumeId(), controller.controllerGetVolume(Csi.ControllerGetVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).build()).getVolume().getVolumeId());
        controller.controllerModifyVolume(Csi.ControllerModifyVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).putMutableParameters("writeBPS", "8Mi").build());

        controller.deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(restored.getVolumeId()).build());
        controller.deleteSnapshot(Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshot.getSnapshotId()).build());
        controller.deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build());
        String left = GuestCommand.run("lvm", "lvs", "--noheadings", "-o", "lv_name", GuestEnv.volumeGroup())
                .requireSuccess().stdout();
        assertTrue(!left.contains("vol_") && !left.contains("snap_"), "LVs left behind:\n" + left);
    }
}
