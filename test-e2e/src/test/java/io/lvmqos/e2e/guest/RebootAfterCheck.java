package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.guest.GuestPods.CgroupDriver;
import io.lvmqos.e2e.guest.GuestPods.Pod;
import io.lvmqos.e2e.guest.GuestPods.QosClass;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.VolumeTags;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The node after a reboot ({@code RebootIT}), on the disks of {@link RebootBeforeCheck}'s guest:
 * nothing is active (no udev here to autoactivate), the thin pool's metadata passes thin_check,
 * the driver starts, and what kubelet does after a reboot is replayed: the pod cgroups made again,
 * NodeStageVolume and NodePublishVolume with the same ids and paths. Then every volume is active,
 * every journalled file reads back with its checksum, every limit is in its pod's io.max, a create
 * the reboot interrupted either exists with all its tags or not at all and its retry converges, the
 * interrupted wipe goes on from its saved progress (this check leaves the rest of it), and no LV is
 * left that no volume id names.
 */
public class RebootAfterCheck {

    @RegisterExtension
    static final DriverForTheClass driverPerTest = new DriverForTheClass("--wipe-bps", RebootBeforeCheck.WIPE_BPS).startedByEachTest();

    private final RebootJournal journal = new RebootJournal(Path.of(System.getenv(RebootJournal.JOURNAL_ENV)));
    private final String vg = GuestEnv.volumeGroup();

    @Test
    void theNodeComesBackAsItWas() throws Exception {
        GuestEnv.assumeInGuest();
        assertEquals("", activeLvs(), "nothing activated the volume group's LVs at boot: no udev in this node");
        thinCheck();
        try (GuestDriver driver = driverPerTest.start()) {
            Set<String> volumeIds = new HashSet<>();
            for (List<String> volume : journal.entries("volume")) {
                replayKubelet(driver, volume);
                volumeIds.add(volume.getFirst());
            }
            checkFiles();
            volumeIds.addAll(retryInterruptedCreates(driver));
            volumeIds.add(aCreateWhosePoolLostItsDevice(driver));
            for (List<String> wipe : journal.entries("wipe")) {
                resumeWipe(driver, wipe.get(0), Long.parseLong(wipe.get(1)));
                volumeIds.add(wipe.get(0));
            }
            Set<String> named = new HashSet<>();
            volumeIds.forEach(id -> named.add(Csi2.lvName(id)));
            for (String lv : userLvs()) {
                assertTrue(named.contains(lv), "LV " + vg + "/" + lv + " is named by no volume id the test knows "
                        + named + "; its tags: " + ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", vg + "/" + lv));
            }
            System.out.println("after the reboot: " + journal.entries("volume").size() + " volumes published again, "
                    + journal.entries("file").size() + " files checked, " + journal.entries("create-start").size()
                    + " creates retried, cut: " + journal.entries("cut"));
        }
    }

    /** kubelet after a reboot: the pod's cgroup anew, then stage and publish with the ids and paths it had. */
    private static void replayKubelet(GuestDriver driver, List<String> volume) throws Exception {
        String id = volume.get(0);
        Pod pod = GuestPods.create(volume.get(1), QosClass.BURSTABLE, CgroupDriver.SYSTEMD, "");
        Path staging = Path.of(volume.get(2));
        Path target = Path.of(volume.get(3));
        driver.client().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder()
                .setVolumeId(id).setStagingTargetPath(staging.toString()).setVolumeCapability(Csi2.mount()).build());
        driver.client().node().nodePublishVolume(publishRequest(id, staging, target, pod.uid()));
        String device = ok("stat", "-L", "-c", "%t:%T", "/dev/" + id.split("/")[2] + "/" + Csi2.lvName(id)).strip();
        String[] parts = device.split(":");
        String number = Integer.parseInt(parts[0], 16) + ":" + Integer.parseInt(parts[1], 16);
        String ioMax = ok("cat", pod.cgroup().resolve("io.max").toString());
        assertTrue(ioMax.lines().anyMatch(line -> line.startsWith(number + " ") && line.contains(volume.get(4))),
                "the pod's io.max has " + volume.get(4) + " on " + number + " again: " + ioMax);
    }

    static Csi.NodePublishVolumeRequest publishRequest(String id, Path staging, Path target, String podUid) {
        return Csi.NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(Csi2.mount())
                .putVolumeContext("csi.storage.k8s.io/pod.uid", podUid).build();
    }

    private void checkFiles() throws Exception {
        Map<String, Path> targets = new java.util.HashMap<>();
        journal.entries("volume").forEach(v -> targets.put(v.get(0), Path.of(v.get(3))));
        for (List<String> file : journal.entries("file")) {
            Path path = targets.get(file.get(0)).resolve(file.get(1));
            String sum = ok("sha256sum", path.toString()).split(" ")[0];
            assertEquals(file.get(2), sum, "the fsynced file " + path + " reads back as written");
        }
    }

    /**
     * Every create the journal saw start: its LV has the driver's tags or is absent, and a retry of
     * the same request succeeds and leaves one LV of that name.
     */
    private List<String> retryInterruptedCreates(GuestDriver driver) throws java.io.IOException {
        List<String> ids = new ArrayList<>();
        for (List<String> started : journal.entries("create-start")) {
            String name = started.getFirst();
            String lv = LvmNames.volumeLvName(name);
            GuestCommand.Result before = GuestCommand.run("lvm", "lvs", "--noheadings", "-o", "lv_tags", vg + "/" + lv);
            if (before.succeeded()) {
                assertHasTags(name, before.stdout());
            }
            ids.add(retryCreate(driver, name));
            System.out.println("create of " + name + " in flight at the reboot: its LV was "
                    + (before.succeeded() ? "there with all its tags" : "absent") + "; the retry converged");
        }
        return ids;
    }

