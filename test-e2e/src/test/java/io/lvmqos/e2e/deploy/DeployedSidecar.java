package io.lvmqos.e2e.deploy;

import java.nio.file.Path;
import java.util.List;

/**
 * A kubernetes-csi sidecar as the base DaemonSet runs it, for checks outside this package (the
 * guest's, which run the real program with these arguments): read through {@link NodePod}, so that
 * they and the deploy tree's own tests read the manifest one way.
 *
 * @param container the container's name in the DaemonSet
 * @param image the image it names, tag included
 * @param args what kubelet passes to the program, as written (no {@code $(VAR)} in them: {@link #of} refuses those)
 */
public record DeployedSidecar(String container, String image, List<String> args) {

    public DeployedSidecar {
        args = List.copyOf(args);
    }

    /** The sidecar whose image is the named kubernetes-csi program, e.g. "livenessprobe". */
    public static DeployedSidecar of(String imageName) {
        YamlNode sidecar = NodePod.fromBase().sidecar(imageName);
        if (!NodePod.envReferences(sidecar).isEmpty()) {
            throw new AssertionError(NodePod.name(sidecar) + " refers to " + NodePod.envReferences(sidecar)
                    + ", which the checks do not resolve as kubelet would");
        }
        return new DeployedSidecar(NodePod.name(sidecar), sidecar.get("image").text(), NodePod.args(sidecar));
    }

    /** The driver's name as the plugin container is given it ({@code --driver-name}). */
    public static String driverName() {
        return NodePod.requiredFlag(NodePod.fromBase().plugin(), "--driver-name");
    }

    /** The checkout the manifests are read from. */
    public static Path repository() {
        return DeployTree.root();
    }
}
