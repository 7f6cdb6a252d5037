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
