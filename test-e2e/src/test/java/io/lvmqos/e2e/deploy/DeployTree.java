package io.lvmqos.e2e.deploy;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** The files under deploy/, found from wherever the tests run, and parsed. */
final class DeployTree {

    static final String DRIVER_NAME = "lvmqos.csi.io";

    private DeployTree() {
    }

    /** The repository root: the nearest directory upwards that holds deploy/kubernetes. */
    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        return above(dir).or(() -> above(testClasses()))
                .orElseThrow(() -> new AssertionError("no deploy/kubernetes/kustomization.yaml above " + dir
                        + " or above " + testClasses()));
    }

    private static Optional<Path> above(Path dir) {
        for (Path candidate = dir; candidate != null; candidate = candidate.getParent()) {
            if (Files.isRegularFile(candidate.resolve("deploy/kubernetes/kustomization.yaml"))) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** Where these classes were loaded from: in the UML guest, whose working directory is /tmp, the way back to the checkout. */
    private static Path testClasses() {
        try {
            return Path.of(DeployTree.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static Path kubernetesDir() {
        return root().resolve("deploy/kubernetes");
    }

    static Path examplesDir() {
        return root().resolve("deploy/examples");
    }

    static Path dockerfile() {
        return root().resolve("deploy/Dockerfile");
    }

    static Path readme() {
        return root().resolve("deploy/README.md");
    }

    static Path jvmOptions() {
        return root().resolve("deploy/jvm.options");
    }

    static List<YamlNode> parse(String yamlText, String source) {
        List<YamlNode> documents = new ArrayList<>();
        for (Object document : yaml().loadAll(yamlText)) {
            if (document != null) {
                documents.add(YamlNode.root(document, source));
            }
        }
        return documents;
    }

    static List<YamlNode> parse(Path file) {
        try (Reader reader = Files.newBufferedReader(file)) {
            List<YamlNode> documents = new ArrayList<>();
            String source = root().relativize(file).toString();
            for (Object document : yaml().loadAll(reader)) {
                if (document != null) {
                    documents.add(YamlNode.root(document, source));
                }
            }
            return documents;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static YamlNode kustomization() {
        List<YamlNode> documents = parse(kubernetesDir().resolve("kustomization.yaml"));
        if (documents.size() != 1) {
            throw new AssertionError("kustomization.yaml has " + documents.size() + " documents");
        }
        return documents.getFirst();
    }

    /** Every object of the base, from the files its kustomization lists. */
    static List<YamlNode> base() {
        List<YamlNode> objects = new ArrayList<>();
        for (String resource : kustomization().get("resources").texts()) {
            objects.addAll(parse(kubernetesDir().resolve(resource)));
        }
        return objects;
    }

    static List<Path> exampleFiles() {
        try (Stream<Path> files = Files.list(examplesDir())) {
            return files.filter(file -> file.toString().endsWith(".yaml")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<YamlNode> examples() {
        return exampleFiles().stream().flatMap(file -> parse(file).stream()).toList();
    }

    static List<YamlNode> ofKind(List<YamlNode> objects, String kind) {
        return objects.stream().filter(object -> object.kind().equals(kind)).toList();
    }

    static YamlNode only(List<YamlNode> objects, String kind) {
        List<YamlNode> found = ofKind(objects, kind);
        if (found.size() != 1) {
            throw new AssertionError("expected one " + kind + ", found " + found.size());
        }
        return found.getFirst();
    }

    static YamlNode named(List<YamlNode> objects, String kind, String name) {
        return ofKind(objects, kind).stream().filter(object -> object.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " named " + name));
    }

    private static Yaml yaml() {
        return new Yaml(new SafeConstructor(new LoaderOptions()));
    }
}
