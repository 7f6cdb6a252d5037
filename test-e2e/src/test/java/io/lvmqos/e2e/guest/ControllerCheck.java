package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.GIB;
import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.volume.LvmNames;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Controller service on real LVM in the guest (a 4 GiB VG with a 2 GiB zeroing thin pool),
 * over the driver's socket. Every test removes the volumes it made.
 */
public class ControllerCheck {

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass();
    private final List<String> volumes = new ArrayList<>();
    private final List<String> snapshots = new ArrayList<>();

    @AfterEach
    void deleteWhatTheTestMade() {
        Csi2.deleteAll(driver.client(), snapshots, volumes);
    }

    private Csi.Volume createVolume(Csi.CreateVolumeRequest request) {
        Csi.Volume volume = driver.client().controller().createVolume(request).getVolume();
        if (!volumes.contains(volume.getVolumeId())) {
            volumes.add(volume.getVolumeId());
        }
        return volume;
    }

    private Csi.Snapshot createSnapshot(String name, String source) {
        Csi.Snapshot snapshot = driver.client().controller().createSnapshot(Csi.CreateSnapshotRequest.newBuilder()
                .setName(name).setSourceVolumeId(source).build()).getSnapshot();
        if (!snapshots.contains(snapshot.getSnapshotId())) {
            snapshots.add(snapshot.getSnapshotId());
        }
        return snapshot;
    }

    private static Map<String, String> thin() {
        return Map.of("lvmType", "thin");
    }

    private static String lvPath(String volumeId) {
        String[] parts = volumeId.split("/");
        return "/dev/" + parts[2] + "/" + parts[3];
    }

    private static List<String> lvNamesWithTag(String tagPrefix) {
        return ok("lvm", "lvs", "--noheadings", "-o", "lv_name,lv_tags", GuestEnv.volumeGroup()).lines()
                .map(String::strip).filter(line -> line.contains(tagPrefix)).toList();
    }

    @Test
    void linearVolumeIsRoundedUpToTheExtentAndCarriesItsTopologyAndLimits() {
        Csi.Volume volume = createVolume(create("linear-1", 10 * MIB + 1,
                Map.of("readBPS", "8Mi", "writeIOPS", "300", "csi.storage.k8s.io/pvc/name", "data")).build());

        assertEquals(12 * MIB, volume.getCapacityBytes(), "10 MiB + 1 rounds up to three 4 MiB extents");
        assertEquals("guest-node", volume.getAccessibleTopology(0).getSegmentsMap().get("topology.lvmqos.csi.io/node"));
        assertEquals(Map.of(), volume.getVolumeContextMap(), "the limits live in the LV's tags, not in a copy that goes stale");
        assertTrue(ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", lvVg(volume)).contains("lvmqos.qos.rbps=8388608"));
        String attr = ok("lvm", "lvs", "--noheadings", "-o", "lv_attr,lv_size", "--units", "b", lvVg(volume)).strip();
        assertTrue(attr.startsWith("-wi-a"), "a linear, active LV: " + attr);
        assertTrue(attr.endsWith("12582912B"), attr);
    }

    private static String lvVg(Csi.Volume volume) {
        String[] parts = volume.getVolumeId().split("/");
        return parts[2] + "/" + parts[3];
    }

    @Test
    void noCapacityRangeMeansOneGibibyte() {
        Csi.Volume volume = createVolume(Csi.CreateVolumeRequest.newBuilder().setName("default-size")
                .addVolumeCapabilities(Csi2.mount()).putAllParameters(thin()).build());
        assertEquals(GIB, volume.getCapacityBytes());
    }

    @Test
    void sameRequestTwiceIsTheSameVolumeAndOtherCapacityOrParametersIsAlreadyExists() {
        Csi.CreateVolumeRequest request = create("idempotent", 32 * MIB, Map.of("iops", "100")).build();
        Csi.Volume first = createVolume(request);
        Csi.Volume second = createVolume(request);
        assertEquals(first, second);

        expectCode(Status.Code.ALREADY_EXISTS, () -> driver.client().controller()
                .createVolume(create("idempotent", 64 * MIB, Map.of("iops", "100")).build()));
        expectCode(Status.Code.ALREADY_EXISTS, () -> driver.client().controller()
                .createVolume(create("idempotent", 32 * MIB, Map.of("iops", "200")).build()));
        assertEquals(1, lvNamesWithTag("lvmqos.name=" + java.util.Base64.getUrlEncoder().withoutPadding()
                .encodeToString("idempotent".getBytes())).size());
    }

    @Test
    void twentyConcurrentIdenticalCreatesMakeExactlyOneLv() throws Exception {
        String name = "concurrent-" + "x".repeat(117); // 128 characters, as conformance suites use
        Csi.CreateVolumeRequest request = create(name, 8 * MIB, thin()).build();
        ExecutorService pool = Executors.newFixedThreadPool(20);
        try {
            List<Future<Csi.Volume>> results = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                results.add(pool.submit(() -> driver.client().controller().createVolume(request).getVolume()));
            }
            Set<Csi.Volume> distinct = new HashSet<>();
            for (Future<Csi.Volume> result : results) {
                distinct.add(result.get());
            }
            assertEquals(1, distinct.size());
            volumes.add(distinct.iterator().next().getVolumeId());
        } finally {
            pool.shutdownNow();
        }
        String tag = "lvmqos.name=" + java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(name.getBytes());
        assertEquals(1, lvNamesWithTag(tag).size());
    }

