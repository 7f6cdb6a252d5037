package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.uml.GuestCommand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The points kubernetes-csi's csi-sanity checks for Identity, Controller and Node, over the real
 * socket against real LVM, so that CI has a conformance run without the csi-sanity binary:
 * required fields, idempotent creates and deletes, not-found ids, pagination, snapshots, and the
 * stage/publish/unpublish/unstage cycle with paths that are not kubelet pod paths (no QoS).
 */
public class ConformanceCheck {

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass();

    private static CsiClient csi() {
        return driver.client();
    }

    @Test
    void identityNamesTheDriverAndItsCapabilitiesAndProbeIsReady() {
        Csi.GetPluginInfoResponse info = csi().identity().getPluginInfo(Csi.GetPluginInfoRequest.getDefaultInstance());
        assertEquals("lvmqos.csi.io", info.getName());
        assertFalse(info.getVendorVersion().isEmpty());
        assertFalse(csi().identity().getPluginCapabilities(Csi.GetPluginCapabilitiesRequest.getDefaultInstance())
                .getCapabilitiesList().isEmpty());
        long deadline = System.currentTimeMillis() + 30_000;
        boolean ready = false;
        while (!ready && System.currentTimeMillis() < deadline) {
            ready = csi().identity().probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue();
        }
        assertTrue(ready, "the volume group answers, so Probe becomes ready");
    }

    @Test
    void controllerAndNodeCapabilitiesAreKnownTypes() {
        csi().controller().controllerGetCapabilities(Csi.ControllerGetCapabilitiesRequest.getDefaultInstance())
                .getCapabilitiesList().forEach(c -> assertFalse(c.getRpc().getType().name().contains("UNKNOWN")));
        List<Csi.NodeServiceCapability.RPC.Type> node = csi().node().nodeGetCapabilities(
                Csi.NodeGetCapabilitiesRequest.getDefaultInstance()).getCapabilitiesList().stream()
                .map(c -> c.getRpc().getType()).toList();
        assertTrue(node.contains(Csi.NodeServiceCapability.RPC.Type.STAGE_UNSTAGE_VOLUME));
        Csi.NodeGetInfoResponse info = csi().node().nodeGetInfo(Csi.NodeGetInfoRequest.getDefaultInstance());
        assertEquals(GuestDriver.NODE, info.getNodeId());
        assertEquals(GuestDriver.NODE, info.getAccessibleTopology().getSegmentsMap().get("topology.lvmqos.csi.io/node"));
        assertTrue(info.getMaxVolumesPerNode() > 0);
    }

