package io.lvmqos.cgroup;

import io.lvmqos.errors.DriverException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Which cgroup interface throttles block I/O on this node. */
public enum CgroupMode {
    /** The unified hierarchy: io.max in each cgroup. */
    V2,
    /** The legacy blkio controller: blkio.throttle.* files under &lt;root&gt;/blkio. */
    V1;

    public static final String V1_CONTROLLER_DIR = "blkio";

    /**
     * v2 when the root is itself a cgroup2 mount (it has cgroup.controllers); v1 when it holds a
     * blkio hierarchy with throttling. A hybrid host (v1 controllers plus an empty cgroup2 at
     * /sys/fs/cgroup/unified) is v1: that is where blkio is bound.
     */
    public static CgroupMode detect(Path root) {
        if (Files.isRegularFile(root.resolve("cgroup.controllers"))) {
            return V2;
        }
        if (Files.isRegularFile(root.resolve(V1_CONTROLLER_DIR).resolve("blkio.throttle.write_bps_device"))) {
            return V1;
        }
        throw DriverException.unavailable("no cgroup I/O controller at " + root + ": neither "
                + root.resolve("cgroup.controllers") + " (cgroup v2) nor "
                + root.resolve(V1_CONTROLLER_DIR).resolve("blkio.throttle.write_bps_device")
                + " (cgroup v1 blkio) exists; is the host's /sys/fs/cgroup mounted into the node plugin?");
    }

    /** The directory under which pod cgroups live for this mode. */
    public Path hierarchy(Path root) {
        return this == V2 ? root : root.resolve(V1_CONTROLLER_DIR);
    }
}