    /**
     * The other half of a create cut short, made certain: an LV that LVM lists with its tags but whose
     * thin device the pool never committed. Its retry must converge too (the kernel refuses to
     * activate it, so the driver makes it again).
     */
    private String aCreateWhosePoolLostItsDevice(GuestDriver driver) {
        String name = "reboot-pool-lost";
        String id = retryCreate(driver, name);
        String lv = vg + "/" + Csi2.lvName(id);
        String thinId = ok("lvm", "lvs", "--noheadings", "-o", "thin_id", lv).strip();
        ok("lvm", "lvchange", "-an", lv);
        String pool = GuestEnv.thinPool().orElseThrow();
        ok("dmsetup", "message", vg + "-" + pool + "-tpool", "0", "delete " + thinId);
        assertEquals(id, retryCreate(driver, name), "the retry converges on the same volume");
        assertEquals("active", ok("lvm", "lvs", "--noheadings", "-o", "lv_active", lv).strip(), "made again, active");
        return id;
    }

    private String retryCreate(GuestDriver driver, String name) {
        Csi.Volume volume = driver.client().controller().createVolume(
                create(name, 64 * MIB, Map.of("lvmType", "thin", "writeBPS", "4Mi")).build()).getVolume();
        assertHasTags(name, ok("lvm", "lvs", "--noheadings", "-o", "lv_tags", vg + "/" + Csi2.lvName(volume.getVolumeId())));
        return volume.getVolumeId();
    }

    private static void assertHasTags(String name, String tags) {
        for (String key : List.of(VolumeTags.NAME, VolumeTags.REQUESTED_BYTES, VolumeTags.PARAMETERS, VolumeTags.QOS_PREFIX + "wbps")) {
            assertTrue(tags.contains(key + "="), "the LV of " + name + " carries " + key + ": " + tags);
        }
    }

    /**
     * The wipe the reboot interrupted goes on from its saved progress: bytes written before the saved
     * point after the reboot stay as they are, the next part is zeroed, and the LV is removed at last.
     */
    private void resumeWipe(GuestDriver driver, String volumeId, long journalled) throws java.io.IOException {
        String lv = vg + "/" + Csi2.lvName(volumeId);
        long saved = RebootBeforeCheck.wipedBytes(volumeId);
        assertTrue(saved >= journalled && saved > 0, "the wipe's progress survived the reboot: " + saved
                + " bytes saved, " + journalled + " journalled");
        ok("lvm", "lvchange", "-ay", lv);
        String device = "/dev/" + lv;
        // a mark in the part already zeroed: a wipe that started over would zero it again
        ok("sh", "-c", "printf 'resumed' | dd of=" + device + " bs=7 count=1 conv=notrunc,fsync status=none");
        StatusRuntimeException stopped = Csi2.expectCode(Status.Code.ABORTED, () -> driver.client().controller()
                .withDeadlineAfter(8, TimeUnit.SECONDS)
                .deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volumeId).build()));
        long reached = RebootBeforeCheck.wipedBytes(volumeId);
        assertTrue(reached > saved, "went on from " + saved + ", reached " + reached + ": " + stopped.getStatus());
        assertEquals("resumed", ok("sh", "-c", "dd if=" + device + " bs=512 count=1 iflag=direct status=none | head -c 7"),
                "the part zeroed before the reboot is not zeroed again");
        assertEquals(0, GuestCommand.run(Duration.ofMinutes(1), List.of("cmp", "-i", Long.toString(saved), "-n",
                Long.toString(reached - saved), device, "/dev/zero")).exitCode(), "zeroed from " + saved + " to " + reached);
        System.out.printf("wipe: %d MiB saved before the reboot, %d MiB after one DeleteVolume after it%n",
                saved / MIB, reached / MIB);
    }

    /**
     * thin_check on the pool's metadata while the pool is inactive: LVM activates the metadata
     * component on its own, read-only, for exactly this.
     */
    private void thinCheck() {
        String pool = GuestEnv.thinPool().orElseThrow();
        String tmeta = vg + "/" + pool + "_tmeta";
        ok("lvm", "lvchange", "-ay", "-y", tmeta);
        try {
            GuestCommand.Result check = GuestCommand.run(Duration.ofMinutes(1),
                    List.of("thin_check", "/dev/mapper/" + vg + "-" + pool + "_tmeta"));
            assertEquals(0, check.exitCode(), "thin_check passes on the pool's metadata: " + check);
        } finally {
            ok("lvm", "lvchange", "-an", tmeta);
        }
    }

    private String activeLvs() {
        return ok("lvm", "lvs", "--all", "--noheadings", "-S", "lv_active=active", "-o", "lv_name", vg).strip();
    }

    /** The LVs of volumes and snapshots: not the pool, not its hidden parts. */
    private List<String> userLvs() {
        return ok("lvm", "lvs", "--noheadings", "-o", "lv_name,lv_attr", vg).lines()
                .map(line -> line.strip().split("\\s+"))
                .filter(words -> words.length == 2 && !words[1].startsWith("t"))
                .map(words -> words[0]).toList();
    }
}
