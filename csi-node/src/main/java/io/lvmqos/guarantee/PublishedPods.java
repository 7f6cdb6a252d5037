package io.lvmqos.guarantee;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.mount.MountTable;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;

/**
 * Which pods have a volume published, as {@link PodShares} needs to know it. The node's flows
 * answer it from the publish mounts they make ({@code node.PodLimits}); an interface here keeps
 * the dependency one way, from {@code node} to {@code guarantee}.
 */
public interface PublishedPods {

    /** The pods with a publish mount of this filesystem device (or of this block device node). */
    Set<String> podsUsing(DeviceNumber device, Optional<String> deviceNodeRoot);

    /** As {@link #podsUsing(DeviceNumber, Optional)}, in a mount table read already made. */
    Set<String> podsUsing(MountTable.Snapshot table, DeviceNumber device, Optional<String> deviceNodeRoot);

    /** The device node's path inside devtmpfs, the root mountinfo shows for a raw block publish of it. */
    String deviceNodeRoot(Path device);
}
