package io.lvmqos.volume;

import java.util.Optional;

/**
 * The id of a volume or snapshot this driver issued: {@code <prefix>/<node>/<vg>/<lv>}. The node is
 * in the id because LVM volumes are local: a source on another node must be told apart from an
 * unknown one. Anything that does not parse was never issued by us and means "not found".
 */
public record VolumeId(Kind kind, String node, String volumeGroup, String lvName) {

    public enum Kind {
        VOLUME("lvmqos"), SNAPSHOT("lvmqos-snap");

        private final String prefix;

        Kind(String prefix) {
            this.prefix = prefix;
        }
    }

    public VolumeId {
        if (!NodeIds.isValid(node) || !LvmNames.isValidName(volumeGroup) || !LvmNames.isValidName(lvName)) {
            throw new IllegalArgumentException("not a valid volume id: " + node + "/" + volumeGroup + "/" + lvName);
        }
        if (kind == Kind.VOLUME != LvmNames.isVolumeLvName(lvName) || kind == Kind.SNAPSHOT != LvmNames.isSnapshotLvName(lvName)) {
            throw new IllegalArgumentException("LV name " + lvName + " does not name a " + kind);
        }
    }

    public static Optional<VolumeId> parse(Kind kind, String text) {
        String[] parts = text.split("/", -1);
        if (parts.length != 4 || !parts[0].equals(kind.prefix)) {
            return Optional.empty();
        }
        try {
            return Optional.of(new VolumeId(kind, parts[1], parts[2], parts[3]));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** The LVM name of the LV, {@code vg/lv}. */
    public String lvmPath() {
        return volumeGroup + "/" + lvName;
    }

    @Override
    public String toString() {
        return kind.prefix + "/" + node + "/" + volumeGroup + "/" + lvName;
    }
}
