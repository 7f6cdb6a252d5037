package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The base is complete and self-consistent even before kustomize sets its namespace. */
class KustomizationTest {

    @Test
    void everyManifestFileIsListed() throws IOException {
        Set<String> listed = new TreeSet<>(DeployTree.kustomization().get("resources").texts());
        try (Stream<Path> files = Files.list(DeployTree.kubernetesDir())) {
            Set<String> present = files.map(f -> f.getFileName().toString())
                    .filter(name -> name.endsWith(".yaml") && !name.equals("kustomization.yaml"))
                    .collect(Collectors.toCollection(TreeSet::new));
            assertEquals(present, listed, "a manifest that is not listed is never applied");
        }
    }

    @Test
    void namespacedObjectsNameTheKustomizationsNamespace() {
        String namespace = DeployTree.kustomization().get("namespace").text();
        assertEquals(namespace, DeployTree.only(DeployTree.base(), "Namespace").name());
        Set<String> clusterScoped = Set.of("Namespace", "CSIDriver", "ClusterRole", "ClusterRoleBinding");
        for (YamlNode object : DeployTree.base()) {
            if (!clusterScoped.contains(object.kind())) {
                assertEquals(namespace, object.path("metadata.namespace").text(), object.kind() + "/" + object.name()
                        + ": the raw files are readable on their own, so they say where they go");
            }
        }
    }
}
