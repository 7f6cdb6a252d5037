package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A pod can always be torn down: NodeUnpublishVolume and NodeUnstageVolume need nothing from LVM or
 * from /dev. One volume is unpublished by a freshly restarted plugin (it knows no volume yet) while
 * the volume group's lock is held, so that any lvm command would wait; a raw block volume is
 * unpublished after its device node in /dev/mapper is gone.
 */
public class TeardownWithoutLvmCheck {

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass();

    @Test
    void unpublishAndUnstageWhileTheVolumeGroupIsLockedAfterARestart() throws Exception {
        String uid = UUID.randomUUID().toString();
        Path podCgroup = podCgroup(uid);
        Csi.Volume volume = driver.client().controller().createVolume(create("teardown-locked", 32 * MIB,
                Map.of("lvmType", "thin", "writeBPS", "4Mi")).build()).getVolume();
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/locked/globalmount");
        Path target = GuestDriver.KUBELET.resolve("pods").resolve(uid).resolve("volumes/kubernetes.io~csi/pv-locked/mount");
        var node = driver.client().node();
        node.nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setVolumeCapability(Csi2.mount()).build());
        node.nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                .setVolumeCapability(Csi2.mount()).build());
        assertTrue(Files.readString(podCgroup.resolve("io.max")).contains("wbps=4194304"));

        driver.restart();
        try (HeldVolumeGroupLock lock = HeldVolumeGroupLock.take()) {
            driver.client().node().withDeadlineAfter(20, TimeUnit.SECONDS).nodeUnpublishVolume(
                    Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                            .setTargetPath(target.toString()).build());
            driver.client().node().withDeadlineAfter(20, TimeUnit.SECONDS).nodeUnstageVolume(
                    Csi.NodeUnstageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                            .setStagingTargetPath(staging.toString()).build());
        }
        assertFalse(Files.readString(podCgroup.resolve("io.max")).contains("wbps=4194304"), "the limit is lifted");
        assertFalse(mounted(target) || mounted(staging), "both unmounted");
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).build());
        ok("rmdir", podCgroup.toString());
    }

    @Test
    void aBlockVolumeWhoseDeviceNodeIsGoneIsStillUnpublished() throws Exception {
        String uid = UUID.randomUUID().toString();
        Path podCgroup = podCgroup(uid);
        Csi.Volume volume = driver.client().controller().createVolume(create("teardown-block", 32 * MIB,
                        Map.of("lvmType", "thin", "writeIOPS", "200"))
                .clearVolumeCapabilities().addVolumeCapabilities(Csi2.block()).build()).getVolume();
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/volumeDevices/staging/pv-gone");
        Path target = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/volumeDevices/publish/pv-gone").resolve(uid);
        var node = driver.client().node();
        node.nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setVolumeCapability(Csi2.block()).build());
        node.nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                .setVolumeCapability(Csi2.block()).build());
        assertTrue(Files.readString(podCgroup.resolve("io.max")).contains("wiops=200"));
        // the device node LVM reports as the LV's path (neither name holds a '-' that dm would double)
        String dmName = GuestEnv.volumeGroup() + "-" + Csi2.lvName(volume.getVolumeId());
        Files.delete(Path.of("/dev/mapper").resolve(dmName));
        try {
            node.withDeadlineAfter(20, TimeUnit.SECONDS).nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).setTargetPath(target.toString()).build());
            node.nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                    .setStagingTargetPath(staging.toString()).build());
            assertFalse(mounted(target), "unpublished");
            assertFalse(Files.exists(target), "the target is removed");
            assertFalse(Files.readString(podCgroup.resolve("io.max")).contains("wiops=200"), "the limit is lifted");
        } finally {
            ok("dmsetup", "mknodes", dmName); // back, for the DeleteVolume below
        }
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).build());
        ok("rmdir", podCgroup.toString());
    }

    private static Path podCgroup(String uid) throws Exception {
        return Files.createDirectories(GuestEnv.cgroupRoot().resolve("kubepods.slice/kubepods-besteffort.slice")
                .resolve("kubepods-besteffort-pod" + uid.replace('-', '_') + ".slice"));
    }

    private static boolean mounted(Path path) throws Exception {
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .anyMatch(line -> line.split(" ")[4].equals(path.toString()));
    }

}
