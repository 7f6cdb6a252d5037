package io.lvmqos.cgroup;

import io.lvmqos.errors.DriverException;
import java.nio.file.Path;

/** Chooses the node's {@link CgroupLimitsWriter}: the one place that knows every implementation. */
public final class CgroupLimitsWriters {

    private CgroupLimitsWriters() {
    }

    /**
     * The writer for the node's cgroup mode, detected now. A node with no I/O controller gets a
     * writer that refuses every call with the reason, so that the plugin still starts and says why
     * on each publish that needs a limit.
     *
     * @param cgroupRoot the host's cgroup mount point, the same one {@link PodCgroups} searches
     */
    public static CgroupLimitsWriter forNode(Path cgroupRoot) {
        Path root = cgroupRoot.toAbsolutePath().normalize();
        try {
            return switch (CgroupMode.detect(root)) {
                case V2 -> new V2LimitsWriter(root);
                case V1 -> new V1LimitsWriter(root);
            };
        } catch (DriverException.Unavailable none) {
            return new CgroupLimitsWriter.NoController(root, none.getMessage());
        }
    }
}
