package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.grpc.StatusRuntimeException;
import io.lvmqos.e2e.uml.GuestEnv;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The plugin stopped with SIGTERM, as kubelet stops it on a drain or an upgrade, while a CreateVolume
 * waits in real lvm for the volume group's lock: lvm is let finish when the lock comes free within
 * the shutdown grace, and is stopped (SIGTERM first) within a bound when it does not. Either way
 * nothing is half-made: the LV exists with its tags or not at all, and the retry after a restart
 * ends with exactly one LV.
 */
public class StopDuringLvmCheck {

    /** The shutdown grace (10 s) plus the longest stop grace of an lvm command (15 s), and slack for UML. */
    private static final Duration EXIT_BOUND = Duration.ofSeconds(45);

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass().startedByEachTest();
    private HeldVolumeGroupLock lock;

    @AfterEach
    void cleanUp() throws Exception {
        if (lock != null) {
            lock.close();
        }
    }

    @Test
    void aCreateWaitingOnTheLockFinishesWhenTheLockComesFreeWithinTheGrace() throws Exception {
        GuestEnv.assumeInGuest();
        driver.start();
        Csi.CreateVolumeRequest request = create("stop-finishes", 32 * MIB, Map.of("lvmType", "thin")).build();
        lock = HeldVolumeGroupLock.take();
        CompletableFuture<Csi.Volume> call = CompletableFuture.supplyAsync(
                () -> driver.client().controller().createVolume(request).getVolume());
        ProcessHandle plugin = awaitLvmChild(call);

        plugin.destroy(); // SIGTERM
        TimeUnit.SECONDS.sleep(3);
        assertTrue(plugin.isAlive(), "the plugin waits for the call in progress instead of exiting at once");
        lock.close();
        lock = null;

        Csi.Volume volume = call.get(60, TimeUnit.SECONDS);
        plugin.onExit().get(EXIT_BOUND.toSeconds(), TimeUnit.SECONDS);
        assertEquals(List.of(Csi2.lvName(volume.getVolumeId())), managedLvs("stop_finishes"),
                "the LV the call answered for, and no other");

        driver.restart();
        Csi.Volume again = driver.client().controller().createVolume(request).getVolume();
        assertEquals(volume.getVolumeId(), again.getVolumeId(), "the retry finds the volume the stopped plugin made");
        assertEquals(1, managedLvs("stop_finishes").size());
        driver.client().controller().deleteVolume(
                Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build());
        assertEquals(List.of(), managedLvs("stop_finishes"));
    }

    @Test
    void aCreateWhoseLockNeverComesFreeIsStoppedWithinTheBoundAndLeavesNothing() throws Exception {
        GuestEnv.assumeInGuest();
        driver.start();
        Csi.CreateVolumeRequest request = create("stop-bounded", 32 * MIB, Map.of("lvmType", "thin")).build();
        lock = HeldVolumeGroupLock.take();
        CompletableFuture<Csi.Volume> call = CompletableFuture.supplyAsync(
                () -> driver.client().controller().createVolume(request).getVolume());
        ProcessHandle plugin = awaitLvmChild(call);
        List<ProcessHandle> lvmChildren = lvmDescendants(plugin);

        long stopped = System.nanoTime();
        plugin.destroy(); // SIGTERM, and the lock stays held
        plugin.onExit().get(EXIT_BOUND.toSeconds(), TimeUnit.SECONDS);
        Duration took = Duration.ofNanos(System.nanoTime() - stopped);
        ExecutionException failed = assertThrows(ExecutionException.class, () -> call.get(30, TimeUnit.SECONDS));
        assertTrue(failed.getCause() instanceof StatusRuntimeException, failed.toString());
        for (ProcessHandle child : lvmChildren) {
            assertFalse(child.isAlive(), "no lvm outlives the plugin: " + child.info().commandLine().orElse("?"));
        }
        System.out.println("SIGTERM with the VG lock held: the plugin exited after " + took.toMillis()
                + " ms; the call answered " + ((StatusRuntimeException) failed.getCause()).getStatus().getCode());

        lock.close();
        lock = null;
        assertEquals(List.of(), managedLvs("stop_bounded"), "nothing was made while the lock was held");
        driver.restart();
        Csi.Volume volume = driver.client().controller().createVolume(request).getVolume();
        assertEquals(List.of(Csi2.lvName(volume.getVolumeId())), managedLvs("stop_bounded"));
        driver.client().controller().deleteVolume(
                Csi.DeleteVolumeRequest.newBuilder().setVolumeId(volume.getVolumeId()).build());
        assertEquals(List.of(), managedLvs("stop_bounded"));
    }

    /**
     * Waits until the call's lvm runs (it then waits on the held lock), and returns the plugin. The
     * health check's {@code vgs} waits on the same lock and is not the call's.
     */
    private ProcessHandle awaitLvmChild(CompletableFuture<?> call) throws Exception {
        ProcessHandle plugin = driver.process().process().toHandle();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            assertFalse(call.isDone(), "the call ended while the VG lock was held");
            if (!lvmDescendants(plugin).isEmpty()) {
                return plugin;
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
        throw new AssertionError("the plugin started no lvm command within 60 s");
    }

    /** The lvm running the call's command: a fork, or a shell inside a command on the group. */
    private static List<ProcessHandle> lvmDescendants(ProcessHandle plugin) {
        return DriverLvmProcesses.inCommand(plugin, GuestEnv.volumeGroup());
    }

    private static List<String> managedLvs(String namePart) {
        return ok("lvm", "lvs", "--noheadings", "-o", "lv_name", GuestEnv.volumeGroup()).lines().map(String::strip)
                .filter(name -> name.startsWith("vol_") && name.contains(namePart)).sorted().toList();
    }
}
