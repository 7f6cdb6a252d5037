package io.lvmqos.mount;

import io.lvmqos.errors.DriverException;
import java.nio.file.Path;

/**
 * A path outside the kubelet directory that a mount comes from: a device node (an LV's device to
 * mount, the real /dev/dm-N of a raw block volume to bind). It is named by path, not reached
 * through {@link Beneath}; {@link Mounter} opens a bind's source by name and refuses it if a symlink
 * is on it. Kubelet's own paths (targets, staging paths) are plain {@link Path}s checked by
 * {@link KubeletPaths}.
 */
public record HostPath(Path path) {

    public HostPath {
        requireCanonical(path, "host path");
    }

    /** The rule for every path the mount boundary is given: absolute, without . or .. in it. */
    static void requireCanonical(Path path, String role) {
        if (!path.isAbsolute() || !path.normalize().equals(path)) {
            throw DriverException.invalidArgument(role + " " + path + " must be an absolute path without . or ..");
        }
    }

    /** The path itself, as messages and logs name it. */
    @Override
    public String toString() {
        return path.toString();
    }
}
