package io.lvmqos.e2e.deploy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * The chart in deploy/helm/lvmqos, driven through Helm's own engine (helm-java runs Helm's Go code
 * in-process): rendered as release {@value #RELEASE} in namespace {@value #NAMESPACE}, the names the
 * kustomize base uses, for Kubernetes {@value #KUBE_VERSION}, the chart's floor, and with the values
 * every install needs (src/test/resources/helm/operator-values.yaml: an image repository of the
 * operator's) before the test's own.
 */
final class HelmChart {

    static final String RELEASE = "lvmqos";
    static final String NAMESPACE = "lvmqos";
    /** The lowest Kubernetes version Chart.yaml's kubeVersion admits. */
    static final String KUBE_VERSION = "1.34.0";
    /** The driver's image repository of operator-values.yaml. */
    static final String OPERATOR_REPOSITORY = "registry.lab.test/storage/lvmqos";

    private HelmChart() {
    }

    static Path dir() {
        return DeployTree.root().resolve("deploy/helm/lvmqos");
    }

    static Path operatorValues() {
        try {
            return Path.of(HelmChart.class.getResource("/helm/operator-values.yaml").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** `helm template` with operator-values.yaml and then the given values files; Helm's refusal becomes an IllegalStateException. */
    static String templateText(Path... valuesFiles) {
        return render(dir(), KUBE_VERSION, Stream.concat(Stream.of(operatorValues()), Stream.of(valuesFiles)).toList());
    }

    /** `helm template` of {@code chart} (a directory or an archive) for that Kubernetes version, with exactly these values files. */
    static String render(Path chart, String kubeVersion, List<Path> valuesFiles) {
        TemplateCommand template = new Helm(chart).template().withName(RELEASE).withNamespace(NAMESPACE)
                .withKubeVersion(kubeVersion);
        for (Path values : valuesFiles) {
            template = template.withValuesFile(values);
        }
        return template.call();
    }

    static List<YamlNode> template(Path... valuesFiles) {
        return DeployTree.parse(templateText(valuesFiles), "helm template");
    }

    /** What the chart's hooks' annotation keys become in the copy {@link #hooks} renders. */
    private static final String HOOK_STAND_IN = "hook.rendered-by-the-tests.lvmqos.io/";

    /**
     * The hooks (`helm test`'s objects) as {@link #template} would render them, their annotations as written.
     * helm-java gives the release's manifest, which Helm keeps apart from the hooks ({@code helm template}
     * prints both): so a copy of the chart is rendered in which every {@code helm.sh/hook...} annotation key
     * is renamed, which makes Helm take those objects as ordinary ones, and the keys are named back here.
     */
    static List<YamlNode> hooks(Path... valuesFiles) {
        Path copy;
        try {
            copy = Files.createTempDirectory("lvmqos-chart");
            try (Stream<Path> files = Files.walk(dir())) {
                for (Path file : files.toList()) {
                    Path target = copy.resolve(dir().relativize(file).toString());
                    if (Files.isDirectory(file)) {
                        Files.createDirectories(target);
                    } else if (dir().relativize(file).startsWith("templates")) {
                        Files.writeString(target, Files.readString(file).replace("helm.sh/hook", HOOK_STAND_IN + "hook"));
                    } else {
                        Files.copy(file, target);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            String text = render(copy, KUBE_VERSION, Stream.concat(Stream.of(operatorValues()), Stream.of(valuesFiles))
                    .toList());
            List<YamlNode> hooks = new java.util.ArrayList<>();
            for (YamlNode object : DeployTree.parse(text, "helm template (hooks)")) {
                Map<?, ?> annotations = object.path("metadata.annotations").present()
                        ? object.path("metadata.annotations").map() : Map.of();
                if (annotations.keySet().stream().noneMatch(key -> key.toString().startsWith(HOOK_STAND_IN))) {
                    continue;
                }
                Map<Object, Object> named = new java.util.LinkedHashMap<>();
                annotations.forEach((key, value) -> named.put(key.toString().replace(HOOK_STAND_IN, "helm.sh/"), value));
                @SuppressWarnings("unchecked")
                Map<Object, Object> metadata = (Map<Object, Object>) object.get("metadata").value();
                metadata.put("annotations", named);
                hooks.add(object);
            }
            return hooks;
        } finally {
            deleteTree(copy);
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Helm's refusal of the values (schema or template failure), or empty when it renders. */
    static Optional<String> refusal(Path values) {
        return refusal(() -> templateText(values));
    }

    /** Helm's refusal to render, or empty when it renders. */
    static Optional<String> refusal(Supplier<String> rendering) {
        try {
            rendering.get();
            return Optional.empty();
        } catch (IllegalStateException e) {
            return Optional.of(e.getMessage());
        }
    }

    static LintResult lint() {
        return new Helm(dir()).lint().strict().call();
    }

    /** Writes {@code values} as a YAML values file in {@code dir}. */
    static Path valuesFile(Path dir, String name, Map<String, ?> values) {
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        Path file = dir.resolve(name + ".yaml");
        try {
            Files.writeString(file, new Yaml(options).dump(values), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }
}
