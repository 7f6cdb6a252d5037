package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.guest.Csi2.expectCode;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.Status;
import io.lvmqos.e2e.uml.GuestEnv;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A node whose volume group lock is held (another lvm command stuck in it, or an operator's
 * long-running lvm) when the plugin starts. While lvm has left the health check unanswered for less
 * than the bound, Probe says ready (a slow lvm is no reason for the livenessprobe sidecar to restart
 * the container), and a call that needs the lock answers by its deadline. Past the bound Probe says
 * not ready, since a verdict from before the lock would be stale; once the lock is released Probe
 * says ready again and the retry of the call succeeds.
 */
public class HeldVolumeGroupLockCheck {

    /** The plugin's --probe-lvm-timeout here: short, so that the check stays short; the default is 30 s. */
    private static final Duration UNANSWERED = Duration.ofSeconds(12);

    private static HeldVolumeGroupLock lock;
    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass("--probe-lvm-timeout", Long.toString(UNANSWERED.toSeconds())).startedBySetUp();

    @BeforeAll
    static void holdTheLockThenStart() throws Exception {
        GuestEnv.assumeInGuest();
        lock = HeldVolumeGroupLock.take();
        driver.start();
    }

    @AfterAll
    static void release() throws Exception {
        if (lock != null) {
            lock.close();
        }
    }

    @Test
    void probeIsReadyWhileLvmIsSlowNotReadyOnceItIsOverdueAndReadyAgainAfterTheRelease() throws Exception {
        long started = System.nanoTime();
        assertTrue(ready(), "Probe must not fail liveness while lvm has waited on a lock for less than the bound");

        Csi.CreateVolumeRequest request = create("held-lock", 8 * MIB, Map.of("lvmType", "thin")).build();
        expectCode(Status.Code.DEADLINE_EXCEEDED, () -> driver.client().controller()
                .withDeadlineAfter(5, TimeUnit.SECONDS).createVolume(request));

        waitForReady(false, UNANSWERED.plusSeconds(30));
        long sinceStart = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
        assertTrue(driver.log().contains("lvm has not answered for"), "the log says why: " + driver.log());

        lock.close();
        Duration readyAfter = waitForReady(true, Duration.ofSeconds(60));
        System.out.printf("held VG lock: Probe not ready %d s after the first Probe (bound %d s), ready %d ms after"
                + " the release%n", sinceStart, UNANSWERED.toSeconds(), readyAfter.toMillis());

        Csi.Volume volume = driver.client().controller().createVolume(request).getVolume();
        driver.client().controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId()).build());
    }

    private static boolean ready() {
        return driver.client().identity().probe(Csi.ProbeRequest.getDefaultInstance()).getReady().getValue();
    }

    /** Polls Probe until it says {@code wanted}; fails after {@code timeout}. */
    private static Duration waitForReady(boolean wanted, Duration timeout) throws InterruptedException {
        long start = System.nanoTime();
        while (ready() != wanted) {
            if (System.nanoTime() - start > timeout.toNanos()) {
                throw new AssertionError("Probe did not say ready=" + wanted + " within " + timeout
                        + (wanted ? " of the lock's release" : " while the VG lock was held past the bound of "
                        + UNANSWERED));
            }
            TimeUnit.MILLISECONDS.sleep(200);
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }
}
