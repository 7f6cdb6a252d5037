package io.lvmqos.e2e.deploy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * The chart in deploy/helm/lvmqos, driven through Helm's own engine (helm-java runs Helm's Go code
 * in-process): rendered as release {@value #RELEASE} in namespace {@value #NAMESPACE}, the names the
 * kustomize base uses.
 */
final class HelmChart {

    static final String RELEASE = "lvmqos";
    static final String NAMESPACE = "lvmqos";

    private HelmChart() {
    }

    static Path dir() {
        return DeployTree.root().resolve("deploy/helm/lvmqos");
    }

    /** `helm template` with the given values files, in order; Helm's refusal becomes an IllegalStateException. */
    static String templateText(Path... valuesFiles) {
        TemplateCommand template = new Helm(dir()).template().withName(RELEASE).withNamespace(NAMESPACE);
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
        try {
            templateText(values);
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
