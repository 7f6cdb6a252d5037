package io.lvmqos.device;

import java.nio.file.Path;

/**
 * A mounted filesystem as growing it needs it, given by whoever pinned the mount: what is mounted
 * (its device, or a device node bound there), where, for messages, and a path that leads a child
 * process to exactly that mount.
 *
 * @param device the device of the mounted filesystem (for a device node, the node's)
 * @param source the mount's source as the mount table shows it
 * @param deviceNode whether what is mounted there is a device node rather than a filesystem
 * @param pathForChild a path that a program this process starts resolves to the mount, and to no other
 */
public record MountedFilesystem(DeviceNumber device, String source, Path mountPoint, boolean deviceNode,
                                String pathForChild) {
}
