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
import java.util.Optional;

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
     * removed from the tags), with one lvchange, and rewrites the pods' lines. Directions it does
     * not name stay as they are; the same change twice is a no-op for LVM and rewrites the same
     * lines, so a retry after a failure finishes the job. A guarantee the node cannot keep, or a
     * floor raised beyond what the group's disk has left, is refused before anything changes.
     *
     * <p>The pods feel the change first, from the index, and LVM records it after: the lvs and
     * lvchange that make it durable take a second or more on a slow node, and a class change is
     * promised to running pods within one. If making it durable fails, the pods get back the limits
     * LVM holds, so what is in force never differs from the tags once the call returns. A floor
     * raised is the exception: it is admitted against the whole group as lvs reads it before any
     * pod sees it.
     */
    public ManagedVolume modify(VolumeId id, QosChange change) {
        boolean changesGuarantee = !change.guarantee().isEmpty();
        // the admission lock after the volume's, as CreateVolume takes them
        try (KeyedLocks.Held held = locks.lock(id.lvmPath());
             KeyedLocks.Held admission = changesGuarantee
                     ? locks.lock(VolumeProvisioner.admissionKey(id.volumeGroup())) : null) {
            Optional<ManagedVolume> early = applyFromIndex(id, change);
            try {
                ManagedVolume modified = makeDurable(id, change);
                // the lines are written again only if LVM's truth differs from what the index gave
                if (early.isEmpty() || !sameLimitsInForce(early.get(), modified)) {
                    pods.applyToPodsUsing(modified);
                }
                return modified;
            } catch (RuntimeException e) {
                if (early.isPresent()) {
                    catalog.refresh(id).ifPresent(pods::applyToPodsUsing);
                }
                throw e;
            }
        }
    }

    /**
     * Rewrites the pods' lines from the indexed volume with {@code change} applied, when the index
     * knows the volume and the change passes every check that needs no lvm; the volume as applied,
     * or empty when nothing was. A floor raised needs the whole group's lvs, and waits for it.
     */
    private Optional<ManagedVolume> applyFromIndex(VolumeId id, QosChange change) {
        Optional<ManagedVolume> known = catalog.indexed(id).filter(v -> v.id().kind() == VolumeId.Kind.VOLUME);
        if (known.isEmpty()) {
            return Optional.empty();
        }
        ManagedVolume volume = known.get();
        QosSpec updated = volume.qos().changedBy(change);
        if (updated.equals(volume.qos()) || raisesFloor(volume.qos(), updated)) {
            return Optional.empty();
        }
        updated.guarantee().requireConsistent(updated.forSize(volume.sizeBytes()));
        guarantees.requireSupported(id.volumeGroup(), updated.guarantee());
        ManagedVolume applied = volume.withQos(updated);
        pods.applyToPodsUsing(applied);
        return Optional.of(applied);
    }

    /** Whether the pods' lines for the two readings of a volume are the same: same device, limits and guarantee. */
    private static boolean sameLimitsInForce(ManagedVolume a, ManagedVolume b) {
        return a.qos().equals(b.qos()) && a.sizeBytes() == b.sizeBytes() && a.devicePath().equals(b.devicePath());
    }

    private ManagedVolume makeDurable(VolumeId id, QosChange change) {
        ManagedVolume volume = lvm.logicalVolume(id.volumeGroup(), id.lvName())
                .flatMap(lv -> ManagedVolume.from(catalog.node(), lv))
                .filter(v -> v.id().kind() == VolumeId.Kind.VOLUME)
                .orElseThrow(() -> DriverException.notFound("volume " + id + " does not exist"));
        QosSpec updated = volume.qos().changedBy(change);
        if (updated.equals(volume.qos())) {
            // the lvs just read is the truth: no second one (each reads the whole VG's metadata)
            catalog.put(volume);
            return volume;
        }
        Guarantee guarantee = updated.guarantee();
        guarantee.requireConsistent(updated.forSize(volume.sizeBytes()));
        if (raisesFloor(volume.qos(), updated)) {
            guarantees.admit(id.volumeGroup(), guarantee, GuaranteePolicy.guaranteesOf(catalog.node(),
                    lvm.logicalVolumes(id.volumeGroup()), id.lvName()));
        } else {
            guarantees.requireSupported(id.volumeGroup(), guarantee);
        }
        List<String> before = Lvm.tags(VolumeTags.qosTags(volume.qos()));
        List<String> after = Lvm.tags(VolumeTags.qosTags(updated));
        lvm.replaceTags(id.volumeGroup(), id.lvName(), before.stream().filter(t -> !after.contains(t)).toList(),
                after.stream().filter(t -> !before.contains(t)).toList());
        return catalog.refresh(id).orElseThrow(() -> DriverException.notFound(
                "volume " + id + " vanished while its limits were changed"));
    }

    private static boolean raisesFloor(QosSpec before, QosSpec after) {
        return after.guarantee().iopsNeeded() > before.guarantee().iopsNeeded()
                || after.guarantee().bpsNeeded() > before.guarantee().bpsNeeded();
    }
}
