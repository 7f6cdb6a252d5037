package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.identity.HealthCheck;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the chart and the kustomize base do, as rendered, on a cluster where not every node is a storage
 * node: the node plugin goes only where the operator's label says the volume groups are; a node without
 * lvm2 gets no hostPath that waits for a directory; a missing volume group shows as a pod not ready
 * rather than a restart loop; group snapshots, whose gate makes csi-snapshotter v8.6.0 wait for their
 * CRDs before it handles any snapshot, are off unless turned on, by one value; and the base's stand-in
 * for the driver's image cannot be pulled, as the chart refuses its own.
 */
class MixedClusterDefaultsTest {

    /** The label the driver names when its volume group is missing. */
    static final String NODE_LABEL = HealthCheck.NODE_LABEL;
    /** The kustomization's stand-in for the operator's repository. */
    static final String KUSTOMIZE_STAND_IN = "registry.example.com/SET-YOUR-REGISTRY/lvmqos";
    private static final String GROUP_SNAPSHOT_GATE = "--feature-gates=CSIVolumeGroupSnapshot=true";

    /** The grammar of an image reference (distribution's): a repository's path components are lowercase. */
    private static final String DOMAIN_PART = "[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?";
    private static final String PATH_PART = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
    private static final Pattern IMAGE_REFERENCE = Pattern.compile("^(?:" + DOMAIN_PART + "(?:\\." + DOMAIN_PART
            + ")*(?::[0-9]+)?/)?" + PATH_PART + "(?:/" + PATH_PART + ")*(?::[\\w][\\w.-]{0,127})?$");

    @Test
    void theNodePluginGoesOnlyToNodesLabelledAsHavingTheVolumeGroups(@TempDir Path scratch) throws Exception {
        Map<String, String> expected = Map.of(NODE_LABEL, "true");
        assertEquals(expected, helmPod().spec.get("nodeSelector").value(), "helm template");
        assertEquals(expected, kustomizePod(scratch).spec.get("nodeSelector").value(), "kustomize");
    }

    @Test
    void theLabelIsTheOperatorsToChangeOrDrop(@TempDir Path scratch) {
        Path other = HelmChart.valuesFile(scratch, "other", Map.of("nodeLabel",
                Map.of("key", "example.org/storage", "value", "nvme"), "nodeSelector", Map.of("kubernetes.io/os", "linux")));
        assertEquals(Map.of("example.org/storage", "nvme", "kubernetes.io/os", "linux"),
                helmPod(other).spec.get("nodeSelector").value());
        Path everywhere = HelmChart.valuesFile(scratch, "everywhere", Map.of("nodeLabel", Map.of("key", "", "value", "")));
        assertFalse(helmPod(everywhere).spec.get("nodeSelector").present(), "an empty key: every node");
        Path bad = HelmChart.valuesFile(scratch, "bad", Map.of("nodeLabel", Map.of("key", "has vg", "value", "true")));
        assertTrue(HelmChart.refusal(bad).orElseThrow().contains("nodeLabel"), "a key no label can have is refused");
    }

    /**
     * Directory makes kubelet wait until the path exists; on a node without lvm2 /etc/lvm never does. Only
     * what every kubelet node has (kubelet's own directories, /dev, the cgroup tree) may be a Directory.
     */
    @Test
    void aNodeWithoutLvm2GetsNoHostPathThatWaitsForLvm(@TempDir Path scratch) throws Exception {
        Set<String> everyNodeHas = Set.of("/var/lib/kubelet/plugins_registry/", "/var/lib/kubelet/pods",
                "/var/lib/kubelet/plugins", "/dev", "/sys/fs/cgroup");
        Map<String, String> lvm = Map.of("/etc/lvm", "DirectoryOrCreate", "/run/lvm", "DirectoryOrCreate",
                "/run/lock/lvm", "DirectoryOrCreate");
        for (NodePod pod : List.of(helmPod(), kustomizePod(scratch))) {
            Map<String, String> types = new LinkedHashMap<>();
            for (YamlNode volume : pod.spec.get("volumes").items()) {
                if (volume.path("hostPath").present()) {
                    types.put(volume.path("hostPath.path").text(), volume.path("hostPath.type").text());
                }
            }
            lvm.forEach((path, type) -> assertEquals(type, types.get(path), path + " in " + pod.daemonSet.where()));
            types.forEach((path, type) -> assertTrue(!type.equals("Directory") || everyNodeHas.contains(path),
                    path + " is a Directory hostPath: a node without it would hold the pod in ContainerCreating"));
        }
    }

