package io.lvmqos.node;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.mount.MountEntry;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Where a volume is already staged, read from the mount table: a mount of its filesystem at a
 * staging path of this driver other than the one asked for. A volume is staged once per node;
 * staging it again elsewhere would give one filesystem two staging mounts, and the second would
 * outlive the first's unstage.
 */
final class StagedElsewhere {

    private StagedElsewhere() {
    }

    /**
     * @param isStagingPath whether a mount point is one of this driver's staging paths; the
     *        volume's publish mounts (bind mounts of the same filesystem) are not
     */
    static Optional<Path> find(List<MountEntry> mounts, DeviceNumber device, Path staging,
                               Predicate<Path> isStagingPath) {
        return mounts.stream()
                .filter(m -> m.device().equals(device) && !m.fsType().equals("devtmpfs"))
                .map(MountEntry::mountPoint)
                .filter(p -> !p.equals(staging) && isStagingPath.test(p))
                .findFirst();
    }
}
