package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The driver's socket is one file on the host, reached by four containers through their own
 * mounts and by kubelet through the registration path: all of them must name the same file.
 */
class SocketPathTest {

    private final NodePod pod = NodePod.fromBase();

    private Path hostSocket() {
        String endpoint = NodePod.requiredFlag(pod.plugin(), "--endpoint");
        assertTrue(endpoint.startsWith("unix://"), "--endpoint " + endpoint);
        String inContainer = endpoint.substring("unix://".length());
        return pod.hostPathOf(pod.plugin(), inContainer).orElseThrow(() -> new AssertionError(
                "the plugin's socket " + inContainer + " is not on a host path: kubelet could not reach it"));
    }

    @Test
    void pluginSocketIsInTheDriversKubeletPluginDirectory() {
        String kubeletDir = NodePod.requiredFlag(pod.plugin(), "--kubelet-dir");
        assertEquals(Path.of(kubeletDir, "plugins", DeployTree.DRIVER_NAME, "csi.sock"), hostSocket());
    }

    @Test
    void registrarRegistersThePluginsSocket() {
        YamlNode registrar = pod.sidecar("csi-node-driver-registrar");
        assertEquals(hostSocket(), Path.of(NodePod.requiredFlag(registrar, "--kubelet-registration-path")));
    }

    @Test
    void everySidecarTalksToThePluginsSocket() {
        for (YamlNode container : pod.containers()) {
            if (NodePod.name(container).equals(NodePod.PLUGIN)) {
                continue;
            }
            String address = NodePod.requiredFlag(container, "--csi-address");
            String path = address.startsWith("unix://") ? address.substring("unix://".length()) : address;
            assertEquals(Optional.of(hostSocket()), pod.hostPathOf(container, path),
                    NodePod.name(container) + " --csi-address " + address);
        }
    }

    @Test
    void socketDirectoryIsCreatedIfMissing() {
        YamlNode mount = NodePod.mountAt(pod.plugin(), "/csi").orElseThrow();
        YamlNode volume = pod.volume(mount.get("name").text());
        assertEquals("DirectoryOrCreate", volume.path("hostPath.type").text());
    }

    @Test
    void driverNameIsTheCsiDriversName() {
        assertEquals(DeployTree.DRIVER_NAME, NodePod.requiredFlag(pod.plugin(), "--driver-name"));
        assertEquals(DeployTree.DRIVER_NAME, DeployTree.only(DeployTree.base(), "CSIDriver").name());
    }
}
