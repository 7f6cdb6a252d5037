package io.lvmqos.metrics;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.DeviceMapperName;
import io.lvmqos.mount.MountEntry;
import io.lvmqos.mount.MountTable;
import io.lvmqos.node.PodUid;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.VolumeId;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which of our volumes are published into which pods, read from the mount table when asked: the
 * publish bind mounts below the kubelet directory name the pod, their device number (or, for a
 * block volume, the device node they bind) names the dm device, and its dm name names the LV. No
 * lvm command runs; the volume itself comes from the process's catalog.
 */
final class PublishedVolumes {

    /** One volume in one pod, with the device number its I/O is counted under. */
    record PodVolume(ManagedVolume volume, String podUid, DeviceNumber device) {
    }

    private static final Logger log = LoggerFactory.getLogger(PublishedVolumes.class);

    private final MountTable mountTable;
    private final Path kubeletDir;
    private final Path devDir;
    private final SysBlock sysBlock;
    private final String node;
    private final List<String> volumeGroups;
    private final Function<VolumeId, Optional<ManagedVolume>> volumes;

    /**
     * @param kubeletDir the kubelet directory as the mount table spells it (its real path)
     * @param devDir where the host's devtmpfs is mounted in this process, usually /dev
     * @param volumes the catalog's lookup, which answers from its index for every volume this
     *     process has created, staged or indexed at start; only for a volume it has never seen
     *     (a scrape before the start-up index is built) does it run lvs, once, and remember it
     */
    PublishedVolumes(MountTable mountTable, Path kubeletDir, Path devDir, SysBlock sysBlock, String node,
                     List<String> volumeGroups, Function<VolumeId, Optional<ManagedVolume>> volumes) {
        this.mountTable = mountTable;
        this.kubeletDir = kubeletDir;
        this.devDir = devDir;
        this.sysBlock = sysBlock;
        this.node = node;
        this.volumeGroups = List.copyOf(volumeGroups);
        this.volumes = volumes;
    }

    /** Every (volume, pod) pair published now, each once, in mount table order. */
    List<PodVolume> list() {
        Map<String, PodVolume> found = new LinkedHashMap<>();
        for (MountEntry entry : mountTable.read()) {
            if (!entry.mountPoint().startsWith(kubeletDir)) {
                continue;
            }
            Optional<String> pod = PodUid.fromTargetPath(entry.mountPoint(), kubeletDir);
            if (pod.isEmpty()) {
                continue; // a staging mount, or kubelet's own
            }
            try {
                Optional<DeviceNumber> device = isDeviceNodeBind(entry) ? deviceNode(entry) : Optional.of(entry.device());
                if (device.isPresent()) {
                    volumeOn(device.get()).ifPresent(volume -> found.putIfAbsent(volume.id() + " " + pod.get(),
                            new PodVolume(volume, pod.get(), device.get())));
                }
            } catch (RuntimeException e) {
                log.debug("metrics: skipping the mount at {}: {}", entry.mountPoint(), e.toString());
            }
        }
        return new ArrayList<>(found.values());
    }

    private Optional<ManagedVolume> volumeOn(DeviceNumber device) {
        return sysBlock.dmName(device)
                .flatMap(DeviceMapperName::parse)
                .filter(dm -> volumeGroups.contains(dm.volumeGroup()) && LvmNames.isVolumeLvName(dm.logicalVolume()))
                .flatMap(this::volumeId)
                .flatMap(volumes);
    }

    private Optional<VolumeId> volumeId(DeviceMapperName dm) {
        try {
            return Optional.of(VolumeId.issue(VolumeId.Kind.VOLUME, node, dm.volumeGroup(), dm.logicalVolume()));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** A raw block volume is published as a bind mount of its device node out of devtmpfs. */
    private static boolean isDeviceNodeBind(MountEntry entry) {
        return "devtmpfs".equals(entry.fsType()) && !entry.root().equals("/");
    }

    private Optional<DeviceNumber> deviceNode(MountEntry entry) {
        Path relative = Path.of(entry.root().substring(1));
        if (relative.isAbsolute() || !relative.normalize().equals(relative) || relative.startsWith("..")) {
            return Optional.empty();
        }
        try {
            return Optional.of(DeviceNumber.of(devDir.resolve(relative)));
        } catch (DriverException e) {
            return Optional.empty(); // gone, or not a block device
        }
    }
}
