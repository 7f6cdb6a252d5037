package io.lvmqos.lvm;

import java.nio.file.Path;

/**
 * Says who holds a device open (mount points, processes), so that a refused delete can name the
 * holder. The node side knows the mount table; the controller only asks.
 */
@FunctionalInterface
public interface DeviceUsers {

    /** A short description such as "mounted at /var/lib/kubelet/...", or empty when nothing is known. */
    String describe(Path device);

    DeviceUsers UNKNOWN = device -> "";
}
