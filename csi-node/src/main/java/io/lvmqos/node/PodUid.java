package io.lvmqos.node;

import io.lvmqos.cgroup.PodUids;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * Which pod a publish is for. kubelet passes the UID in volume_context when the CSIDriver has
 * podInfoOnMount; otherwise it is read from the target path's layout below the kubelet directory
 * (by name, not by a fixed index, so any kubelet directory works).
 */
public final class PodUid {

    public static final String CONTEXT_KEY = "csi.storage.k8s.io/pod.uid";

    private PodUid() {
    }

    public static Optional<String> of(Map<String, String> volumeContext, Path targetPath, Path kubeletDir) {
        String fromContext = volumeContext.get(CONTEXT_KEY);
        if (fromContext != null && !fromContext.isEmpty()) {
            return Optional.of(fromContext);
        }
        return fromTargetPath(targetPath, kubeletDir);
    }

    /**
     * {@code <kubelet>/pods/<uid>/volumes/...} for filesystem volumes and
     * {@code <kubelet>/plugins/kubernetes.io/csi/volumeDevices/publish/<pv>/<uid>} for block volumes.
     */
    public static Optional<String> fromTargetPath(Path targetPath, Path kubeletDir) {
        if (!targetPath.startsWith(kubeletDir)) {
            return Optional.empty();
        }
        Path relative = kubeletDir.relativize(targetPath);
        if (relative.getNameCount() >= 3 && relative.getName(0).toString().equals("pods")
                && relative.getName(2).toString().startsWith("volume")) {
            return uid(relative.getName(1).toString());
        }
        int publish = indexOf(relative, "volumeDevices");
        if (publish >= 0 && relative.getNameCount() == publish + 4
                && relative.getName(publish + 1).toString().equals("publish")) {
            return uid(relative.getName(publish + 3).toString());
        }
        return Optional.empty();
    }

    private static Optional<String> uid(String candidate) {
        // the same rule as the cgroup lookup's, so a UID limited at publish is lifted at unpublish
        return PodUids.isValid(candidate) ? Optional.of(candidate) : Optional.empty();
    }

    private static int indexOf(Path path, String name) {
        for (int i = 0; i < path.getNameCount(); i++) {
            if (path.getName(i).toString().equals(name)) {
                return i;
            }
        }
        return -1;
    }
}
