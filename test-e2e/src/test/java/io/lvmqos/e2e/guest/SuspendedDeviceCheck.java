package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.lvmqos.e2e.uml.GuestCommand;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A device that a killed lvm left suspended is resumed when the driver starts. lvm suspends a thin
 * volume while it takes a snapshot of it (and a pool's layers while it changes them) and resumes it
 * before it ends; SIGKILLed in between (the OOM killer, a killed container), it leaves the device
 * suspended, and every read and write of it, the pod's and the driver's own, waits for good
 * (KillDuringRpcCheck once hung that way: the killed JVM could not even close the device).
 * Here the suspension is made with dmsetup, as lvm makes it, on a staged volume with a file on it.
 */
public class SuspendedDeviceCheck {

    private static final Duration RESUMED_WITHIN = Duration.ofSeconds(60);

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass();

    @Test
    void aSuspendedVolumeIsResumedWhenTheDriverStarts() throws Exception {
        staged("suspended-volume", volume -> dmName(Csi2.lvName(volume.getVolumeId())));
    }

    /**
     * The pool activated as a whole, its own device beside its {@code -tpool} layer, which is how
     * lvs can report the layer suspended. A pool activated only through its thin volumes (the first
     * thin create after the pool was deactivated) has no device of its own: lvs then reports the
     * pool inactive, a suspended {@code -tpool} goes unseen, and {@code lvchange --refresh} does not
     * resume it (measured 2026-12-06; docs/faults.md). This check once ran in that state, left by the
     * checks before it in the guest, and failed before the driver's restart.
     */
    @Test
    void aSuspendedThinPoolIsResumedWhenTheDriverStarts() throws Exception {
        ok("lvm", "lvchange", "--activate", "y", GuestEnv.volumeGroup() + "/thinpool");
        staged("suspended-pool", volume -> dmName("thinpool") + "-tpool");
    }

    private interface DeviceOf {
        String of(Csi.Volume volume);
    }

    /** Stages a volume with a file, suspends {@code toSuspend}, restarts the driver and reads the file back. */
    private void staged(String name, DeviceOf toSuspend) throws Exception {
        Csi.Volume volume = driver.client().controller().createVolume(create(name, 32 * MIB,
                Map.of("lvmType", "thin")).build()).getVolume();
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/" + name + "/globalmount");
        driver.client().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                .setVolumeCapability(Csi2.mount()).build());
        Path file = staging.resolve("data");
        ok("dd", "if=/dev/urandom", "of=" + file, "bs=64k", "count=16", "conv=fsync", "status=none");
        String before = ok("sha256sum", file.toString()).split(" ")[0];
        String device = toSuspend.of(volume);
        // what lvm's suspend leaves: buffered writes flushed, then the table suspended
        ok("sync");
        ok("dmsetup", "suspend", device);
        try {
            assertEquals("Suspended", state(device), "dmsetup suspended " + device);
            assertTrue(suspendedInLvs(), "lvs reports a suspended LV: " + lvsStates());
            driver.restart();
            long deadline = System.nanoTime() + RESUMED_WITHIN.toNanos();
            while (!state(device).equals("Active") && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            assertEquals("Active", state(device), "the driver resumed " + device + " at its start");
            assertTrue(driver.log().contains("resumed LV"), "the driver says what it resumed");
        } finally {
            // never leave the guest with a device that hangs whoever touches it
            if (!state(device).equals("Active")) {
                ok("dmsetup", "resume", device);
            }
        }
        ok("sh", "-c", "echo 3 > /proc/sys/vm/drop_caches");
        assertEquals(before, ok("sha256sum", file.toString()).split(" ")[0], "the file reads back after the resume");
        driver.client().node().nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString()).build());
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).build());
    }

    private static String dmName(String lvName) {
        return GuestEnv.volumeGroup().replace("-", "--") + "-" + lvName.replace("-", "--");
    }

    private static String state(String device) {
        return ok("dmsetup", "info", "-c", "--noheadings", "-o", "suspended", device).strip();
    }

    private static List<String> lvsStates() {
        return GuestCommand.ok("lvm", "lvs", "--all", "--noheadings", "-o", "lv_name,lv_attr", GuestEnv.volumeGroup())
                .lines().map(String::strip).toList();
    }

    private static boolean suspendedInLvs() {
        return lvsStates().stream().map(line -> line.split("\\s+")).anyMatch(f -> f.length > 1 && f[1].length() > 4
                && f[1].charAt(4) == 's');
    }
}
