package io.lvmqos.node;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.volume.ManagedVolume;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A volume's device for stage and publish, its LV activated first when the device is missing. */
public final class ActiveDevices {

    private static final Logger log = LoggerFactory.getLogger(ActiveDevices.class);

    private final Lvm lvm;

    public ActiveDevices(Lvm lvm) {
        this.lvm = lvm;
    }

    /** A volume's device node and its number, read in one look. */
    record Device(Path path, DeviceNumber number) {
    }

    /**
     * The volume's device and its number, its LV activated first when the device is missing. After
     * a node boots, nothing in the plugin's container activates LVs (there is no udev in it to run
     * lvm's autoactivation), and the host's autoactivation may be off or not have run yet; kubelet's
     * stage or publish after the reboot would otherwise find no device. The number is read afresh
     * each time: device-mapper minors change when an LV is activated again. Called under the
     * volume's lock; lvm takes the volume group's own lock.
     */
    Device of(ManagedVolume volume) {
        Path device = volume.devicePath();
        try {
            return new Device(device, DeviceNumber.of(device));
        } catch (DriverException.NotFound missing) {
            log.info("activating {}: its device {} is missing (inactive since the node booted?)",
                    volume.id().lvmPath(), device);
            lvm.activate(volume.id().volumeGroup(), volume.id().lvName());
            return new Device(device, DeviceNumber.of(device));
        }
    }
}
