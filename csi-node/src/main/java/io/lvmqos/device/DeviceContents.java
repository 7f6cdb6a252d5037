package io.lvmqos.device;

import java.util.Map;

/** What a low-level probe found at the start (and end) of a block device. */
public sealed interface DeviceContents {

    /** No filesystem, partition table, RAID, LVM or crypto signature: safe to format. */
    record Blank() implements DeviceContents {
    }

    /** A filesystem signature (blkid USAGE=filesystem), e.g. ext4 or xfs. */
    record Filesystem(String type) implements DeviceContents {
    }

    /** A partition table: the device has been used as a disk, never format it. */
    record PartitionTable(String type) implements DeviceContents {
    }

    /**
     * Anything else that is not ours to overwrite: an LVM PV, RAID member, LUKS, swap, or several
     * signatures at once (blkid's "ambiguous" result).
     */
    record Other(String description, Map<String, String> tags) implements DeviceContents {
        public Other {
            tags = Map.copyOf(tags);
        }
    }

    /** A person's name for it, for error messages. */
    default String describe() {
        return switch (this) {
            case Blank b -> "nothing (blank)";
            case Filesystem f -> "a " + f.type() + " filesystem";
            case PartitionTable p -> "a " + p.type() + " partition table";
            case Other o -> o.description();
        };
    }
}
