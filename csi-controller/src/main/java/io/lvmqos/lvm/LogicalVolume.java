package io.lvmqos.lvm;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;

/** One LV as {@code lvs} reports it. Tags of the form {@code key=value} are kept as a map. */
public record LogicalVolume(String volumeGroup, String name, long sizeBytes, SegmentType segmentType,
                            boolean active, boolean open, boolean activationSkip, Optional<Boolean> zeroing,
                            Map<String, String> tags, Optional<String> pool, Optional<String> origin,
                            Instant created, Path devicePath, OptionalDouble dataPercent,
                            OptionalDouble metadataPercent) {

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