    /** Probe answers not ready for causes no restart cures; kubelet hears it as readiness, so nothing restarts. */
    @Test
    void aNodeWithoutItsVolumeGroupIsNotReadyRatherThanRestarted(@TempDir Path scratch) throws Exception {
        for (NodePod pod : List.of(helmPod(), kustomizePod(scratch))) {
            YamlNode plugin = pod.plugin();
            assertFalse(plugin.path("livenessProbe").present(), "a failed liveness restarts the driver: "
                    + pod.daemonSet.where());
            assertEquals("/healthz", plugin.path("readinessProbe.httpGet.path").text());
            assertEquals("healthz", plugin.path("readinessProbe.httpGet.port").text());
        }
    }

    @Test
    void groupSnapshotsAreOffUnlessTurnedOn(@TempDir Path scratch) throws Exception {
        assertFalse(snapshotterArgs(helmPod()).contains(GROUP_SNAPSHOT_GATE), "helm template");
        assertFalse(snapshotterArgs(kustomizePod(scratch)).contains(GROUP_SNAPSHOT_GATE), "kustomize");
        Path on = HelmChart.valuesFile(scratch, "on", Map.of("groupSnapshots", Map.of("enabled", true)));
        assertEquals(1, snapshotterArgs(helmPod(on)).stream().filter(GROUP_SNAPSHOT_GATE::equals).count());
    }

    @Test
    void groupSnapshotClassesWithoutTheGateAreRefused(@TempDir Path scratch) {
        Path classes = HelmChart.valuesFile(scratch, "classes", Map.of("volumeGroupSnapshotClasses",
                List.of(Map.of("name", "lvmqos-group"))));
        assertTrue(HelmChart.refusal(classes).orElseThrow().contains("groupSnapshots.enabled"));
        Path both = HelmChart.valuesFile(scratch, "both", Map.of("volumeGroupSnapshotClasses",
                List.of(Map.of("name", "lvmqos-group")), "groupSnapshots", Map.of("enabled", true)));
        assertEquals(Optional.empty(), HelmChart.refusal(both));
    }

    /** The base with the group-snapshots component is what the chart renders with groupSnapshots.enabled. */
    @Test
    void theGroupSnapshotsComponentRendersWhatTheChartsValueDoes(@TempDir Path scratch) throws Exception {
        Path kubectl = kubectl();
        Path overlay = overlay(scratch, "group-snapshots", "components:\n  - "
                + relative(scratch.resolve("group-snapshots"), DeployTree.kubernetesDir().resolve("group-snapshots")) + "\n");
        List<YamlNode> kustomize = KustomizeBase.byKubectl(kubectl, overlay, scratch);
        Path on = HelmChart.valuesFile(scratch, "on", Map.of("groupSnapshots", Map.of("enabled", true),
                "namespace", Map.of("create", true)));
        List<String> differences = ObjectDiff.between(kustomize,
                HelmKustomizeEquivalenceTest.withoutHelmBookkeeping(HelmChart.template(on)));
        assertEquals(List.of(), differences);
        assertTrue(snapshotterArgs(new NodePod(DeployTree.only(kustomize, "DaemonSet"))).contains(GROUP_SNAPSHOT_GATE));
    }

