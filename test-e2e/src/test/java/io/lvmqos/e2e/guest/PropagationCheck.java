package io.lvmqos.e2e.guest;

import static io.lvmqos.e2e.guest.Csi2.MIB;
import static io.lvmqos.e2e.guest.Csi2.create;
import static io.lvmqos.e2e.uml.GuestCommand.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import csi.v1.Csi;
import io.lvmqos.e2e.uml.GuestEnv;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Mount propagation as on a node: the driver runs in a mount namespace of its own whose kubelet
 * directory is shared with the host's (mountPropagation Bidirectional); pods are namespaces made
 * BEFORE the publish, one a slave of the host (HostToContainer) and one private (None). The bind
 * mount the driver makes must reach the host and the slave pod, without restarting anything, and
 * must not reach the private one.
 */
public class PropagationCheck {

    @RegisterExtension
    static final DriverForTheClass driver = new DriverForTheClass()
            .behind(List.of("unshare", "--mount", "--propagation", "unchanged")).startedBySetUp();
    private static Process hostToContainerPod;
    private static Process nonePod;

    @BeforeAll
    static void start() throws Exception {
        GuestEnv.assumeInGuest();
        GuestDriver.prepareKubeletDir();
        hostToContainerPod = new ProcessBuilder("unshare", "--mount", "--propagation", "slave", "sleep", "600").start();
        nonePod = new ProcessBuilder("unshare", "--mount", "--propagation", "private", "sleep", "600").start();
        // the plugin container: its own namespace, the kubelet directory left shared with the host
        driver.start();
        TimeUnit.MILLISECONDS.sleep(200);
    }

    @AfterAll
    static void stop() throws Exception {
        for (Process pod : new Process[] {hostToContainerPod, nonePod}) {
            if (pod != null) {
                pod.destroyForcibly().waitFor();
            }
        }
    }

    private static String mountsSeenBy(Process pod) {
        return ok("nsenter", "--target", Long.toString(pod.pid()), "--mount", "cat", "/proc/self/mountinfo");
    }

    @Test
    void aPublishReachesTheHostAndHostToContainerPodsButNotPrivateOnes() throws Exception {
        Csi.Volume volume = driver.client().controller().createVolume(create("propagated", 64 * MIB, Map.of()).build())
                .getVolume();
        Path staging = GuestDriver.KUBELET.resolve("plugins/kubernetes.io/csi/lvmqos.csi.io/prop/globalmount");
        String uid = UUID.randomUUID().toString();
        Path target = GuestDriver.KUBELET.resolve("pods").resolve(uid).resolve("volumes/kubernetes.io~csi/pv/mount");
        try {
            driver.client().node().nodeStageVolume(Csi.NodeStageVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                    .setVolumeCapability(Csi2.mount()).build());
            driver.client().node().nodePublishVolume(Csi.NodePublishVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).setStagingTargetPath(staging.toString())
                    .setTargetPath(target.toString()).setVolumeCapability(Csi2.mount()).build());

            String host = ok("cat", "/proc/self/mountinfo");
            assertTrue(host.contains(" " + target + " "), "Bidirectional: the host sees the publish");
            assertTrue(mountsSeenBy(hostToContainerPod).contains(" " + target + " "),
                    "HostToContainer: a pod started before the publish sees it without a restart");
            assertFalse(mountsSeenBy(nonePod).contains(" " + target + " "),
                    "None: a private namespace stays blind, the failure mode of the agents this driver replaces");

            ok("nsenter", "--target", Long.toString(hostToContainerPod.pid()), "--mount", "sh", "-c",
                    "echo written-in-pod > " + target.resolve("file"));
            assertEquals("written-in-pod", Files.readString(target.resolve("file")).strip());

            driver.client().node().nodeUnpublishVolume(Csi.NodeUnpublishVolumeRequest.newBuilder()
                    .setVolumeId(volume.getVolumeId()).setTargetPath(target.toString()).build());
            assertFalse(mountsSeenBy(hostToContainerPod).contains(" " + target + " "), "the unmount propagates too");
            assertFalse(ok("cat", "/proc/self/mountinfo").contains(" " + target + " "));
        } finally {
            // unpublish is idempotent: the target may already be unpublished above
            Csi2.unpublishUnstageDelete(driver.client(), volume.getVolumeId(), staging, List.of(target));
        }
    }
}
