package io.lvmqos.guarantee;

import io.lvmqos.device.BackingDisks;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.Lvm;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The whole disks a volume group lies on: its physical volumes (vgs) followed down to their disks
 * (sysfs), where io.cost and its model apply.
 *
 * @param physicalVolumes the group's physical volumes, as lvm names them
 * @param disks the whole disks under them, in that order
 */
record GroupDisks(String group, List<Path> physicalVolumes, Set<DeviceNumber> disks) {

    GroupDisks {
        physicalVolumes = List.copyOf(physicalVolumes);
        disks = Collections.unmodifiableSet(new LinkedHashSet<>(disks));
    }

    /** @throws DriverException.FailedPrecondition when the group has no physical volume on this node */
    static GroupDisks of(Lvm lvm, BackingDisks backingDisks, String group) {
        List<Path> pvs = lvm.physicalVolumes(group);
        if (pvs.isEmpty()) {
            throw DriverException.failedPrecondition("volume group " + group + " is not on this node (vgs finds no"
                    + " physical volume of it)");
        }
        Set<DeviceNumber> disks = new LinkedHashSet<>();
        for (Path pv : pvs) {
            disks.addAll(backingDisks.of(DeviceNumber.of(pv)));
        }
        return new GroupDisks(group, pvs, disks);
    }
}
