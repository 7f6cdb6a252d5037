package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With default values, `helm template` renders the objects `kubectl kustomize deploy/kubernetes`
 * does, compared object by object and field by field. The only fields allowed to differ are the
 * labels by which Helm tracks its releases, which the kustomize base has no use for; and, by
 * Helm's convention, the chart leaves the release's namespace to `helm install --create-namespace`
 * unless namespace.create is set, with which the Namespace is rendered as the base has it. Both are
 * given the operator's registry for the driver's image, as each must be (the chart refuses its
 * example; the base's is an example too, replaced here as `kustomize edit set image` would).
 */
class HelmKustomizeEquivalenceTest {

    static final Set<String> HELM_BOOKKEEPING_LABELS = Set.of("helm.sh/chart", "app.kubernetes.io/managed-by",
            "app.kubernetes.io/instance", "app.kubernetes.io/version");

    /** The base's rendering with the driver's image at the operator's registry of HelmChart. */
    static List<YamlNode> kustomized(Path scratch) throws Exception {
        String example = DeployTree.kustomization().get("images").items().getFirst().get("newName").text();
        return KustomizeBase.withImageRepository(KustomizeBase.rendered(scratch), example, HelmChart.OPERATOR_REPOSITORY);
    }

    @Test
    void defaultValuesRenderTheKustomizeBaseFieldByField(@TempDir Path scratch) throws Exception {
        List<YamlNode> kustomize = kustomized(scratch).stream()
                .filter(object -> !object.kind().equals("Namespace")).toList();
        List<YamlNode> helm = withoutHelmBookkeeping(HelmChart.template());
        List<String> differences = ObjectDiff.between(kustomize, helm);
        assertTrue(differences.isEmpty(), differences.size() + " differences between kustomize (expected) and helm:\n"
                + String.join("\n", differences));
        assertEquals(DeployTree.base().size() - 1, helm.size());
    }

    @Test
    void withTheNamespaceRenderedTheBaseIsMatchedWhole(@TempDir Path scratch) throws Exception {
        Path values = HelmChart.valuesFile(scratch, "namespace", Map.of("namespace", Map.of("create", true)));
        List<String> differences = ObjectDiff.between(kustomized(scratch),
                withoutHelmBookkeeping(HelmChart.template(values)));
        assertTrue(differences.isEmpty(), String.join("\n", differences));
    }

    @Test
    void theComparisonSeesAChangedField(@TempDir Path scratch) throws Exception {
        Path values = HelmChart.valuesFile(scratch, "changed", Map.of("logLevel", "debug",
                "namespace", Map.of("create", true)));
        List<String> differences = ObjectDiff.between(kustomized(scratch),
                withoutHelmBookkeeping(HelmChart.template(values)));
        assertEquals(List.of("DaemonSet lvmqos/lvmqos-node: spec.template.spec.containers[0].args[8]: is"
                + " --log-level=debug, expected --log-level=info"), differences);
    }

    @Test
    void everyObjectCarriesHelmsLabels() {
        for (YamlNode object : HelmChart.template()) {
            Map<?, ?> labels = object.path("metadata.labels").map();
            assertTrue(labels.keySet().containsAll(HELM_BOOKKEEPING_LABELS), object.kind() + " " + object.name()
                    + " has " + labels);
            assertEquals("Helm", labels.get("app.kubernetes.io/managed-by"));
            assertEquals(HelmChart.RELEASE, labels.get("app.kubernetes.io/instance"));
        }
    }

    static List<YamlNode> withoutHelmBookkeeping(List<YamlNode> objects) {
        List<YamlNode> stripped = new ArrayList<>();
        for (YamlNode object : objects) {
            Object copy = KustomizeBase.deepCopy(object.value());
            YamlNode node = YamlNode.root(copy, "helm template");
            if (node.path("metadata.labels").present()) {
                node.path("metadata.labels").map().keySet().removeAll(HELM_BOOKKEEPING_LABELS);
            }
            stripped.add(node);
        }
        return stripped;
    }
}
