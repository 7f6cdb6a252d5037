package io.lvmqos.volume;

import io.lvmqos.lvm.LogicalVolume;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A volume or snapshot this driver made, as read back from its LV and tags. Everything here is
 * derived from LVM: nothing is remembered that LVM does not also say.
 */
public record ManagedVolume(VolumeId id, String csiName, LogicalVolume lv, long requestedBytes,
                            String parametersDigest, QosSpec qos, Optional<String> source) {

    /** Reads a managed volume back from its LV, or empty when the LV is not one of ours. */
    public static Optional<ManagedVolume> from(String node, LogicalVolume lv) {
        VolumeId.Kind kind;
        if (LvmNames.isVolumeLvName(lv.name())) {
            kind = VolumeId.Kind.VOLUME;
        } else if (LvmNames.isSnapshotLvName(lv.name())) {
            kind = VolumeId.Kind.SNAPSHOT;
        } else {
            return Optional.empty();
        }
        Optional<String> name = lv.tag(VolumeTags.NAME).flatMap(VolumeTags::decodeName);
        if (name.isEmpty()) {
            return Optional.empty();
        }
        long requested = lv.tag(VolumeTags.REQUESTED_BYTES).map(Long::parseLong).orElse(lv.sizeBytes());
        return Optional.of(new ManagedVolume(VolumeId.issue(kind, node, lv.volumeGroup(), lv.name()), name.get(), lv,
                requested, lv.tag(VolumeTags.PARAMETERS).orElse(""), VolumeTags.qosOf(lv.tags()),
                lv.tag(VolumeTags.SOURCE)));
    }

    public long sizeBytes() {
        return lv.sizeBytes();
    }

    public Path devicePath() {
        return lv.devicePath();
    }

    /** The limits in force now, per-GiB limits computed from the LV's current size. */
    public IoLimits limits() {
        return qos.forSize(lv.sizeBytes());
    }

    /** The same volume with other limits, as it reads once its tags say {@code qos}. */
    public ManagedVolume withQos(QosSpec qos) {
        return new ManagedVolume(id, csiName, lv, requestedBytes, parametersDigest, qos, source);
    }

    /** True when the volume was made from a snapshot or another volume (its filesystem shares a UUID). */
    public boolean hasSource() {
        return source.isPresent();
    }
}
