package io.lvmqos.lvm;

import java.util.List;
import java.util.Optional;

/** A volume group and its visible LVs, read by one lvs: everything CreateVolume decides on. */
public record VolumeGroupContents(VolumeGroup group, List<LogicalVolume> volumes) {

    public VolumeGroupContents {
        volumes = List.copyOf(volumes);
    }

    public Optional<LogicalVolume> find(String lvName) {
        return volumes.stream().filter(lv -> lv.name().equals(lvName)).findFirst();
    }
}
