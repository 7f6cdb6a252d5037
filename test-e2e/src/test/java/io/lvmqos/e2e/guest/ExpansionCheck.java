package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ControllerExpandVolume on real LVM in the guest (a 1 GiB VG with a 512 MiB zeroing thin pool):
 * growth within the room, refusal before any change without it, the thin pool's ratio and its
 * written data, and NodeExpandVolume growing only the filesystem afterwards.
 */
public class ExpansionCheck {

    private static final long POOL = 512 * MIB;
    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass();
    private final List<String> volumes = new ArrayList<>();
    private final List<Runnable> cleanup = new ArrayList<>();

    @AfterEach
    void deleteWhatTheTestMade() {
        cleanup.reversed().forEach(Runnable::run);
        Csi2.deleteAll(driver.client(), List.of(), volumes);
    }

    private Csi.Volume createVolume(String name, long bytes, Map<String, String> parameters) {
        Csi.Volume volume = driver.client().controller().createVolume(create(name, bytes, parameters).build()).getVolume();
        volumes.add(volume.getVolumeId());
        return volume;
    }

    private static Csi.ControllerExpandVolumeResponse expand(Csi.Volume volume, long bytes, Csi.VolumeCapability capability) {
        return driver.client().controller().controllerExpandVolume(Csi.ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setVolumeCapability(capability)
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(bytes)).build());
    }

    private static String lv(Csi.Volume volume) {
        String[] parts = volume.getVolumeId().split("/");
        return parts[2] + "/" + parts[3];
    }

    private static long lvSize(Csi.Volume volume) {
        return Long.parseLong(ok("lvm", "lvs", "--noheadings", "--units", "b", "--nosuffix", "-o", "lv_size",
                lv(volume)).strip());
    }

    /** LVM's metadata sequence number: any change to the group (lvextend, lvchange) raises it. */
    private static long metadataSeqno() {
        return Long.parseLong(ok("lvm", "vgs", "--noheadings", "-o", "vg_seqno", GuestEnv.volumeGroup()).strip());
    }

    private static long filesystemBytes(Path mounted) {
        return Long.parseLong(ok("df", "-B1", "--output=size", mounted.toString()).lines().skip(1).findFirst()
                .orElseThrow().strip());
    }

    private Path stage(Csi.Volume volume, Csi.VolumeCapability capability) {
        return Csi2.stage(driver::client, volume, capability, cleanup);
    }

    @Test
    void theControllerGrowsTheLvAndTheNodeThenGrowsOnlyTheFilesystem() {
        Csi.Volume volume = createVolume("grow-fs", 64 * MIB, Map.of("lvmType", "thin"));
        Path staging = stage(volume, Csi2.mount());
        long fsBefore = filesystemBytes(staging);

        Csi.ControllerExpandVolumeResponse grown = expand(volume, 128 * MIB, Csi2.mount());

        assertEquals(128 * MIB, grown.getCapacityBytes());
        assertTrue(grown.getNodeExpansionRequired(), "a filesystem volume needs NodeExpandVolume");
        assertEquals(128 * MIB, lvSize(volume));
        assertEquals(fsBefore, filesystemBytes(staging), "the controller side does not touch the filesystem");

        long seqno = metadataSeqno();
        Csi.NodeExpandVolumeResponse node = driver.client().node().nodeExpandVolume(Csi.NodeExpandVolumeRequest
                .newBuilder().setVolumeId(volume.getVolumeId()).setVolumePath(staging.toString())
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(128 * MIB))
                .setVolumeCapability(Csi2.mount()).build());
        assertEquals(128 * MIB, node.getCapacityBytes());
        assertEquals(seqno, metadataSeqno(), "NodeExpandVolume changed no LVM metadata: no lvextend");
        assertTrue(filesystemBytes(staging) > 100 * MIB, "the filesystem grew: " + filesystemBytes(staging));
    }

    @Test
    void aRawBlockVolumeNeedsNoNodeExpansionAndARetryIsANoOp() {
        Csi.Volume volume = createVolume("grow-block", 16 * MIB, Map.of());
        Csi.ControllerExpandVolumeResponse grown = expand(volume, 40 * MIB, Csi2.block());
        assertEquals(40 * MIB, grown.getCapacityBytes());
        assertFalse(grown.getNodeExpansionRequired());

        long seqno = metadataSeqno();
        assertEquals(40 * MIB, expand(volume, 40 * MIB, Csi2.block()).getCapacityBytes());
        assertEquals(40 * MIB, expand(volume, 20 * MIB, Csi2.block()).getCapacityBytes(), "never shrinks");
        assertEquals(seqno, metadataSeqno(), "a size already reached changes nothing");
    }

    @Test
    void aLinearVolumeBeyondTheGroupsFreeSpaceIsRefusedBeforeAnyChange() {
        Csi.Volume volume = createVolume("grow-linear", 32 * MIB, Map.of());
        long free = Long.parseLong(ok("lvm", "vgs", "--noheadings", "--units", "b", "--nosuffix", "-o", "vg_free",
                GuestEnv.volumeGroup()).strip());
        long seqno = metadataSeqno();

        String exhausted = expectCode(Status.Code.RESOURCE_EXHAUSTED, () -> expand(volume, 32 * MIB + free + 4 * MIB,
                Csi2.mount())).getStatus().getDescription();
        assertTrue(exhausted.contains("bytes free"), exhausted);
        expectCode(Status.Code.OUT_OF_RANGE, () -> expand(volume, 64L << 30, Csi2.mount()));

        assertEquals(32 * MIB, lvSize(volume), "the LV is as it was");
        assertEquals(seqno, metadataSeqno(), "no LVM change at all");
        assertEquals(32 * MIB + free, expand(volume, 32 * MIB + free, Csi2.mount()).getCapacityBytes(),
                "exactly the free space fits");
    }

    @Test
    void aThinVolumeGrowsUpToItsPoolsRatioAndNoFurther() {
        Map<String, String> ratio2 = Map.of("lvmType", "thin", "overprovisionRatio", "2");
        Csi.Volume first = createVolume("ratio-a", 256 * MIB, ratio2);
        createVolume("ratio-b", 512 * MIB, ratio2);
        assertEquals(512 * MIB, expand(first, 512 * MIB, Csi2.mount()).getCapacityBytes(),
                "1 GiB promised of a 512 MiB pool at ratio 2");
        long seqno = metadataSeqno();

        String exhausted = expectCode(Status.Code.RESOURCE_EXHAUSTED, () -> expand(first, 516 * MIB, Csi2.mount()))
                .getStatus().getDescription();
        assertTrue(exhausted.contains("over-provisioning ratio 2"), exhausted);
        expectCode(Status.Code.OUT_OF_RANGE, () -> expand(first, 2 * POOL + 4 * MIB, Csi2.mount()));

        assertEquals(512 * MIB, lvSize(first));
        assertEquals(seqno, metadataSeqno(), "no LVM change at all");
    }

    @Test
    void aThinVolumeMadeAtRatioOneCannotBorrowAnotherClasssRatio() {
        Csi.Volume strict = createVolume("ratio-1", 128 * MIB, Map.of("lvmType", "thin"));
        expectCode(Status.Code.OUT_OF_RANGE, () -> expand(strict, POOL + 4 * MIB, Csi2.mount()));
        assertEquals(POOL, expand(strict, POOL, Csi2.mount()).getCapacityBytes());
    }

    @Test
    void writtenDataBoundsThinCapacityEvenUnderAGenerousRatio() {
        Map<String, String> ratio4 = Map.of("lvmType", "thin", "overprovisionRatio", "4");
        Csi.GetCapacityRequest capacity = Csi.GetCapacityRequest.newBuilder().putAllParameters(ratio4).build();
        Csi.Volume written = createVolume("written", 384 * MIB, ratio4);
        long before = driver.client().controller().getCapacity(capacity).getAvailableCapacity();
        assertTrue(before >= 4 * POOL - 384 * MIB - 16 * MIB, "a nearly empty pool at ratio 4: " + before);

        ok("dd", "if=/dev/urandom", "of=/dev/" + lv(written), "bs=1M", "count=320", "oflag=direct", "status=none");

        long after = driver.client().controller().getCapacity(capacity).getAvailableCapacity();
        assertTrue(after <= 4 * (POOL - 320 * MIB), "320 MiB written leave 192 MiB unwritten, 768 MiB at ratio 4,"
                + " where the promises alone would leave 1664 MiB: " + after);
        assertTrue(after > 0, "" + after);
        expectCode(Status.Code.RESOURCE_EXHAUSTED, () -> driver.client().controller().createVolume(
                create("too-much", 800 * MIB, ratio4).build()));
        expectCode(Status.Code.RESOURCE_EXHAUSTED, () -> expand(written, 384 * MIB + 800 * MIB, Csi2.mount()));
    }

    @Test
    void nodeExpansionOfAnLvTheControllerDidNotGrowChecksTheRoomToo() {
        Csi.Volume volume = createVolume("node-only", 64 * MIB, Map.of("lvmType", "thin"));
        Path staging = stage(volume, Csi2.mount());
        long seqno = metadataSeqno();
        expectCode(Status.Code.OUT_OF_RANGE, () -> driver.client().node().nodeExpandVolume(
                Csi.NodeExpandVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                        .setVolumePath(staging.toString()).setVolumeCapability(Csi2.mount())
                        .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(POOL + 4 * MIB)).build()));
        assertEquals(seqno, metadataSeqno());

        Csi.NodeExpandVolumeResponse grown = driver.client().node().nodeExpandVolume(Csi.NodeExpandVolumeRequest
                .newBuilder().setVolumeId(volume.getVolumeId()).setVolumePath(staging.toString())
                .setVolumeCapability(Csi2.mount())
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(96 * MIB)).build());
        assertEquals(96 * MIB, grown.getCapacityBytes());
        assertTrue(filesystemBytes(staging) > 80 * MIB, "" + filesystemBytes(staging));
    }

    @Test
    void badRequestsArePreciseErrors() {
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller().controllerExpandVolume(
                Csi.ControllerExpandVolumeRequest.newBuilder().setCapacityRange(Csi.CapacityRange.newBuilder()
                        .setRequiredBytes(MIB)).build()));
        Csi.Volume volume = createVolume("bad-requests", 16 * MIB, Map.of());
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller().controllerExpandVolume(
                Csi.ControllerExpandVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build()));
        String missing = volume.getVolumeId().substring(0, volume.getVolumeId().lastIndexOf('/') + 1) + "vol_gone_0";
        expectCode(Status.Code.NOT_FOUND, () -> driver.client().controller().controllerExpandVolume(
                Csi.ControllerExpandVolumeRequest.newBuilder().setVolumeId(missing)
                        .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(32 * MIB)).build()));
    }

    @Test
    void anotherNodesVolumeIsLeftToItsNodesExpansion() {
        long seqno = metadataSeqno();
        Csi.ControllerExpandVolumeResponse answer = driver.client().controller().controllerExpandVolume(
                Csi.ControllerExpandVolumeRequest.newBuilder().setVolumeId("lvmqos/other-node/lvmqos/vol_elsewhere_0")
                        .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(64 * MIB))
                        .setVolumeCapability(Csi2.block()).build());
        assertEquals(64 * MIB, answer.getCapacityBytes());
        assertTrue(answer.getNodeExpansionRequired(), "the owning node grows it, with the same check");
        assertEquals(seqno, metadataSeqno());
    }
}
