package io.lvmqos.e2e.deploy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** The DaemonSet's pod template read the way kubelet reads it: containers, their flags and mounts. */
final class NodePod {

    static final String PLUGIN = "lvmqos";

    private static final Pattern ENV_REFERENCE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

    final YamlNode daemonSet;
    final YamlNode spec;

    NodePod(YamlNode daemonSet) {
        this.daemonSet = daemonSet;
        this.spec = daemonSet.path("spec.template.spec");
    }

    static NodePod fromBase() {
        return new NodePod(DeployTree.only(DeployTree.base(), "DaemonSet"));
    }

    List<YamlNode> containers() {
        return spec.get("containers").items();
    }

    List<YamlNode> initContainers() {
        return spec.get("initContainers").items();
    }

    List<YamlNode> allContainers() {
        return Stream.concat(initContainers().stream(), containers().stream()).toList();
    }

    YamlNode container(String name) {
        return allContainers().stream().filter(c -> c.get("name").text().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no container " + name + " in the DaemonSet"));
    }

    YamlNode plugin() {
        return container(PLUGIN);
    }

    /** The container whose image is the named kubernetes-csi sidecar, e.g. "csi-provisioner". */
    YamlNode sidecar(String imageName) {
        return containers().stream()
                .filter(c -> imageRepository(c.get("image").text()).endsWith("/" + imageName))
                .findFirst().orElseThrow(() -> new AssertionError("no " + imageName + " sidecar in the DaemonSet"));
    }

    static String name(YamlNode container) {
        return container.get("name").text();
    }

    /** What follows the program: the command's own arguments, then args (kubelet appends them). */
    static List<String> args(YamlNode container) {
        List<String> command = container.get("command").texts();
        List<String> args = new ArrayList<>(command.isEmpty() ? List.of() : command.subList(1, command.size()));
        args.addAll(container.get("args").texts());
        return args;
    }

    /**
     * The value of a flag in "--name=value" or "--name value" form; "" for a bare boolean flag.
     * Empty when the flag is not given.
     */
    static Optional<String> flag(YamlNode container, String name) {
        List<String> args = args(container);
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.startsWith(name + "=")) {
                return Optional.of(arg.substring(name.length() + 1));
            }
            if (arg.equals(name)) {
                boolean valueFollows = i + 1 < args.size() && !args.get(i + 1).startsWith("-");
                return Optional.of(valueFollows ? args.get(i + 1) : "");
            }
        }
        return Optional.empty();
    }

    static String requiredFlag(YamlNode container, String name) {
        return flag(container, name).orElseThrow(() -> new AssertionError(
                "container " + name(container) + " lacks " + name + ": " + args(container)));
    }

    /** The flag names a container is given ("--csi-address"), in order. */
    static List<String> flagNames(YamlNode container) {
        return args(container).stream().filter(arg -> arg.startsWith("--"))
                .map(arg -> arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg).toList();
    }

    static Set<String> envNames(YamlNode container) {
        Set<String> names = new TreeSet<>();
        container.get("env").items().forEach(env -> names.add(env.get("name").text()));
        return names;
    }

    static Optional<String> envFieldPath(YamlNode container, String variable) {
        return container.get("env").items().stream().filter(env -> env.get("name").text().equals(variable))
                .findFirst().flatMap(env -> env.path("valueFrom.fieldRef.fieldPath").optionalText());
    }

    /** The $(VAR) references in a container's command and args. */
    static Set<String> envReferences(YamlNode container) {
        Set<String> references = new TreeSet<>();
        for (String arg : Stream.concat(container.get("command").texts().stream(), container.get("args").texts().stream())
                .toList()) {
            Matcher matcher = ENV_REFERENCE.matcher(arg);
            while (matcher.find()) {
                references.add(matcher.group(1));
            }
        }
        return references;
    }

    static List<YamlNode> mounts(YamlNode container) {
        return container.get("volumeMounts").items();
    }

    static String propagation(YamlNode mount) {
        return mount.get("mountPropagation").optionalText().orElse("None");
    }

    static Optional<YamlNode> mountAt(YamlNode container, String mountPath) {
        return mounts(container).stream().filter(m -> m.get("mountPath").text().equals(mountPath)).findFirst();
    }

    YamlNode volume(String name) {
        return spec.get("volumes").items().stream().filter(v -> v.get("name").text().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + name + " in the pod template"));
    }

    /** The host path behind a mount, if its volume is a hostPath. */
    Optional<Path> hostPathOf(YamlNode mount) {
        YamlNode volume = volume(mount.get("name").text());
        return volume.path("hostPath.path").optionalText().map(path -> Path.of(path).normalize());
    }

    /**
     * Where a path seen inside a container is on the host: through the deepest mount that
     * contains it, which must be a hostPath volume (subPath mounts are files and are skipped).
     */
    Optional<Path> hostPathOf(YamlNode container, String containerPath) {
        Path path = Path.of(containerPath).normalize();
        YamlNode best = null;
        for (YamlNode mount : mounts(container)) {
            Path mountPath = Path.of(mount.get("mountPath").text()).normalize();
            if (mount.get("subPath").present() || !path.startsWith(mountPath)) {
                continue;
            }
            if (best == null || mountPath.getNameCount() > Path.of(best.get("mountPath").text()).getNameCount()) {
                best = mount;
            }
        }
        if (best == null) {
            return Optional.empty();
        }
        Path relative = Path.of(best.get("mountPath").text()).normalize().relativize(path);
        return hostPathOf(best).map(host -> host.resolve(relative).normalize());
    }

    static String imageRepository(String image) {
        String withoutDigest = image.contains("@") ? image.substring(0, image.indexOf('@')) : image;
        int slash = withoutDigest.lastIndexOf('/');
        int colon = withoutDigest.lastIndexOf(':');
        return colon > slash ? withoutDigest.substring(0, colon) : withoutDigest;
    }

    static List<String> images(List<YamlNode> objects) {
        List<String> images = new ArrayList<>();
        for (YamlNode object : objects) {
            YamlNode podSpec = object.kind().equals("Pod") ? object.get("spec") : object.path("spec.template.spec");
            for (String list : List.of("initContainers", "containers")) {
                podSpec.get(list).items().forEach(c -> images.add(c.get("image").text()));
            }
        }
        return images;
    }
}
