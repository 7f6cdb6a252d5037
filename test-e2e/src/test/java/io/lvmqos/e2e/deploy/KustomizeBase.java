package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What the kustomize base renders: by {@code kubectl kustomize} where kubectl is installed, and
 * otherwise by applying the kustomization's three transformations (namespace, images, labels) to
 * the base's files here. KustomizeRenderTest proves the two equal wherever kubectl is, so that the
 * Helm comparison holds on machines without it too.
 */
final class KustomizeBase {

    private static final Set<String> CLUSTER_SCOPED = Set.of("Namespace", "CSIDriver", "ClusterRole", "ClusterRoleBinding");

    private KustomizeBase() {
    }

    static Optional<Path> kubectl() {
        String path = System.getenv().getOrDefault("PATH", "");
        return Stream.of(path.split(":")).filter(dir -> !dir.isEmpty()).map(dir -> Path.of(dir, "kubectl"))
                .filter(Files::isExecutable).findFirst();
    }

    /** `kubectl kustomize deploy/kubernetes`, parsed. */
    static List<YamlNode> byKubectl(Path kubectl, Path scratch) throws IOException, InterruptedException {
        return byKubectl(kubectl, DeployTree.kubernetesDir(), scratch);
    }

    /** `kubectl kustomize DIR` (the base, or an overlay of it), parsed. */
    static List<YamlNode> byKubectl(Path kubectl, Path kustomization, Path scratch)
            throws IOException, InterruptedException {
        Path output = scratch.resolve("rendered.yaml");
        Path errors = scratch.resolve("stderr.txt");
        Process process = new ProcessBuilder(kubectl.toString(), "kustomize", kustomization.toString())
                .redirectOutput(output.toFile()).redirectError(errors.toFile()).start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("kubectl kustomize did not finish in 60 s");
        }
        assertEquals(0, process.exitValue(), "kubectl kustomize " + kustomization + " failed: "
                + Files.readString(errors, StandardCharsets.UTF_8));
        return DeployTree.parse(Files.readString(output, StandardCharsets.UTF_8), "kubectl kustomize");
    }

    /** kubectl's rendering where kubectl is installed, else {@link #byTransformations()}. */
    static List<YamlNode> rendered(Path scratch) throws IOException, InterruptedException {
        Optional<Path> kubectl = kubectl();
        return kubectl.isPresent() ? byKubectl(kubectl.get(), scratch) : byTransformations();
    }

    /**
     * The base's objects with the kustomization's namespace set on namespaced objects and on
     * ServiceAccount subjects, its image overrides applied to containers, and its labels added to
     * each object's metadata (kustomize's `labels` without includeSelectors leaves selectors and
     * templates alone).
     */
    static List<YamlNode> byTransformations() {
        YamlNode kustomization = DeployTree.kustomization();
        String namespace = kustomization.get("namespace").text();
        Map<String, String> images = new LinkedHashMap<>();
        for (YamlNode image : kustomization.get("images").items()) {
            images.put(image.get("name").text(), image.get("newName").text() + ":" + image.get("newTag").value());
        }
        Map<String, Object> labels = new LinkedHashMap<>();
        for (YamlNode pairs : kustomization.get("labels").items()) {
            pairs.get("pairs").map().forEach((key, value) -> labels.put((String) key, value));
        }
        List<YamlNode> objects = new ArrayList<>();
        for (YamlNode object : DeployTree.base()) {
            @SuppressWarnings("unchecked")
            Map<String, Object> copy = (Map<String, Object>) deepCopy(object.value());
            Map<String, Object> metadata = child(copy, "metadata");
            if (!CLUSTER_SCOPED.contains(object.kind())) {
                metadata.put("namespace", namespace);
            }
            child(metadata, "labels").putAll(labels);
            for (Object subject : list(copy.get("subjects"))) {
                @SuppressWarnings("unchecked")
                Map<String, Object> s = (Map<String, Object>) subject;
                if ("ServiceAccount".equals(s.get("kind"))) {
                    s.put("namespace", namespace);
                }
            }
            if (object.kind().equals("DaemonSet")) {
                Map<String, Object> podSpec = child(child(child(copy, "spec"), "template"), "spec");
                for (String field : List.of("initContainers", "containers")) {
                    for (Object container : list(podSpec.get(field))) {
                        @SuppressWarnings("unchecked")
                        Map<String, Object> c = (Map<String, Object>) container;
                        String image = (String) c.get("image");
                        String name = image.contains(":") ? image.substring(0, image.lastIndexOf(':')) : image;
                        if (images.containsKey(name)) {
                            c.put("image", images.get(name));
                        }
                    }
                }
            }
            objects.add(YamlNode.root(copy, "deploy/kubernetes (transformed)"));
        }
        return objects;
    }

    /** The objects with every container image of repository {@code from} taken from {@code to}, its tag kept. */
    static List<YamlNode> withImageRepository(List<YamlNode> objects, String from, String to) {
        List<YamlNode> replaced = new ArrayList<>();
        for (YamlNode object : objects) {
            @SuppressWarnings("unchecked")
            Map<String, Object> copy = (Map<String, Object>) deepCopy(object.value());
            if (object.kind().equals("DaemonSet")) {
                Map<String, Object> podSpec = child(child(child(copy, "spec"), "template"), "spec");
                for (String field : List.of("initContainers", "containers")) {
                    for (Object container : list(podSpec.get(field))) {
                        @SuppressWarnings("unchecked")
                        Map<String, Object> c = (Map<String, Object>) container;
                        String image = (String) c.get("image");
                        if (image.startsWith(from + ":")) {
                            c.put("image", to + image.substring(from.length()));
                        }
                    }
                }
            }
            replaced.add(new YamlNode(copy, object.where()));
        }
        return replaced;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> child(Map<String, Object> map, String key) {
        return (Map<String, Object>) map.computeIfAbsent(key, k -> new LinkedHashMap<String, Object>());
    }

    private static List<?> list(Object value) {
        return value instanceof List<?> list ? list : List.of();
    }

    static Object deepCopy(Object value) {
        if (value instanceof Map<?, ?> map) {
            Map<Object, Object> copy = new LinkedHashMap<>();
            map.forEach((key, child) -> copy.put(key, deepCopy(child)));
            return copy;
        }
        if (value instanceof List<?> list) {
            return new ArrayList<>(list.stream().map(KustomizeBase::deepCopy).toList());
        }
        return value;
    }
}
