package io.lvmqos.node;

import csi.v1.Csi;
import io.lvmqos.volume.VolumeId;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What NodeGetVolumeStats last found for each volume, for the metrics. Finding it reads from the
 * device (see {@link VolumeStats}), which a scrape of hundreds of volumes must not do; kubelet asks
 * about once a minute per volume, so this is at most that old. Kept in memory only: after a
 * restart a volume has no condition until kubelet asks again.
 */
public final class VolumeConditions {

    private final Map<VolumeId, Boolean> abnormal = new ConcurrentHashMap<>();

    void record(VolumeId volume, Csi.VolumeCondition condition) {
        abnormal.put(volume, condition.getAbnormal());
    }

    /** Whether the volume was abnormal when last asked; empty when it has not been asked since the start. */
    public Optional<Boolean> abnormal(VolumeId volume) {
        return Optional.ofNullable(abnormal.get(volume));
    }
}
