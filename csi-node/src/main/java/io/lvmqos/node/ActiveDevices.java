package io.lvmqos.node;

import io.lvmqos.lvm.Lvm;
import io.lvmqos.volume.ManagedVolume;
import java.nio.file.Files;
import java.nio.file.LinkOption;
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

    /**
     * The volume's device, its LV activated first when the device is missing. After a node boots,
     * nothing in the plugin's container activates LVs (there is no udev in it to run lvm's
     * autoactivation), and the host's autoactivation may be off or not have run yet; kubelet's
     * stage or publish after the reboot would otherwise find no device. Called under the volume's
     * lock; lvm takes the volume group's own lock.
     */
    Path of(ManagedVolume volume) {
        Path device = volume.devicePath();
        if (!Files.exists(device, LinkOption.NOFOLLOW_LINKS)) {
            log.info("activating {}: its device {} is missing (inactive since the node booted?)",
                    volume.id().lvmPath(), device);
            lvm.activate(volume.id().volumeGroup(), volume.id().lvName());
        }
        return device;
    }
}
