package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import csi.v1.Csi;
import io.lvmqos.e2e.CsiClient;
import io.lvmqos.e2e.uml.GuestEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 13: one call stuck in the kernel holds up no other call. A staged ext4 volume gets dirty
 * pages, then its device-mapper device is suspended without freezing the filesystem, so that
 * NodeUnstageVolume's umount2 (a JNI call) blocks in the kernel writing them back. While it is
 * stuck, Probe, NodeGetCapabilities and a create and delete of a volume in the other volume group
 * must answer. The guest has one CPU: with RPCs on virtual threads the pinned carrier was the only
 * one, and every other call waited for the device.
 */
public class StuckDeviceCheck {

    /** Generous for one call in a loaded guest; a handler held up by the stuck call never answers. */
    private static final Duration CALL_DEADLINE = Duration.ofSeconds(60);

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass();

    @Test
    void aCallStuckInTheKernelHoldsUpNeitherProbeNorCallsOnOtherVolumes() throws Exception {
        CsiClient client = driver.client();
        String stuckGroup = GuestEnv.volumeGroups().get(1);
        Csi.Volume stuck = client.controller().createVolume(create("stuck", 64 * MIB,
                Map.of("volumeGroup", stuckGroup)).build()).getVolume();
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/stuck/globalmount");
        client.node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder().setVolumeId(stuck.getVolumeId())
                .setStagingTargetPath(staging.toString()).setVolumeCapability(Csi2.mount("ext4",
                        Csi.VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build());
        // dirty pages, not written yet: the last unmount has to write them to the device
        Files.write(staging.resolve("dirty"), new byte[(int) (8 * MIB)]);
        String[] id = stuck.getVolumeId().split("/");
        String dmPath = ok("lvm", "lvs", "--noheadings", "-o", "lv_dm_path", id[2] + "/" + id[3]).strip();
        ok("dmsetup", "suspend", "--nolockfs", dmPath);
        CompletableFuture<Csi.NodeUnstageVolumeResponse> unstage;
        try {
            unstage = CompletableFuture.supplyAsync(() -> client.node().withDeadlineAfter(10, TimeUnit.MINUTES)
                    .nodeUnstageVolume(Csi.NodeUnstageVolumeRequest.newBuilder().setVolumeId(stuck.getVolumeId())
                            .setStagingTargetPath(staging.toString()).build()),
                    r -> Thread.ofPlatform().daemon().start(r));
            awaitATaskOfTheDriverInTheKernel();
            assertFalse(unstage.isDone(), "the unstage should be stuck on the suspended device: " + unstage);

            for (int i = 0; i < 3; i++) {
                client.identity().withDeadlineAfter(CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS)
                        .probe(Csi.ProbeRequest.getDefaultInstance());
            }
            client.node().withDeadlineAfter(CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS)
                    .nodeGetCapabilities(Csi.NodeGetCapabilitiesRequest.getDefaultInstance());
            Csi.Volume other = client.controller().withDeadlineAfter(2 * CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS)
                    .createVolume(create("beside-stuck", 16 * MIB, Map.of("lvmType", "thin")).build()).getVolume();
            client.controller().withDeadlineAfter(2 * CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS)
                    .deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(other.getVolumeId()).build());
            assertFalse(unstage.isDone(), "the other calls answered while the unstage was still stuck");
        } finally {
            ok("dmsetup", "resume", dmPath);
        }
        unstage.get(5, TimeUnit.MINUTES);
        client.controller().deleteVolume(Csi.DeleteVolumeRequest.newBuilder().setVolumeId(stuck.getVolumeId()).build());
    }

    /** Waits until a thread of the driver sleeps uninterruptibly (state D): the umount2 in the kernel. */
    private static void awaitATaskOfTheDriverInTheKernel() throws Exception {
        long pid = driver.process().process().pid();
        long until = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (System.nanoTime() < until) {
            try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
                boolean stuck = tasks.anyMatch(task -> {
                    try {
                        String stat = Files.readString(task.resolve("stat"));
                        return stat.substring(stat.lastIndexOf(')') + 2).startsWith("D");
                    } catch (IOException e) {
                        return false;
                    }
                });
                if (stuck) {
                    return;
                }
            }
            Thread.sleep(100);
        }
        fail("no thread of the driver blocked in the kernel: the unstage did not get stuck, so this proves nothing");
    }
}
