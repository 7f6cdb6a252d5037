package io.lvmqos.metadata;

import csi.v1.Csi;
import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.lvm.ThinDevice;
import io.lvmqos.lvm.ThinPools;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.VolumeId;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Answers SnapshotMetadata's two questions from a thin pool's metadata: which chunks a snapshot has
 * allocated, and in which chunks two snapshots of one volume differ. The pool's metadata snapshot,
 * its one frozen copy of the mappings, is {@link ThinPools}'s: a read runs inside it, and reads of
 * one pool take turns there with every other use of it.
 */
public final class SnapshotMetadataReader {

    /** A snapshot (or volume) resolved to its thin device, with the volume it was taken of. */
    public record Resolved(VolumeId id, ThinDevice device, String volume) {
    }

    private final Lvm lvm;
    private final ThinPoolMetadata metadata;
    private final ThinPools pools;
    private final String node;
    private final List<String> volumeGroups;

    public SnapshotMetadataReader(Lvm lvm, ThinPoolMetadata metadata, String node, List<String> volumeGroups) {
        this.lvm = lvm;
        this.metadata = metadata;
        this.pools = lvm.thinPools();
        this.node = node;
        this.volumeGroups = List.copyOf(volumeGroups);
    }

    /**
     * The thin device behind a snapshot id (a volume id is taken too, as the live side of a delta).
     * NOT_FOUND for ids this node did not issue or whose LV is gone, FAILED_PRECONDITION for a linear LV.
     */
    public Resolved resolve(String field, String text) {
        Optional<VolumeId> parsed = VolumeId.parse(VolumeId.Kind.SNAPSHOT, text)
                .or(() -> VolumeId.parse(VolumeId.Kind.VOLUME, text));
        VolumeId id = parsed.filter(i -> i.isOn(node) && volumeGroups.contains(i.volumeGroup()))
                .orElseThrow(() -> DriverException.notFound(field + " " + Echo.of(text) + " is not a snapshot on node "
                        + node));
        LogicalVolume lv = lvm.logicalVolume(id.volumeGroup(), id.lvName())
                .orElseThrow(() -> DriverException.notFound(field + " " + id + " does not exist"));
        ManagedVolume managed = ManagedVolume.from(node, lv)
                .orElseThrow(() -> DriverException.notFound(field + " " + id + " does not exist"));
        if (!lv.isThin()) {
            throw DriverException.failedPrecondition(field + " " + id + " is on a linear LV: changed-block metadata"
                    + " needs a thin LV, whose pool maps its blocks (StorageClass parameter lvmType=thin)");
        }
        ThinDevice device = lvm.thinDevices(id.volumeGroup()).stream().filter(d -> d.name().equals(lv.name()))
                .findFirst().orElseThrow(() -> DriverException.notFound(field + " " + id + " vanished while it was read"));
        String volume = id.kind() == VolumeId.Kind.VOLUME ? id.toString() : managed.source().orElse("");
        return new Resolved(id, device, volume);
    }

    /** Pages of the chunks the snapshot has allocated, from {@code startingOffset} on. */
    public void allocated(Resolved snapshot, long startingOffset, int maxResults,
                          Consumer<List<Csi.BlockMetadata>> pages) {
        ThinDevice device = snapshot.device();
        requireWithin(device, startingOffset);
        BlockPager pager = new BlockPager(device.chunkBytes(), device.sizeBytes(), startingOffset, maxResults, pages);
        pools.readingMetadataSnapshot(device.volumeGroup(), device.pool(),
                frozen -> metadata.mappings(frozen, device.thinId(), pager));
        pager.finish();
    }

    /** Pages of the chunks in which {@code target} differs from {@code base}, from {@code startingOffset} on. */
    public void delta(Resolved base, Resolved target, long startingOffset, int maxResults,
                      Consumer<List<Csi.BlockMetadata>> pages) {
        if (!base.device().pool().equals(target.device().pool()) || !base.device().volumeGroup()
                .equals(target.device().volumeGroup()) || base.volume().isEmpty()
                || !base.volume().equals(target.volume())) {
            throw DriverException.invalidArgument("base " + base.id() + " and target " + target.id() + " are not "
                    + "snapshots of one volume (of " + describe(base) + " and " + describe(target) + ")");
        }
        ThinDevice device = target.device();
        requireWithin(device, startingOffset);
        BlockPager pager = new BlockPager(device.chunkBytes(), device.sizeBytes(), startingOffset, maxResults, pages);
        pools.readingMetadataSnapshot(device.volumeGroup(), device.pool(),
                frozen -> metadata.delta(frozen, base.device().thinId(), device.thinId(), pager));
        pager.finish();
    }

    private static String describe(Resolved resolved) {
        return resolved.volume().isEmpty() ? "no recorded volume" : resolved.volume();
    }

    private static void requireWithin(ThinDevice device, long startingOffset) {
        if (startingOffset < 0 || startingOffset >= device.sizeBytes()) {
            throw DriverException.outOfRange("starting_offset " + startingOffset + " is outside the " + device.sizeBytes()
                    + " bytes of " + device.volumeGroup() + "/" + device.name());
        }
    }
}
