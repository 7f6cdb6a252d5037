package io.lvmqos.volume;

import csi.v1.Csi;
import csi.v1.Csi.VolumeCapability.AccessMode.Mode;
import io.lvmqos.errors.DriverException;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Which volume capabilities a local LV can honour: one node, block or filesystem. */
public final class Capabilities {

    public static final Set<Mode> SUPPORTED_MODES = Set.of(Mode.SINGLE_NODE_WRITER, Mode.SINGLE_NODE_READER_ONLY,
            Mode.SINGLE_NODE_SINGLE_WRITER, Mode.SINGLE_NODE_MULTI_WRITER);
    public static final Set<String> SUPPORTED_FS_TYPES = Set.of("", "ext4", "xfs");

    private Capabilities() {
    }

    /** Why the capability cannot be honoured, or empty when it can. */
    public static Optional<String> unsupportedReason(Csi.VolumeCapability capability) {
        if (!capability.hasAccessMode()) {
            return Optional.of("a volume capability needs an access mode");
        }
        Mode mode = capability.getAccessMode().getMode();
        if (!SUPPORTED_MODES.contains(mode)) {
            return Optional.of("access mode " + mode + " is not supported: LVM volumes are local to one node "
                    + "(supported: " + SUPPORTED_MODES + ")");
        }
        return switch (capability.getAccessTypeCase()) {
            case BLOCK -> Optional.empty();
            case MOUNT -> SUPPORTED_FS_TYPES.contains(capability.getMount().getFsType())
                    ? Optional.empty()
                    : Optional.of("filesystem type \"" + capability.getMount().getFsType()
                            + "\" is not supported (supported: ext4, xfs)");
            case ACCESSTYPE_NOT_SET -> Optional.of("a volume capability needs an access type, block or mount");
        };
    }

    /** Refuses a missing or unsupported capability list with InvalidArgument. */
    public static void requireSupported(List<Csi.VolumeCapability> capabilities) {
        if (capabilities.isEmpty()) {
            throw DriverException.invalidArgument("volume_capabilities must not be empty");
        }
        for (Csi.VolumeCapability capability : capabilities) {
            unsupportedReason(capability).ifPresent(reason -> {
                throw DriverException.invalidArgument(reason);
            });
        }
    }
}
