package io.lvmqos.controller;

import csi.v1.Csi;
import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.lvm.VolumeGroup;
import io.lvmqos.lvm.VolumeGroupContents;
import io.lvmqos.volume.Quantity;
import io.lvmqos.volume.VolumeId;
import io.lvmqos.volume.VolumeTags;
import java.math.BigDecimal;

/**
 * Grows a volume's LV, and refuses before any change when its volume group or thin pool lacks the
 * room, so that a refused expansion leaves the LV exactly as it was. The caller holds the volume's
 * lock. Used by ControllerExpandVolume, and by NodeExpandVolume for an LV that the controller side
 * has not grown (a resize started before the controller advertised expansion).
 *
 * <p>Two codes for two meanings: OUT_OF_RANGE when the size can never fit (larger than the whole
 * volume group, or than the pool times its ratio; or no whole number of extents within
 * limit_bytes), RESOURCE_EXHAUSTED when it would fit but the room is taken now, so that a retry
 * after space is freed can succeed.
 */
public final class VolumeExpansion {

    private final Lvm lvm;

    public VolumeExpansion(Lvm lvm) {
        this.lvm = lvm;
    }

    /**
     * The LV at least {@code range.required_bytes} large: as it is when it already is (no lvextend),
     * otherwise extended to the size rounded up to whole extents within {@code limit_bytes}.
     */
    public LogicalVolume grow(VolumeId id, Csi.CapacityRange range) {
        CapacityRequest request = CapacityRequest.of(range);
        VolumeGroupContents contents = lvm.contents(id.volumeGroup()).orElseThrow(() -> DriverException.notFound(
                "volume " + id + " does not exist: volume group " + id.volumeGroup() + " not found"));
        LogicalVolume lv = contents.find(id.lvName())
                .orElseThrow(() -> DriverException.notFound("volume " + id + " does not exist"));
        if (request.requiredBytes() <= lv.sizeBytes()) {
            return lv;
        }
        VolumeGroup group = contents.group();
        long size = request.sizeFor(group.extentSizeBytes());
        long growth = size - lv.sizeBytes();
        if (lv.isThin()) {
            checkPool(contents, lv, size, growth);
        } else if (growth > group.freeBytes()) {
            String room = "volume group " + group.name() + " has " + group.freeBytes() + " bytes free of "
                    + group.sizeBytes() + "; growing " + lv.lvmPath() + " from " + lv.sizeBytes() + " to " + size
                    + " bytes needs " + growth;
            if (size > group.sizeBytes()) {
                throw DriverException.outOfRange(room + ", more than the whole group could give");
            }
            throw DriverException.resourceExhausted(room);
        }
        lvm.extend(id.volumeGroup(), id.lvName(), size);
        return lvm.logicalVolume(id.volumeGroup(), id.lvName()).orElseThrow(() -> DriverException.notFound(
                "volume " + id + " vanished while it was being expanded"));
    }

    private static void checkPool(VolumeGroupContents contents, LogicalVolume lv, long size, long growth) {
        String poolName = lv.pool().orElseThrow(() -> DriverException.internal("thin LV " + lv.lvmPath()
                + " has no pool in lvm's report"));
        LogicalVolume pool = VolumeProvisioner.thinPool(contents, poolName);
        ThinPoolRoom room = ThinPoolRoom.of(pool, contents.volumes(), ratioOf(lv));
        if (growth > room.availableBytes()) {
            String said = "thin pool " + pool.lvmPath() + " can take " + room.availableBytes() + " more bytes ("
                    + room.describe() + "); growing " + lv.lvmPath() + " from " + lv.sizeBytes() + " to " + size
                    + " bytes needs " + growth;
            if (size > room.ceilingBytes()) {
                throw DriverException.outOfRange(said + ", more than the pool may ever promise one volume");
            }
            throw DriverException.resourceExhausted(said + ": grow the pool (lvextend " + pool.lvmPath()
                    + ") or free room in it");
        }
    }

    /** The ratio recorded when the volume was made; 1 for volumes from before it was recorded. */
    static BigDecimal ratioOf(LogicalVolume lv) {
        return lv.tag(VolumeTags.OVERPROVISION_RATIO).flatMap(Quantity::parse)
                .filter(ratio -> ratio.compareTo(BigDecimal.ONE) >= 0).orElse(BigDecimal.ONE);
    }
}
