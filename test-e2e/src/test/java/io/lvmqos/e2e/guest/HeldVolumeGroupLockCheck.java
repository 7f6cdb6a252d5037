package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.uml.GuestEnv;
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

    private static HeldVolumeGroupLock lock;
    private static GuestDriver driver;

    @BeforeAll
    static void holdTheLockThenStart() throws Exception {
        GuestEnv.assumeInGuest();
        lock = HeldVolumeGroupLock.take();
        driver = GuestDriver.start();
    }

    @AfterAll
    static void release() throws Exception {
        if (lock != null) {
            lock.close();
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

        lock.close();
        Csi.Volume volume = driver.client().controller().createVolume(request).getVolume();
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).build());
    }
}
