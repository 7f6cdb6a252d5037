package io.lvmqos.node;

import csi.v1.Csi;
import io.lvmqos.controller.VolumeExpansion;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.device.Filesystems;
import io.lvmqos.device.FsType;
import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.mount.PinnedMount;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.VolumeCatalog;
import java.nio.file.Path;
import java.util.Optional;

/**
 * NodeExpandVolume's work, under the volume's lock and the pin of the mount at the volume path
 * that {@link NodeService} holds: the LV grown if the controller has not grown it yet, the
 * filesystem grown to it, and per-GiB limits reapplied to every pod using the volume.
 */
public final class ExpandFlow {

    private final VolumeCatalog catalog;
    private final Lvm lvm;
    private final Filesystems filesystems;
    private final PodLimits podLimits;

    public ExpandFlow(VolumeCatalog catalog, Lvm lvm, Filesystems filesystems, PodLimits podLimits) {
        this.catalog = catalog;
        this.lvm = lvm;
        this.filesystems = filesystems;
        this.podLimits = podLimits;
    }

    /**
     * @param mount the mount at the volume path, pinned before anything changed; null when none is there
     * @param askedBlock whether the request's capability, if it has one, is a raw block one
     * @return the volume as it is after the expansion
     */
    ManagedVolume expand(ManagedVolume volume, Path volumePath, PinnedMount mount, Csi.CapacityRange range,
                         boolean askedBlock) {
        boolean block = mount != null ? mount.isDeviceNode() : askedBlock;
        DeviceNumber before = DeviceNumber.of(volume.devicePath());
        if (!block && (mount == null || !mount.entry().device().equals(before))) {
            throw DriverException.notFound("volume " + volume.id() + " is not mounted at " + volumePath
                    + (mount == null ? "" : " (" + mount.entry().source() + " " + mount.entry().device() + " is)"));
        }
        if (range.getRequiredBytes() > volume.sizeBytes()) {
            // ControllerExpandVolume grows the LV first; this is for a resize begun before it did,
            // with the same check of the room before any change
            new VolumeExpansion(lvm).grow(volume.id(), range);
        }
        ManagedVolume grown = catalog.refresh(volume.id()).orElseThrow(() -> DriverException.notFound(
                "volume " + volume.id() + " vanished while it was being expanded"));
        DeviceNumber number = DeviceNumber.of(grown.devicePath());
        if (!block) {
            filesystems.grow(grown.devicePath(), mount.mounted(), FsType.fromCsi(mount.entry().fsType()));
        }
        // per-GiB limits follow the new size, for every pod using the volume now
        Optional<String> nodeRoot = block ? Optional.of(podLimits.deviceNodeRoot(grown.devicePath())) : Optional.empty();
        if (!grown.limits().isUnlimited()) {
            podLimits.reapply(number, nodeRoot, grown.limits());
        }
        return grown;
    }
}