    @Test
    void differentNamesProceedInParallel() throws Exception {
        List<CompletableFuture<Csi.Volume>> results = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Csi.CreateVolumeRequest request = create("parallel-" + i, 8 * MIB, thin()).build();
            results.add(CompletableFuture.supplyAsync(() -> driver.client().controller().createVolume(request).getVolume()));
        }
        Set<String> ids = new HashSet<>();
        for (CompletableFuture<Csi.Volume> result : results) {
            ids.add(result.get().getVolumeId());
        }
        volumes.addAll(ids);
        assertEquals(8, ids.size());
    }

    @Test
    void capacityBeyondTheVolumeGroupIsResourceExhaustedAndLeavesNoLv() {
        int before = ok("lvm", "lvs", "--noheadings", GuestEnv.volumeGroup()).lines().toList().size();
        expectCode(Status.Code.RESOURCE_EXHAUSTED, () -> driver.client().controller()
                .createVolume(create("too-big", 64 * GIB, Map.of()).build()));
        expectCode(Status.Code.RESOURCE_EXHAUSTED, () -> driver.client().controller()
                .createVolume(create("too-big-thin", 64 * GIB, thin()).build()));
        assertEquals(before, ok("lvm", "lvs", "--noheadings", GuestEnv.volumeGroup()).lines().toList().size());
    }

    /**
     * A weight or a floor needs io.cost on the group's disks, which this node's plugin was not told
     * to enable (and this kernel does not have): refused before anything is made, naming the flag.
     */
    @Test
    void aWeightOrFloorWithoutIoCostIsFailedPreconditionAndLeavesNoLv() {
        int before = ok("lvm", "lvs", "--noheadings", GuestEnv.volumeGroup()).lines().toList().size();
        for (Map<String, String> guarantee : List.of(Map.of("ioWeight", "800"), Map.of("iopsFloor", "100"))) {
            StatusRuntimeException e = expectCode(Status.Code.FAILED_PRECONDITION, () -> driver.client().controller()
                    .createVolume(create("guaranteed", 64 * MIB, guarantee).build()));
            String message = e.getStatus().getDescription();
            assertTrue(message.contains(guarantee.keySet().iterator().next()) && message.contains("--io-cost="
                    + GuestEnv.volumeGroup()), message);
        }
        assertEquals(before, ok("lvm", "lvs", "--noheadings", GuestEnv.volumeGroup()).lines().toList().size());
    }

    @Test
    void overProvisioningRatioBoundsThinVolumesAndCapacity() {
        long pool = Csi2.GIB * 2;
        long capacity = driver.client().controller().getCapacity(Csi.GetCapacityRequest.newBuilder()
                .putParameters("lvmType", "thin").putParameters("overprovisionRatio", "2").build()).getAvailableCapacity();
        assertEquals(2 * pool, capacity, "an empty 2 GiB pool at ratio 2");
        createVolume(create("overprovisioned", 3 * GIB, Map.of("lvmType", "thin", "overprovisionRatio", "2")).build());
        expectCode(Status.Code.RESOURCE_EXHAUSTED, () -> driver.client().controller().createVolume(
                create("overprovisioned-2", 3 * GIB, Map.of("lvmType", "thin", "overprovisionRatio", "2")).build()));
        long after = driver.client().controller().getCapacity(Csi.GetCapacityRequest.newBuilder()
                .putParameters("lvmType", "thin").putParameters("overprovisionRatio", "2").build()).getAvailableCapacity();
        assertEquals(GIB, after);
    }

    @Test
    void capacityOfTheVolumeGroupFollowsItsFreeSpaceAndTheTopology() {
        long before = driver.client().controller().getCapacity(Csi.GetCapacityRequest.getDefaultInstance())
                .getAvailableCapacity();
        long vgFree = Long.parseLong(ok("lvm", "vgs", "--noheadings", "--units", "b", "--nosuffix", "-o", "vg_free",
                GuestEnv.volumeGroup()).strip());
        assertEquals(vgFree, before);
        createVolume(create("takes-space", 64 * MIB, Map.of()).build());
        long after = driver.client().controller().getCapacity(Csi.GetCapacityRequest.getDefaultInstance())
                .getAvailableCapacity();
        assertEquals(before - 64 * MIB, after);
        long elsewhere = driver.client().controller().getCapacity(Csi.GetCapacityRequest.newBuilder()
                .setAccessibleTopology(Csi.Topology.newBuilder().putSegments("topology.lvmqos.csi.io/node", "other"))
                .build()).getAvailableCapacity();
        assertEquals(0, elsewhere);
    }

    @Test
    void topologyThatExcludesThisNodeIsResourceExhausted() {
        expectCode(Status.Code.RESOURCE_EXHAUSTED, () -> driver.client().controller().createVolume(
                create("elsewhere", 8 * MIB, Map.of()).setAccessibilityRequirements(Csi.TopologyRequirement.newBuilder()
                        .addRequisite(Csi.Topology.newBuilder().putSegments("topology.lvmqos.csi.io/node", "other")))
                        .build()));
        Csi.Volume here = createVolume(create("here", 8 * MIB, Map.of()).setAccessibilityRequirements(
                Csi.TopologyRequirement.newBuilder().addRequisite(Csi.Topology.newBuilder()
                        .putSegments("topology.lvmqos.csi.io/node", "guest-node"))).build());
        assertFalse(here.getVolumeId().isEmpty());
    }

    @Test
    void missingThinPoolIsFailedPreconditionNamingIt() {
        var failure = expectCode(Status.Code.FAILED_PRECONDITION, () -> driver.client().controller().createVolume(
                create("no-pool", 8 * MIB, Map.of("lvmType", "thin", "thinPool", "nopool")).build()));
        assertTrue(failure.getStatus().getDescription().contains("nopool"), failure.getStatus().getDescription());
    }

    @Test
    void thinPoolThatDoesNotZeroNewBlocksIsRefused() {
        String vg = GuestEnv.volumeGroup();
        ok("lvm", "lvcreate", "-q", "-y", "--type", "thin-pool", "-Z", "n", "-L", "64m", "-n", "nozero", vg);
        try {
            var failure = expectCode(Status.Code.FAILED_PRECONDITION, () -> driver.client().controller().createVolume(
                    create("unzeroed", 8 * MIB, Map.of("lvmType", "thin", "thinPool", "nozero")).build()));
            assertTrue(failure.getStatus().getDescription().contains("zero"), failure.getStatus().getDescription());
        } finally {
            ok("lvm", "lvremove", "-q", "-y", vg + "/nozero");
        }
    }

    @Test
    void invalidParametersAndMultiNodeModesAreInvalidArgument() {
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller()
                .createVolume(create("bad", 8 * MIB, Map.of("iops", "0")).build()));
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller()
                .createVolume(create("bad", 8 * MIB, Map.of("speed", "fast")).build()));
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller().createVolume(
                create("bad", 8 * MIB, Map.of()).clearVolumeCapabilities().addVolumeCapabilities(Csi2.mount("",
                        Csi.VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER)).build()));
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller()
                .createVolume(create("", 8 * MIB, Map.of()).build()));
        expectCode(Status.Code.OUT_OF_RANGE, () -> driver.client().controller().createVolume(create("bad", 1, Map.of())
                .setCapacityRange(Csi.CapacityRange.newBuilder().setRequiredBytes(1).setLimitBytes(1000)).build()));
    }

    @Test
    void listVolumesPaginatesAndRefusesATokenItDidNotIssue() {
        for (int i = 0; i < 5; i++) {
            createVolume(create("listed-" + i, 8 * MIB, thin()).build());
        }
        Set<String> seen = new HashSet<>();
        String token = "";
        int pages = 0;
        do {
            Csi.ListVolumesResponse page = driver.client().controller().listVolumes(
                    Csi.ListVolumesRequest.newBuilder().setMaxEntries(2).setStartingToken(token).build());
            assertTrue(page.getEntriesCount() <= 2);
            page.getEntriesList().forEach(e -> assertTrue(seen.add(e.getVolume().getVolumeId()), "listed twice"));
            token = page.getNextToken();
            pages++;
        } while (!token.isEmpty());
        assertTrue(seen.containsAll(volumes), seen + " lacks some of " + volumes);
        assertTrue(pages >= 3);
        expectCode(Status.Code.ABORTED, () -> driver.client().controller()
                .listVolumes(Csi.ListVolumesRequest.newBuilder().setStartingToken("invalid-token").build()));
    }

    @Test
    void idsThisDriverNeverIssuedAreNotFoundOrSuccess() {
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId("reallyfake").build());
        driver.client().controller().deleteSnapshot(Csi.DeleteSnapshotRequest.newBuilder().setSnapshotId("fake").build());
        expectCode(Status.Code.NOT_FOUND, () -> driver.client().controller().controllerGetVolume(
                Csi.ControllerGetVolumeRequest.newBuilder().setVolumeId("lvmqos/guest-node/lvmqos/vol_x_0").build()));
        expectCode(Status.Code.NOT_FOUND, () -> driver.client().controller().validateVolumeCapabilities(
                Csi.ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId("fake").addVolumeCapabilities(Csi2.mount())
                        .build()));
        assertEquals(0, driver.client().controller().listSnapshots(Csi.ListSnapshotsRequest.newBuilder()
                .setSnapshotId("fake").build()).getEntriesCount());
    }

    @Test
    void snapshotRestoreAndCloneCarryTheDataAndMayGrow() {
        Csi.Volume origin = createVolume(create("origin", 16 * MIB, thin()).build());
        String device = lvPath(origin.getVolumeId());
        ok("dd", "if=/dev/urandom", "of=/run/pattern", "bs=1M", "count=4", "status=none");
        ok("dd", "if=/run/pattern", "of=" + device, "bs=1M", "oflag=direct", "status=none");

        Csi.Snapshot snapshot = createSnapshot("snap-1", origin.getVolumeId());
        assertTrue(snapshot.getReadyToUse());
        assertEquals(16 * MIB, snapshot.getSizeBytes());
        assertEquals(origin.getVolumeId(), snapshot.getSourceVolumeId());
        assertTrue(snapshot.getCreationTime().getSeconds() > 0);
        assertEquals(snapshot, createSnapshot("snap-1", origin.getVolumeId()), "same name, same snapshot");

        Csi.Volume other = createVolume(create("other-origin", 8 * MIB, thin()).build());
        expectCode(Status.Code.ALREADY_EXISTS, () -> driver.client().controller().createSnapshot(
                Csi.CreateSnapshotRequest.newBuilder().setName("snap-1").setSourceVolumeId(other.getVolumeId()).build()));

        Csi.ListSnapshotsResponse bySource = driver.client().controller().listSnapshots(
                Csi.ListSnapshotsRequest.newBuilder().setSourceVolumeId(origin.getVolumeId()).build());
        assertEquals(List.of(snapshot), bySource.getEntriesList().stream().map(Csi.ListSnapshotsResponse.Entry::getSnapshot).toList());
        Csi.ListSnapshotsResponse byId = driver.client().controller().listSnapshots(
                Csi.ListSnapshotsRequest.newBuilder().setSnapshotId(snapshot.getSnapshotId()).build());
        assertEquals(1, byId.getEntriesCount());

        Csi.Volume restored = createVolume(create("restored", 32 * MIB, thin())
                .setVolumeContentSource(Csi.VolumeContentSource.newBuilder().setSnapshot(
                        Csi.VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshot.getSnapshotId())))
                .build());
        assertEquals(32 * MIB, restored.getCapacityBytes(), "restored larger than its snapshot");
        assertTrue(restored.hasContentSource());
        ok("cmp", "-n", Long.toString(4 * MIB), "/run/pattern", lvPath(restored.getVolumeId()));

        Csi.Volume clone = createVolume(create("clone", 16 * MIB, thin())
                .setVolumeContentSource(Csi.VolumeContentSource.newBuilder().setVolume(
                        Csi.VolumeContentSource.VolumeSource.newBuilder().setVolumeId(origin.getVolumeId())))
                .build());
        ok("cmp", "-n", Long.toString(4 * MIB), "/run/pattern", lvPath(clone.getVolumeId()));
        String skip = ok("lvm", "lvs", "--noheadings", "-o", "lv_skip_activation,lv_attr", lvVg(clone)).strip();
        assertTrue(skip.startsWith("0") || skip.contains("a"), "a clone is active and not activation-skip: " + skip);

        // deleting the origin leaves its snapshot and the restored volume intact
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(origin.getVolumeId()).build());
        volumes.remove(origin.getVolumeId());
        ok("cmp", "-n", Long.toString(4 * MIB), "/run/pattern", lvPath(restored.getVolumeId()));
    }

    @Test
    void linearOrForeignSourcesAreInvalidArgumentAndUnknownOnesNotFound() {
        Csi.Volume linear = createVolume(create("linear-source", 8 * MIB, Map.of()).build());
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller().createSnapshot(
                Csi.CreateSnapshotRequest.newBuilder().setName("of-linear").setSourceVolumeId(linear.getVolumeId()).build()));
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller().createVolume(
                create("clone-of-linear", 8 * MIB, thin()).setVolumeContentSource(Csi.VolumeContentSource.newBuilder()
                        .setVolume(Csi.VolumeContentSource.VolumeSource.newBuilder().setVolumeId(linear.getVolumeId())))
                        .build()));
        String foreign = linear.getVolumeId().replace("/guest-node/", "/other-node/");
        var failure = expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller().createVolume(
                create("clone-of-foreign", 8 * MIB, thin()).setVolumeContentSource(Csi.VolumeContentSource.newBuilder()
                        .setVolume(Csi.VolumeContentSource.VolumeSource.newBuilder().setVolumeId(foreign))).build()));
        assertTrue(failure.getStatus().getDescription().contains("other-node"));
        expectCode(Status.Code.NOT_FOUND, () -> driver.client().controller().createVolume(
                create("from-nothing", 8 * MIB, thin()).setVolumeContentSource(Csi.VolumeContentSource.newBuilder()
                        .setSnapshot(Csi.VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId("nope"))).build()));
    }

    @Test
    void aMountedVolumeIsNotDeletedAndItsDataSurvives() {
        refusedWhileMounted(createVolume(create("in-use", 16 * MIB, Map.of()).build()));
    }

    /** A thin volume the driver knows is removed by one lvremove with no lvs first: lvm's refusal still says who holds it. */
    @Test
    void aMountedThinVolumeIsNotDeletedAndItsDataSurvives() {
        Csi.Volume volume = createVolume(create("in-use-thin", 16 * MIB, thin()).build());
        refusedWhileMounted(volume);
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build());
        volumes.remove(volume.getVolumeId());
        assertFalse(ok("lvm", "lvs", "--noheadings", "-o", "lv_name", GuestEnv.volumeGroup())
                .contains(LvmNames.volumeLvName("in-use-thin")), "deleted once unmounted");
        // absent is success, also when the catalog still knew it
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build());
    }

    private void refusedWhileMounted(Csi.Volume volume) {
        String device = lvPath(volume.getVolumeId());
        ok("mkfs.ext4", "-q", device);
        ok("mkdir", "-p", "/run/in-use");
        ok("mount", device, "/run/in-use");
        ok("sh", "-c", "echo precious > /run/in-use/file");
        try {
            var failure = expectCode(Status.Code.FAILED_PRECONDITION, () -> driver.client().controller().deleteVolume(
                    Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build()));
            assertTrue(failure.getStatus().getDescription().contains("mounted at /run/in-use"), failure.getStatus().getDescription());
            assertEquals("precious", ok("cat", "/run/in-use/file").strip());
        } finally {
            ok("umount", "/run/in-use");
        }
    }

    @Test
    void aDeletedLinearVolumeIsZeroedBeforeItsExtentsAreReused() {
        Csi.Volume first = createVolume(create("tenant-1", 32 * MIB, Map.of()).build());
        String extents = ok("lvm", "lvs", "--noheadings", "-o", "seg_pe_ranges", lvVg(first)).strip();
        ok("dd", "if=/dev/urandom", "of=" + lvPath(first.getVolumeId()), "bs=1M", "count=32", "oflag=direct", "status=none");
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(first.getVolumeId()).build());
        volumes.remove(first.getVolumeId());

        // a bare lvcreate without zeroing gets the same extents back: they must already be zero
        String vg = GuestEnv.volumeGroup();
        ok("lvm", "lvcreate", "-q", "-y", "-Z", "n", "-W", "n", "-L", "32m", "-n", "next-tenant", vg);
        try {
            assertEquals(extents, ok("lvm", "lvs", "--noheadings", "-o", "seg_pe_ranges", vg + "/next-tenant").strip());
            ok("cmp", "-n", Long.toString(32 * MIB), "/dev/" + vg + "/next-tenant", "/dev/zero");
        } finally {
            ok("lvm", "lvremove", "-q", "-y", vg + "/next-tenant");
        }
    }

    @Test
    void aDriverKilledDuringCreateVolumeReturnsTheSameVolumeAfterRestartAndLeavesNoSecondLv() throws Exception {
        for (int delayMillis : new int[] {30, 120, 400}) {
            String name = "crash-" + delayMillis;
            Csi.CreateVolumeRequest request = create(name, 64 * MIB, Map.of("bps", "10Mi")).build();
            CompletableFuture<?> call = CompletableFuture.runAsync(() -> {
                try {
                    driver.client().controller().createVolume(request);
                } catch (RuntimeException killedMidway) {
                    // expected when the kill lands first
                }
            });
            Thread.sleep(delayMillis);
            driver.kill();
            call.handle((ok, failure) -> null).get();
            driver.restart();
            Csi.Volume volume;
            try {
                volume = driver.client().controller().withDeadlineAfter(90, java.util.concurrent.TimeUnit.SECONDS)
                        .createVolume(request).getVolume();
                volumes.add(volume.getVolumeId());
            } catch (RuntimeException e) {
                throw new AssertionError("the retry after a kill at " + delayMillis + " ms failed: " + e + "\nprocesses:\n"
                        + GuestCommand.run("ps", "-eo", "pid,ppid,stat,wchan:32,args").stdout()
                        + "\nlocks:\n" + GuestCommand.run("cat", "/proc/locks").stdout(), e);
            }
            assertEquals(64 * MIB, volume.getCapacityBytes());
            String tag = "lvmqos.name=" + java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(name.getBytes());
            assertEquals(1, lvNamesWithTag(tag).size(), "one LV for " + name);
            assertNotEquals(-1, ok("lvm", "lvs", "--noheadings", "-o", "lv_attr", lvVg(volume)).strip().indexOf('a'));
        }
    }

    @Test
    void controllerGetVolumeAndValidateCapabilities() {
        Csi.Volume volume = createVolume(create("described", 8 * MIB, Map.of("iopsPerGiB", "100")).build());
        Csi.ControllerGetVolumeResponse got = driver.client().controller().controllerGetVolume(
                Csi.ControllerGetVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build());
        assertEquals(volume.getVolumeId(), got.getVolume().getVolumeId());
        assertEquals(Map.of(), got.getVolume().getVolumeContextMap());
        Csi.ValidateVolumeCapabilitiesResponse valid = driver.client().controller().validateVolumeCapabilities(
                Csi.ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(volume.getVolumeId())
                        .addVolumeCapabilities(Csi2.block()).build());
        assertTrue(valid.hasConfirmed());
        Csi.ValidateVolumeCapabilitiesResponse invalid = driver.client().controller().validateVolumeCapabilities(
                Csi.ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(volume.getVolumeId())
                        .addVolumeCapabilities(Csi2.mount("", Csi.VolumeCapability.AccessMode.Mode.MULTI_NODE_READER_ONLY))
                        .build());
        assertFalse(invalid.hasConfirmed());
        assertFalse(invalid.getMessage().isEmpty());
    }

    @Test
    void aStorageClassMayPickASecondVolumeGroup() {
        List<String> groups = GuestEnv.volumeGroups();
        org.junit.jupiter.api.Assumptions.assumeTrue(groups.size() > 1, "the guest has one volume group");
        Csi.Volume volume = createVolume(create("second-vg", 8 * MIB, Map.of("volumeGroup", groups.get(1))).build());
        assertTrue(volume.getVolumeId().contains("/" + groups.get(1) + "/"), volume.getVolumeId());
        expectCode(Status.Code.INVALID_ARGUMENT, () -> driver.client().controller()
                .createVolume(create("unmanaged-vg", 8 * MIB, Map.of("volumeGroup", "notmanaged")).build()));
        GuestCommand.run("true");
    }
}
