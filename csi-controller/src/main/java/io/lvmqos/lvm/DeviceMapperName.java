package io.lvmqos.lvm;

import java.nio.file.Path;
import java.util.Optional;

/**
 * An LV's device-mapper name, the one rule both ways: LVM names an LV's dm device
 * {@code <vg>-<lv>} with every '-' inside either name doubled, and hidden layers (a thin pool's
 * {@code -tpool}, a snapshot's {@code -real}) append one more single-dash part.
 */
public record DeviceMapperName(String volumeGroup, String logicalVolume) {

    /** The name as device-mapper holds it. */
    public String name() {
        return volumeGroup.replace("-", "--") + "-" + logicalVolume.replace("-", "--");
    }

    /** The device node under /dev/mapper. */
    public Path path() {
        return Path.of("/dev/mapper", name());
    }

    /** The name of a hidden layer of this LV ({@code tpool} for a thin pool's kernel target). */
    public String layer(String suffix) {
        return name() + "-" + suffix;
    }

    /** Empty for a name LVM did not make, or for one of its hidden layers. */
    public static Optional<DeviceMapperName> parse(String dmName) {
        StringBuilder part = new StringBuilder();
        String volumeGroup = null;
        for (int i = 0; i < dmName.length(); i++) {
            char c = dmName.charAt(i);
            if (c != '-') {
                part.append(c);
            } else if (i + 1 < dmName.length() && dmName.charAt(i + 1) == '-') {
                part.append('-');
                i++;
            } else if (volumeGroup == null) {
                volumeGroup = part.toString();
                part.setLength(0);
            } else {
                return Optional.empty();
            }
        }
        if (volumeGroup == null || volumeGroup.isEmpty() || part.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new DeviceMapperName(volumeGroup, part.toString()));
    }
}
