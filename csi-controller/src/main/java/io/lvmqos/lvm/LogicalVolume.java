package io.lvmqos.lvm;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * One LV as {@code lvs} reports it. Tags of the form {@code key=value} are kept as a map.
 *
 * @param health what the ninth character of {@code lv_attr} says of a thin pool (OK for other LVs)
 */
public record LogicalVolume(String volumeGroup, String name, long sizeBytes, SegmentType segmentType,
                            boolean active, boolean open, boolean activationSkip, Optional<Boolean> zeroing,
                            Map<String, String> tags, Optional<String> pool, Optional<String> origin,
                            Instant created, Path devicePath, OptionalDouble dataPercent,
                            OptionalDouble metadataPercent, PoolHealth health) {

    public enum SegmentType {
        LINEAR, THIN, THIN_POOL, OTHER;

        static SegmentType of(String lvmName) {
            return switch (lvmName) {
                case "linear", "striped" -> LINEAR;
                case "thin" -> THIN;
                case "thin-pool" -> THIN_POOL;
                default -> OTHER;
            };
        }
    }

    /**
     * A thin pool's state in the kernel, the ninth character of {@code lv_attr}: out of data space
     * ('D': writes queue, or fail with --errorwhenfull y), metadata read-only ('M': out of metadata
     * space or damaged, every write that needs a new mapping fails) or failed ('F').
     */
    public enum PoolHealth {
        OK, OUT_OF_DATA_SPACE, METADATA_READ_ONLY, FAILED;

        static PoolHealth ofAttr(String attr) {
            return attr.length() < 9 ? OK : switch (attr.charAt(8)) {
                case 'D' -> OUT_OF_DATA_SPACE;
                case 'M' -> METADATA_READ_ONLY;
                case 'F' -> FAILED;
                default -> OK;
            };
        }
    }

    public LogicalVolume {
        tags = Map.copyOf(tags);
    }

    public String lvmPath() {
        return volumeGroup + "/" + name;
    }

    public boolean isThin() {
        return segmentType == SegmentType.THIN;
    }

    public boolean isThinPool() {
        return segmentType == SegmentType.THIN_POOL;
    }

    public Optional<String> tag(String key) {
        return Optional.ofNullable(tags.get(key));
    }
}
