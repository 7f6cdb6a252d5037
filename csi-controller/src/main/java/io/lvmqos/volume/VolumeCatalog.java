package io.lvmqos.volume;

import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.Lvm;
import io.lvmqos.lvm.VolumeGroupContents;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The process's index of its volumes, so that the node's publish path runs no lvm command. It
 * is a cache of LVM, never a second truth: built from lvs at start, updated by this process's own
 * controller operations, and refreshed from lvs for any id it does not know.
 */
public final class VolumeCatalog {

    private final Lvm lvm;
    private final String node;
    private final List<String> volumeGroups;
    private final ConcurrentMap<VolumeId, ManagedVolume> volumes = new ConcurrentHashMap<>();

    public VolumeCatalog(Lvm lvm, String node, List<String> volumeGroups) {
        this.lvm = lvm;
        this.node = node;
        this.volumeGroups = List.copyOf(volumeGroups);
    }

    /**
     * Reads every managed LV of every volume group, and returns them; groups that do not exist
     * are skipped. One lvs per group (it reports the group too): with hundreds of LVs each lvm
     * command reads the whole metadata, about half a second in a one-CPU node, and this runs at
     * every start.
     */
    public List<ManagedVolume> reload() {
        List<ManagedVolume> read = new ArrayList<>();
        for (String vg : volumeGroups) {
            Optional<VolumeGroupContents> contents = lvm.contents(vg);
            if (contents.isEmpty()) {
                continue;
            }
            for (LogicalVolume lv : contents.get().volumes()) {
                ManagedVolume.from(node, lv).ifPresent(volume -> {
                    put(volume);
                    read.add(volume);
                });
            }
        }
        return read;
    }

    public String node() {
        return node;
    }

    public List<String> volumeGroups() {
        return volumeGroups;
    }

    /** The volume, from the index or else from LVM; empty when it does not exist here. */
    public Optional<ManagedVolume> find(VolumeId id) {
        if (!id.isOn(node) || !volumeGroups.contains(id.volumeGroup())) {
            return Optional.empty();
        }
        ManagedVolume known = volumes.get(id);
        if (known != null) {
            return Optional.of(known);
        }
        return refresh(id);
    }

    /** The volume as the index holds it, with no lvm: empty when the index does not know it. */
    public Optional<ManagedVolume> indexed(VolumeId id) {
        return Optional.ofNullable(volumes.get(id));
    }

    /** Re-reads one volume from LVM (after a change of size or tags) and indexes it. */
    public Optional<ManagedVolume> refresh(VolumeId id) {
        Optional<ManagedVolume> read = lvm.logicalVolume(id.volumeGroup(), id.lvName())
                .flatMap(lv -> ManagedVolume.from(node, lv))
                .filter(volume -> volume.id().kind() == id.kind());
        read.ifPresentOrElse(this::put, () -> volumes.remove(id));
        return read;
    }

    /**
     * The volumes indexed now, with no lvm: every volume read at start and every one looked up or
     * changed since (a volume published on this node has been looked up).
     */
    public List<ManagedVolume> indexed() {
        return List.copyOf(volumes.values());
    }

    public void put(ManagedVolume volume) {
        volumes.put(volume.id(), volume);
    }

    public void forget(VolumeId id) {
        volumes.remove(id);
    }

    /** Every managed LV of one kind, read from LVM now, in id order (the order pagination needs). */
    public List<ManagedVolume> list(VolumeId.Kind kind) {
        List<ManagedVolume> found = new ArrayList<>();
        for (String vg : volumeGroups) {
            if (lvm.volumeGroup(vg).isEmpty()) {
                continue;
            }
            for (LogicalVolume lv : lvm.logicalVolumes(vg)) {
                ManagedVolume.from(node, lv).filter(v -> v.id().kind() == kind).ifPresent(v -> {
                    put(v);
                    found.add(v);
                });
            }
        }
        found.sort(Comparator.comparing(v -> v.id().toString()));
        return found;
    }
}
