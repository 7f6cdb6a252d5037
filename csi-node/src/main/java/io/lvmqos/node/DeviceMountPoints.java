package io.lvmqos.node;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.lvm.DeviceUsers;
import io.lvmqos.mount.MountEntry;
import io.lvmqos.mount.MountTable;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/** Names the mount points of a device, for the message of a delete refused because it is open. */
public final class DeviceMountPoints implements DeviceUsers {

    private final MountTable mountTable;

    public DeviceMountPoints(MountTable mountTable) {
        this.mountTable = mountTable;
    }

    @Override
    public String describe(Path device) {
        try {
            List<MountEntry> mounts = mountTable.mountsOf(DeviceNumber.of(device));
            if (mounts.isEmpty()) {
                return "";
            }
            return "mounted at " + mounts.stream().map(m -> m.mountPoint().toString()).distinct()
                    .collect(Collectors.joining(", "));
        } catch (RuntimeException unknown) {
            return "";
        }
    }
}
