package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The sidecars run the way a node-local driver needs them to. */
class SidecarFlagsTest {

    private final NodePod pod = NodePod.fromBase();

    @Test
    void provisionerRunsOnEachNodeForItsOwnVolumes() {
        YamlNode provisioner = pod.sidecar("csi-provisioner");
        assertEquals(Optional.of("true"), NodePod.flag(provisioner, "--node-deployment"));
        assertEquals(Optional.of("spec.nodeName"), NodePod.envFieldPath(provisioner, "NODE_NAME"));
        assertFalse(NodePod.flag(provisioner, "--leader-election").isPresent(),
                "in node deployment every instance works for its own node: no leader");
    }

    @Test
    void provisionerPassesOnlyTheSelectedNodesTopology() {
        YamlNode provisioner = pod.sidecar("csi-provisioner");
        assertEquals(Optional.of("Topology=true"), NodePod.flag(provisioner, "--feature-gates"));
        assertTrue(isOn(NodePod.flag(provisioner, "--strict-topology")));
    }

    @Test
    void provisionerPublishesCapacityOwnedByTheDaemonSet() {
        YamlNode provisioner = pod.sidecar("csi-provisioner");
        assertTrue(isOn(NodePod.flag(provisioner, "--enable-capacity")));
        assertEquals(Optional.of("1"), NodePod.flag(provisioner, "--capacity-ownerref-level"),
                "level 1 from the provisioner's pod is its DaemonSet");
        assertEquals(Optional.of("metadata.name"), NodePod.envFieldPath(provisioner, "POD_NAME"));
        assertEquals(Optional.of("metadata.namespace"), NodePod.envFieldPath(provisioner, "NAMESPACE"));
    }

    @Test
    void provisionerPassesClaimMetadataToCreateVolume() {
        assertTrue(isOn(NodePod.flag(pod.sidecar("csi-provisioner"), "--extra-create-metadata")));
    }

    @Test
    void snapshotterRunsOnEachNodeForItsOwnVolumes() {
        YamlNode snapshotter = pod.sidecar("csi-snapshotter");
        assertTrue(isOn(NodePod.flag(snapshotter, "--node-deployment")));
        assertEquals(Optional.of("spec.nodeName"), NodePod.envFieldPath(snapshotter, "NODE_NAME"),
                "the snapshotter refuses --node-deployment without NODE_NAME");
        assertFalse(NodePod.flag(snapshotter, "--leader-election").isPresent(),
                "the snapshotter exits when leader election and node deployment are both set");
    }

    @Test
    void resizerElectsOneLeaderInTheDriversNamespace() {
        YamlNode resizer = pod.sidecar("csi-resizer");
        assertTrue(isOn(NodePod.flag(resizer, "--leader-election")));
        assertEquals(Optional.of("$(NAMESPACE)"), NodePod.flag(resizer, "--leader-election-namespace"));
        assertEquals(Optional.of("metadata.namespace"), NodePod.envFieldPath(resizer, "NAMESPACE"));
    }

    @Test
    void registrarRegistersTheHostPathOfTheSocket() {
        YamlNode registrar = pod.sidecar("csi-node-driver-registrar");
        assertEquals("/var/lib/kubelet/plugins/" + DeployTree.DRIVER_NAME + "/csi.sock",
                NodePod.requiredFlag(registrar, "--kubelet-registration-path"));
        assertEquals(Optional.of(java.nio.file.Path.of("/var/lib/kubelet/plugins_registry")),
                pod.hostPathOf(registrar, "/registration"));
    }

    @Test
    void pluginReadinessIsTheLivenessprobeSidecarsPort() {
        YamlNode probe = pod.sidecar("livenessprobe");
        String endpoint = NodePod.requiredFlag(probe, "--http-endpoint");
        int port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
        YamlNode plugin = pod.plugin();
        YamlNode httpGet = plugin.path("readinessProbe.httpGet");
        assertEquals("/healthz", httpGet.get("path").text());
        Object probePort = httpGet.get("port").value();
        int resolved = probePort instanceof Integer number ? number : plugin.get("ports").items().stream()
                .filter(p -> p.get("name").text().equals(probePort)).findFirst()
                .map(p -> (Integer) p.get("containerPort").value())
                .orElseThrow(() -> new AssertionError("no port named " + probePort + " on the plugin"));
        assertEquals(port, resolved, "the plugin's readiness probe must reach the livenessprobe sidecar");
    }

    private static boolean isOn(Optional<String> flag) {
        return flag.isPresent() && (flag.get().isEmpty() || flag.get().equals("true"));
    }
}