    /**
     * Kustomize cannot stop a rendering, so the base's stand-in is made unusable where it can be: it is not
     * an image reference (kubelet refuses it at once, InvalidImageName, and pulls nothing), and it is of the
     * registry the chart refuses outright.
     */
    @Test
    void theBasesStandInForTheImageCannotBePulled(@TempDir Path scratch) throws Exception {
        YamlNode image = DeployTree.kustomization().get("images").items().getFirst();
        assertEquals(KUSTOMIZE_STAND_IN, image.get("newName").text());
        assertFalse(IMAGE_REFERENCE.matcher(KUSTOMIZE_STAND_IN + ":0.1.0").matches(), KUSTOMIZE_STAND_IN);
        assertTrue(IMAGE_REFERENCE.matcher(HelmChart.OPERATOR_REPOSITORY + ":0.1.0").matches(), "the check can pass");
        assertTrue(IMAGE_REFERENCE.matcher("registry.k8s.io/sig-storage/csi-snapshotter:v8.6.0").matches());
        Path standIn = HelmChart.valuesFile(scratch, "stand-in", Map.of("image", Map.of("repository", KUSTOMIZE_STAND_IN)));
        assertTrue(HelmChart.refusal(standIn).orElseThrow().contains("image.repository"), "the chart refuses it too");
        NodePod base = kustomizePod(scratch);
        for (String container : List.of("lvm-config", NodePod.PLUGIN)) {
            assertTrue(base.container(container).get("image").text().startsWith(KUSTOMIZE_STAND_IN + ":"), container);
        }
    }

    /** An overlay that names the operator's repository, as the guide says, leaves no container on the stand-in. */
    @Test
    void anOverlayWithTheOperatorsImageLeavesNothingOnTheStandIn(@TempDir Path scratch) throws Exception {
        Path overlay = overlay(scratch, "operator", "");
        List<YamlNode> rendered = KustomizeBase.byKubectl(kubectl(), overlay, scratch);
        for (YamlNode container : new NodePod(DeployTree.only(rendered, "DaemonSet")).allContainers()) {
            String image = container.get("image").text();
            assertFalse(image.contains("registry.example.com"), container.get("name").text() + " still runs " + image);
            assertTrue(IMAGE_REFERENCE.matcher(image).matches(), image);
        }
        assertEquals(HelmChart.OPERATOR_REPOSITORY + ":0.1.0",
                new NodePod(DeployTree.only(rendered, "DaemonSet")).plugin().get("image").text());
    }

    private static NodePod helmPod(Path... values) {
        return new NodePod(DeployTree.only(HelmChart.template(values), "DaemonSet"));
    }

    private static NodePod kustomizePod(Path scratch) throws IOException, InterruptedException {
        return new NodePod(DeployTree.only(KustomizeBase.rendered(scratch), "DaemonSet"));
    }

    private static List<String> snapshotterArgs(NodePod pod) {
        return pod.container("csi-snapshotter").get("args").texts();
    }

    private static Path kubectl() {
        Optional<Path> kubectl = KustomizeBase.kubectl();
        Assumptions.assumeTrue(kubectl.isPresent(), "kubectl is not on PATH: overlays of the base are not rendered here");
        return kubectl.get();
    }

    /** An overlay of the base in {@code scratch/name} that sets the operator's image, with {@code more} added. */
    private static Path overlay(Path scratch, String name, String more) throws IOException {
        Path dir = Files.createDirectories(scratch.resolve(name));
        Files.writeString(dir.resolve("kustomization.yaml"), "resources:\n  - "
                + relative(dir, DeployTree.kubernetesDir()) + "\n"
                + "images:\n  - name: " + KUSTOMIZE_STAND_IN + "\n    newName: " + HelmChart.OPERATOR_REPOSITORY + "\n"
                + more);
        return dir;
    }

    /** Kustomize takes a base only by a relative path. */
    private static String relative(Path from, Path to) {
        return from.toAbsolutePath().normalize().relativize(to.toAbsolutePath().normalize()).toString();
    }
}
