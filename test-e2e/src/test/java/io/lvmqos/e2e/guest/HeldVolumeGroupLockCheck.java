package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A node whose volume group lock is held (another lvm command stuck in it, or an operator's
 * long-running lvm) when the plugin starts: Probe still says ready, so that the livenessprobe sidecar
 * does not restart the container (and kill its lvm), a call that needs the lock answers by its
 * deadline, and once the lock is released the retry succeeds.
 */
public class HeldVolumeGroupLockCheck {

    private static Process holder;
    private static GuestDriver driver;

    @BeforeAll
    static void holdTheLockThenStart() throws Exception {
        GuestEnv.assumeInGuest();
        Path lock = Path.of("/run/lock/lvm").resolve("V_" + GuestEnv.volumeGroup());
        Files.createDirectories(lock.getParent());
        // flock(1) holds the same lock lvm takes for the volume group, for as long as the check needs
        holder = new ProcessBuilder(List.of("flock", "--exclusive", lock.toString(), "sleep", "600"))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        for (int i = 0; i < 50 && !held(lock); i++) {
            TimeUnit.MILLISECONDS.sleep(100);
        }
        assertTrue(held(lock), "flock did not take " + lock);
        driver = GuestDriver.start();
    }

    private static boolean held(Path lock) throws Exception {
        Process probe = new ProcessBuilder(List.of("flock", "--nonblock", "--shared", lock.toString(), "true"))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        return probe.waitFor() != 0;
    }

    @AfterAll
    static void release() throws Exception {
        if (holder != null) {
            holder.descendants().forEach(ProcessHandle::destroyForcibly);
            holder.destroyForcibly().waitFor();
        }
        if (driver != null) {
            driver.close();
        }
    }

    @Test
    void probeIsReadyCallsEndByTheirDeadlineAndTheRetrySucceeds() throws Exception {
        Csi.ProbeResponse probe = driver.client().identity().probe(Csi.ProbeRequest.getDefaultInstance());
        assertTrue(probe.getReady().getValue(), "Probe must not fail liveness while lvm waits on a lock");

        Csi.CreateVolumeRequest request = create("held-lock", 8 * MIB, Map.of("lvmType", "thin")).build();
        expectCode(Status.Code.DEADLINE_EXCEEDED, () -> driver.client().controller()
                .withDeadlineAfter(5, TimeUnit.SECONDS).createVolume(request));
        assertTrue(driver.client().identity().probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue());

        holder.descendants().forEach(ProcessHandle::destroyForcibly);
        holder.destroyForcibly().waitFor();
        Csi.Volume volume = driver.client().controller().createVolume(request).getVolume();
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).build());
    }
}
