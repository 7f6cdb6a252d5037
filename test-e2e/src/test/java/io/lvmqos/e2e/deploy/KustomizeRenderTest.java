package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `kubectl kustomize deploy/kubernetes` renders, when kubectl is installed. */
class KustomizeRenderTest {

    private static List<YamlNode> rendered;

    @BeforeAll
    static void render(@TempDir Path scratch) throws IOException, InterruptedException {
        Optional<Path> kubectl = KustomizeBase.kubectl();
        Assumptions.assumeTrue(kubectl.isPresent(),
                "kubectl is not on PATH: the kustomize rendering of deploy/kubernetes is not checked here");
        rendered = KustomizeBase.byKubectl(kubectl.get(), scratch);
    }

    /** The stand-in that the Helm comparison uses where kubectl is missing renders what kustomize does. */
    @Test
    void theKustomizationsTransformationsAppliedHereGiveKubectlsRendering() {
        List<String> differences = ObjectDiff.between(rendered, KustomizeBase.byTransformations());
        assertTrue(differences.isEmpty(), String.join("\n", differences));
    }

    @Test
    void rendersExactlyTheBaseObjects() {
        Set<String> kinds = rendered.stream().map(YamlNode::kind).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(new TreeSet<>(Set.of("Namespace", "CSIDriver", "ServiceAccount", "ClusterRole",
                "ClusterRoleBinding", "Role", "RoleBinding", "DaemonSet")), kinds);
        assertEquals(DeployTree.base().size(), rendered.size());
    }

    @Test
    void namespacedObjectsLandInTheDriversNamespace() {
        String namespace = DeployTree.only(rendered, "Namespace").name();
        Set<String> clusterScoped = Set.of("Namespace", "CSIDriver", "ClusterRole", "ClusterRoleBinding");
        for (YamlNode object : rendered) {
            if (!clusterScoped.contains(object.kind())) {
                assertEquals(namespace, object.path("metadata.namespace").text(), object.kind() + "/" + object.name());
            }
        }
    }

    @Test
    void renderedImagesArePinnedAndThePluginsIsTheKustomizationsOverride() {
        List<String> images = NodePod.images(rendered);
        images.forEach(image -> ImagesPinnedTest.assertPinned(image, "kubectl kustomize"));
        YamlNode override = DeployTree.kustomization().get("images").items().getFirst();
        String expected = override.get("newName").text() + ":" + override.get("newTag").value();
        NodePod pod = new NodePod(DeployTree.only(rendered, "DaemonSet"));
        assertEquals(expected, pod.plugin().get("image").text());
    }
}
