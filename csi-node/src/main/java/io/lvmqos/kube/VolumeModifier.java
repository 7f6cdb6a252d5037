package io.lvmqos.kube;

import io.lvmqos.controller.QosModifier;
import io.lvmqos.volume.QosParameters;
import io.lvmqos.volume.VolumeId;
import java.util.Map;

/**
 * Applies a VolumeAttributesClass's parameters to a volume of this node, as ControllerModifyVolume
 * does. Must be idempotent: the watcher applies again after a restart, and after a failure.
 */
@FunctionalInterface
public interface VolumeModifier {

    /**
     * @param mutableParameters already checked with {@link QosParameters#parseMutable}
     * @throws io.lvmqos.errors.DriverException as ControllerModifyVolume would answer
     */
    void modify(VolumeId volume, Map<String, String> mutableParameters);

    /** ControllerModifyVolume's own path: LV tags, then the cgroup lines of the pods using the volume. */
    static VolumeModifier of(QosModifier qos) {
        return (volume, mutableParameters) -> qos.modify(volume, QosParameters.parseMutable(mutableParameters));
    }
}
