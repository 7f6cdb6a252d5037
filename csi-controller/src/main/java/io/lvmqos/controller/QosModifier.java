package io.lvmqos.controller;

import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.volume.Guarantee;
import io.lvmqos.volume.GuaranteePolicy;
import io.lvmqos.volume.KeyedLocks;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.PodLimitsApplier;
import io.lvmqos.volume.QosChange;
import io.lvmqos.volume.QosSpec;
import io.lvmqos.volume.VolumeCatalog;
import io.lvmqos.volume.VolumeId;
import io.lvmqos.volume.VolumeTags;
import java.util.List;

/**
 * Changes a volume's limits: durably in its LV tags, then live in the pods using it. The one path
 * for ControllerModifyVolume and for the node's VolumeAttributesClass watcher; under the same
 * per-LV lock as the provisioner's calls, so a change never interleaves with a resize or a delete.
 */
public final class QosModifier {

    private final Lvm lvm;
    private final VolumeCatalog catalog;
    private final KeyedLocks locks;
    private final PodLimitsApplier pods;
    private final GuaranteePolicy guarantees;

    public QosModifier(Lvm lvm, VolumeCatalog catalog, KeyedLocks locks, PodLimitsApplier pods,
                       GuaranteePolicy guarantees) {
        this.guarantees = guarantees;
        this.lvm = lvm;
        this.catalog = catalog;
        this.locks = locks;
        this.pods = pods;
    }

    /**
     * Puts the directions {@code change} names in place of the volume's limits (a lifted one is
     * removed from the tags), with one lvchange, and then rewrites the pods' lines. Directions it
     * does not name stay as they are; the same change twice is a no-op for LVM and rewrites the
     * same lines, so a retry after a failure finishes the job. A guarantee the node cannot keep,
     * or a floor raised beyond what the group's disk has left, is refused before anything changes.
     */
    public ManagedVolume modify(VolumeId id, QosChange change) {
        boolean raisesFloor = !change.guarantee().isEmpty();
        // the admission lock after the volume's, as CreateVolume takes them
        try (KeyedLocks.Held held = locks.lock(id.lvmPath());
             KeyedLocks.Held admission = raisesFloor ? locks.lock(VolumeProvisioner.admissionKey(id.volumeGroup())) : null) {
            ManagedVolume volume = lvm.logicalVolume(id.volumeGroup(), id.lvName())
                    .flatMap(lv -> ManagedVolume.from(catalog.node(), lv))
                    .filter(v -> v.id().kind() == VolumeId.Kind.VOLUME)
                    .orElseThrow(() -> DriverException.notFound("volume " + id + " does not exist"));
            QosSpec updated = volume.qos().changedBy(change);
            if (!updated.equals(volume.qos())) {
                Guarantee guarantee = updated.guarantee();
                guarantee.requireConsistent(updated.forSize(volume.sizeBytes()));
                if (guarantee.iopsNeeded() > volume.qos().guarantee().iopsNeeded()
                        || guarantee.bpsNeeded() > volume.qos().guarantee().bpsNeeded()) {
                    guarantees.admit(id.volumeGroup(), guarantee, GuaranteePolicy.guaranteesOf(catalog.node(),
                            lvm.logicalVolumes(id.volumeGroup()), id.lvName()));
                } else {
                    guarantees.requireSupported(id.volumeGroup(), guarantee);
                }
            }
            ManagedVolume modified = volume;
            if (updated.equals(volume.qos())) {
                // the lvs just read is the truth: no second one (each reads the whole VG's metadata)
                catalog.put(volume);
            } else {
                List<String> before = Lvm.tags(VolumeTags.qosTags(volume.qos()));
                List<String> after = Lvm.tags(VolumeTags.qosTags(updated));
                lvm.replaceTags(id.volumeGroup(), id.lvName(), before.stream().filter(t -> !after.contains(t)).toList(),
                        after.stream().filter(t -> !before.contains(t)).toList());
                modified = catalog.refresh(id).orElseThrow(() -> DriverException.notFound(
                        "volume " + id + " vanished while its limits were changed"));
            }
            pods.applyToPodsUsing(modified);
            return modified;
        }
    }
}
