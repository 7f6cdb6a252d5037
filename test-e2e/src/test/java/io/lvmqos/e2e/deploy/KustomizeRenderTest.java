package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `kubectl kustomize deploy/kubernetes` renders, when kubectl is installed. */
class KustomizeRenderTest {

    private static List<YamlNode> rendered;

    private static Optional<Path> kubectl() {
        String path = System.getenv().getOrDefault("PATH", "");
        return Stream.of(path.split(":")).filter(dir -> !dir.isEmpty()).map(dir -> Path.of(dir, "kubectl"))
                .filter(Files::isExecutable).findFirst();
    }

    @BeforeAll
    static void render(@TempDir Path scratch) throws IOException, InterruptedException {
        Optional<Path> kubectl = kubectl();
        Assumptions.assumeTrue(kubectl.isPresent(),
                "kubectl is not on PATH: the kustomize rendering of deploy/kubernetes is not checked here");
        Path output = scratch.resolve("rendered.yaml");
        Path errors = scratch.resolve("stderr.txt");
        Process process = new ProcessBuilder(kubectl.get().toString(), "kustomize",
                DeployTree.kubernetesDir().toString())
                .redirectOutput(output.toFile()).redirectError(errors.toFile()).start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("kubectl kustomize did not finish in 60 s");
        }
        assertEquals(0, process.exitValue(), "kubectl kustomize deploy/kubernetes failed: "
                + Files.readString(errors, StandardCharsets.UTF_8));
        rendered = DeployTree.parse(Files.readString(output, StandardCharsets.UTF_8), "kubectl kustomize");
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