    static Stream<Named<Consumer<CsiClient>>> requestsMissingARequiredField() {
        Csi.VolumeCapability mount = Csi2.mount();
        return Stream.of(
                Named.of("CreateVolume without name", c -> c.controller().createVolume(
                        Csi.CreateVolumeRequest.newBuilder().addVolumeCapabilities(mount).build())),
                Named.of("CreateVolume without capabilities", c -> c.controller().createVolume(
                        Csi.CreateVolumeRequest.newBuilder().setName("n").build())),
                Named.of("DeleteVolume without id", c -> c.controller().deleteVolume(
                        Csi.DeleteVolumeRequest.getDefaultInstance())),
                Named.of("ValidateVolumeCapabilities without id", c -> c.controller().validateVolumeCapabilities(
                        Csi.ValidateVolumeCapabilitiesRequest.newBuilder().addVolumeCapabilities(mount).build())),
                Named.of("ValidateVolumeCapabilities without capabilities", c -> c.controller()
                        .validateVolumeCapabilities(Csi.ValidateVolumeCapabilitiesRequest.newBuilder()
                                .setVolumeId("lvmqos/guest-node/lvmqos/vol_x_0").build())),
                Named.of("CreateSnapshot without name", c -> c.controller().createSnapshot(
                        Csi.CreateSnapshotRequest.newBuilder().setSourceVolumeId("v").build())),
                Named.of("CreateSnapshot without source", c -> c.controller().createSnapshot(
                        Csi.CreateSnapshotRequest.newBuilder().setName("s").build())),
                Named.of("DeleteSnapshot without id", c -> c.controller().deleteSnapshot(
                        Csi.DeleteSnapshotRequest.getDefaultInstance())),
                Named.of("NodeStageVolume without id", c -> c.node().nodeStageVolume(Csi.NodeStageVolumeRequest
                        .newBuilder().setStagingTargetPath(GuestDriver.KUBELET + "/s").setVolumeCapability(mount).build())),
                Named.of("NodeStageVolume without staging path", c -> c.node().nodeStageVolume(
                        Csi.NodeStageVolumeRequest.newBuilder().setVolumeId("v").setVolumeCapability(mount).build())),
                Named.of("NodeStageVolume without capability", c -> c.node().nodeStageVolume(Csi.NodeStageVolumeRequest
                        .newBuilder().setVolumeId("v").setStagingTargetPath(GuestDriver.KUBELET + "/s").build())),
                Named.of("NodeUnstageVolume without id", c -> c.node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest
                        .newBuilder().setStagingTargetPath(GuestDriver.KUBELET + "/s").build())),
                Named.of("NodeUnstageVolume without staging path", c -> c.node().nodeUnstageVolume(
                        Csi.NodeUnstageVolumeRequest.newBuilder().setVolumeId("v").build())),
                Named.of("NodePublishVolume without id", c -> c.node().nodePublishVolume(Csi.NodePublishVolumeRequest
                        .newBuilder().setTargetPath(GuestDriver.KUBELET + "/t").setVolumeCapability(mount).build())),
                Named.of("NodePublishVolume without target", c -> c.node().nodePublishVolume(
                        Csi.NodePublishVolumeRequest.newBuilder().setVolumeId("v").setVolumeCapability(mount).build())),
                Named.of("NodePublishVolume without capability", c -> c.node().nodePublishVolume(
                        Csi.NodePublishVolumeRequest.newBuilder().setVolumeId("v")
                                .setTargetPath(GuestDriver.KUBELET + "/t").build())),
                Named.of("NodeUnpublishVolume without id", c -> c.node().nodeUnpublishVolume(
                        Csi.NodeUnpublishVolumeRequest.newBuilder().setTargetPath(GuestDriver.KUBELET + "/t").build())),
                Named.of("NodeUnpublishVolume without target", c -> c.node().nodeUnpublishVolume(
                        Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId("v").build())),
                Named.of("NodeGetVolumeStats without id", c -> c.node().nodeGetVolumeStats(
                        Csi.NodeGetVolumeStatsRequest.newBuilder().setVolumePath("/run").build())),
                Named.of("NodeGetVolumeStats without path", c -> c.node().nodeGetVolumeStats(
                        Csi.NodeGetVolumeStatsRequest.newBuilder().setVolumeId("v").build())),
                Named.of("NodeExpandVolume without id", c -> c.node().nodeExpandVolume(
                        Csi.NodeExpandVolumeRequest.newBuilder().setVolumePath("/run").build())),
                Named.of("NodeExpandVolume without path", c -> c.node().nodeExpandVolume(
                        Csi.NodeExpandVolumeRequest.newBuilder().setVolumeId("v").build())));
    }

    @ParameterizedTest
    @MethodSource("requestsMissingARequiredField")
    void aMissingRequiredFieldIsInvalidArgument(Consumer<CsiClient> call) {
        expectCode(Status.Code.INVALID_ARGUMENT, () -> call.accept(csi()));
    }

    @Test
    void unknownIdsAreNotFoundAndDeletesOfThemSucceed() {
        String unknown = "lvmqos/guest-node/lvmqos/vol_unknown_000000000000000000000000";
        csi().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(unknown).build());
        csi().controller().deleteSnapshot(Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId("reallyfake").build());
        expectCode(Status.Code.NOT_FOUND, () -> csi().node().nodeGetVolumeStats(Csi.NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId(unknown).setVolumePath("/run").build()));
        expectCode(Status.Code.NOT_FOUND, () -> csi().node().nodeExpandVolume(Csi.NodeExpandVolumeRequest.newBuilder()
                .setVolumeId(unknown).setVolumePath("/run").build()));
        expectCode(Status.Code.NOT_FOUND, () -> csi().controller().createSnapshot(Csi.CreateSnapshotRequest.newBuilder()
                .setName("of-nothing").setSourceVolumeId("reallyfake").build()));
    }

    @Test
    void pathsOutsideKubeletsLayoutAreRefusedAndNoVolumeIsThere() throws Exception {
        Csi.Volume volume = csi().controller().createVolume(create("sanity-paths", 16 * MIB,
                Map.of("lvmType", "thin")).build()).getVolume();
        try {
            Csi.VolumeCapability capability = Csi2.mount();
            for (String path : List.of(GuestDriver.KUBELET + "/csi-sanity/staging", GuestDriver.KUBELET + "/pki",
                    GuestDriver.KUBELET + "/plugins_registry/x", GuestDriver.KUBELET + "/pods/u1/etc-hosts")) {
                expectCode(Status.Code.INVALID_ARGUMENT, () -> csi().node().nodeStageVolume(
                        Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                                .setStagingTargetPath(path).setVolumeCapability(capability).build()));
                expectCode(Status.Code.INVALID_ARGUMENT, () -> csi().node().nodeUnpublishVolume(
                        Csi.NodeUnpublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                                .setTargetPath(path).build()));
                expectCode(Status.Code.NOT_FOUND, () -> csi().node().nodeGetVolumeStats(
                        Csi.NodeGetVolumeStatsRequest.newBuilder().setVolumeId(volume.getVolumeId())
                                .setVolumePath(path).build()));
            }
        } finally {
            csi().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build());
        }
    }

    /** The paths csi-sanity is given (CsiSanityCheck): kubelet's layout, with the target's own leaf. */
    @Test
    void aFullLifecycleOnCsiSanitysPathsLimitsThePodAndLeavesNothingBehind() throws Exception {
        Csi.Volume volume = csi().controller().createVolume(create("sanity-lifecycle", 16 * MIB,
                Map.of("lvmType", "thin", "iops", "100")).build()).getVolume();
        String uid = java.util.UUID.randomUUID().toString();
        Path podCgroup = CsiSanityCheck.podCgroup(uid);
        Files.createDirectories(podCgroup);
        Path staging = CsiSanityCheck.stagingDir(GuestDriver.KUBELET);
        Path target = CsiSanityCheck.mountDir(GuestDriver.KUBELET, uid).resolve("target");
        Files.createDirectories(staging.getParent());
        Files.createDirectories(target.getParent());
        Csi.VolumeCapability capability = Csi2.mount();
        csi().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                .setStagingTargetPath(staging.toString()).setVolumeCapability(capability).build());
        for (int attempt = 0; attempt < 2; attempt++) {
            csi().node().nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId())
                    .setStagingTargetPath(staging.toString()).setTargetPath(target.toString())
                    .setVolumeCapability(capability).build());
        }
        assertTrue(Files.readString(podCgroup.resolve("io.max")).contains("riops=100 wiops=100"),
                "the pod is limited: " + Files.readString(podCgroup.resolve("io.max")));
        Csi.NodeGetVolumeStatsResponse stats = csi().node().nodeGetVolumeStats(Csi.NodeGetVolumeStatsRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setVolumePath(target.toString()).build());
        assertFalse(stats.getVolumeCondition().getAbnormal());
        Csi.NodeExpandVolumeResponse expanded = csi().node().nodeExpandVolume(Csi.NodeExpandVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setVolumePath(target.toString())
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(32 * MIB)).build());
        assertEquals(32 * MIB, expanded.getCapacityBytes());
        for (int attempt = 0; attempt < 2; attempt++) {
            csi().node().nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).setTargetPath(target.toString()).build());
            csi().node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString()).build());
        }
        assertFalse(Files.exists(target), "unpublish removes the target");
        assertFalse(Files.readString(podCgroup.resolve("io.max")).contains("iops=100"), "and lifts the limit");
        GuestCommand.ok("rmdir", podCgroup.toString());
        for (int attempt = 0; attempt < 2; attempt++) {
            csi().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build());
        }
        expectCode(Status.Code.NOT_FOUND, () -> csi().controller().controllerGetVolume(
                Csi.ControllerGetVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build()));
    }

    @Test
    void snapshotsPaginateAndFilter() {
        Csi.Volume source = csi().controller().createVolume(create("sanity-snap-source", 8 * MIB,
                Map.of("lvmType", "thin")).build()).getVolume();
        try {
            for (int i = 0; i < 3; i++) {
                csi().controller().createSnapshot(Csi.CreateSnapshotRequest.newBuilder().setName("sanity-snap-" + i)
                        .setSourceVolumeId(source.getVolumeId()).build());
            }
            Set<String> seen = new HashSet<>();
            String token = "";
            do {
                Csi.ListSnapshotsResponse page = csi().controller().listSnapshots(Csi.ListSnapshotsRequest.newBuilder()
                        .setMaxEntries(1).setStartingToken(token).setSourceVolumeId(source.getVolumeId()).build());
                page.getEntriesList().forEach(e -> assertTrue(seen.add(e.getSnapshot().getSnapshotId())));
                token = page.getNextToken();
            } while (!token.isEmpty());
            assertEquals(3, seen.size());
            seen.forEach(id -> csi().controller().deleteSnapshot(
                    Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId(id).build()));
            assertEquals(0, csi().controller().listSnapshots(Csi.ListSnapshotsRequest.newBuilder()
                    .setSourceVolumeId(source.getVolumeId()).build()).getEntriesCount());
        } finally {
            csi().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(source.getVolumeId()).build());
        }
    }
}
