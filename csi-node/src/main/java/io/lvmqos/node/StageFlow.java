package io.lvmqos.node;

import csi.v1.Csi;
import io.lvmqos.device.BlockDeviceProbe;
import io.lvmqos.device.DeviceContents;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.device.Filesystems;
import io.lvmqos.device.FsType;
import io.lvmqos.errors.DriverException;
import io.lvmqos.mount.HostPath;
import io.lvmqos.mount.KubeletPaths;
import io.lvmqos.mount.MountEntry;
import io.lvmqos.mount.MountOptions;
import io.lvmqos.mount.MountTable;
import io.lvmqos.mount.Mounter;
import io.lvmqos.mount.PinnedMount;
import io.lvmqos.volume.ManagedVolume;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * NodeStageVolume's and NodeUnstageVolume's work, under the volume's lock that {@link NodeService}
 * holds: a filesystem volume formatted if blank and mounted at its staging path (grown to its LV
 * when restored or cloned larger), and unmounted from there.
 */
public final class StageFlow {

    private final KubeletPaths paths;
    private final Mounter mounter;
    private final MountTable mountTable;
    private final BlockDeviceProbe probe;
    private final Filesystems filesystems;
    private final ActiveDevices devices;

    public StageFlow(KubeletPaths paths, Mounter mounter, MountTable mountTable, BlockDeviceProbe probe,
              Filesystems filesystems, ActiveDevices devices) {
        this.paths = paths;
        this.mounter = mounter;
        this.mountTable = mountTable;
        this.probe = probe;
        this.filesystems = filesystems;
        this.devices = devices;
    }

    void stage(ManagedVolume volume, Path staging, Csi.VolumeCapability capability) {
        ActiveDevices.Device active = devices.of(volume);
        Path device = active.path();
        DeviceNumber number = active.number();
        // only what is at the staging path or of this device: the rest of the table is not parsed
        List<MountEntry> mounts = mountTable.selected(List.of(staging), Optional.of(number), false);
        Optional<MountEntry> mounted = MountTable.topAt(mounts, staging);
        if (mounted.isPresent()) {
            if (mounted.get().device().equals(number)) {
                return; // staged already: a retry
            }
            throw DriverException.alreadyExists("staging path " + staging + " is already mounted from "
                    + mounted.get().source() + " (" + mounted.get().device() + "), not from " + device);
        }
        Optional<Path> elsewhere = StagedElsewhere.find(mounts, number, staging, paths::isStagingPath);
        if (elsewhere.isPresent()) {
            throw DriverException.failedPrecondition("volume " + volume.id() + " is already staged at "
                    + elsewhere.get() + "; a volume is staged at one path per node: unstage it there first, or"
                    + " stage at that path");
        }
        FsType wanted = FsType.fromCsi(capability.getMount().getFsType());
        FsType type = switch (probe.probe(device)) {
            case DeviceContents.Blank blank -> {
                filesystems.format(device, wanted, readsAsZeros(volume) ? Filesystems.Contents.ZEROED
                        : Filesystems.Contents.UNKNOWN);
                yield wanted;
            }
            case DeviceContents.Filesystem fs -> existingType(volume, fs.type(), capability);
            case DeviceContents.PartitionTable table -> throw DriverException.failedPrecondition("volume "
                    + volume.id() + " holds a " + table.type() + " partition table; it will not be formatted or mounted");
            case DeviceContents.Other other -> throw DriverException.failedPrecondition("volume " + volume.id()
                    + " holds data that is not a filesystem (" + other.description() + "); it will not be formatted");
        };
        MountOptions options = MountOptions.parse(capability.getMount().getMountFlagsList());
        if (type == FsType.XFS && volume.hasSource()) {
            // a snapshot or clone carries its origin's XFS UUID, which XFS refuses to mount twice
            options = options.withData("nouuid");
        }
        paths.createDirectory(staging);
        mounter.mount(new HostPath(device), staging, type, options);
        if (volume.hasSource()) {
            // restored or cloned larger than its source: the filesystem still has the source's size
            try (PinnedMount mount = mounter.pin(staging).orElseThrow(() -> DriverException
                    .failedPrecondition("the volume " + volume.id() + " mounted at " + staging
                            + " a moment ago is no longer mounted there"))) {
                filesystems.grow(device, mount.mounted(), type);
            }
        }
    }

    void unstage(Path staging) {
        mounter.unmount(staging);
    }

    /**
     * True for a volume whose every byte reads as zero until something writes it: a thin LV made
     * empty (no snapshot or clone source) in a pool that zeroes the blocks it gives out, which the
     * driver requires of every pool it makes volumes in. Its blocks that nothing wrote read as zeros
     * from dm-thin, and a block first written in part is zeroed around the write. Before its first
     * stage nothing has written such a volume: a filesystem volume is formatted here, at its first
     * stage, and the blank device the probe found has no filesystem of anyone's.
     */
    static boolean readsAsZeros(ManagedVolume volume) {
        return volume.lv().isThin() && volume.lv().zeroing().orElse(false) && !volume.hasSource();
    }

    private static FsType existingType(ManagedVolume volume, String found, Csi.VolumeCapability capability) {
        FsType type;
        try {
            type = FsType.fromCsi(found);
        } catch (DriverException e) {
            throw DriverException.failedPrecondition("volume " + volume.id() + " holds a " + found
                    + " filesystem, which this driver does not mount (ext4, xfs)");
        }
        String asked = capability.getMount().getFsType();
        if (!asked.isEmpty() && FsType.fromCsi(asked) != type) {
            throw DriverException.failedPrecondition("volume " + volume.id() + " already holds a " + found
                    + " filesystem but " + asked + " was asked for; it will not be reformatted");
        }
        return type;
    }
}
