package io.lvmqos.volume;

import io.lvmqos.errors.DriverException;
import io.lvmqos.lvm.LogicalVolume;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Which volume groups of this node can keep a {@link Guarantee}, and admission of floors against
 * the capacity the operator declared for each. Weights and floors work through io.cost, which
 * governs a whole disk and which the node plugin enables at start only on the disks of the
 * groups it is told (--io-cost); a guarantee anywhere else would be a promise nothing keeps, so
 * it is refused before anything is made.
 *
 * <p>The floors already promised are read from the LV tags of the group's volumes each time
 * (LVM is the only state), so a deleted volume frees its floor with its LV.
 */
public final class GuaranteePolicy {

    /** A node where no group has io.cost: every guarantee is refused with {@code why}. */
    public static GuaranteePolicy none(String why) {
        return new GuaranteePolicy(Set.of(), Map.of(), Map.of(), Optional.of(why));
    }

    /** A node told to enable io.cost nowhere: a guarantee is refused naming its group and the flag. */
    public static final GuaranteePolicy NONE = new GuaranteePolicy(Set.of(), Map.of(), Map.of(), Optional.empty());

    private final Set<String> ioCostGroups;
    private final Map<String, DiskCapacity> capacities;
    private final Map<String, String> groupRefusals;
    private final Optional<String> nodeRefusal;

    /**
     * @param ioCostGroups the groups whose disks have io.cost enabled by this plugin with a model it trusts
     * @param capacities each group's capacity for floors (groups left out have none)
     * @param groupRefusals groups the operator asked io.cost for that cannot keep a guarantee, each with why
     *        and what to do (no trusted model for its disk, say)
     * @param nodeRefusal why this node can keep no guarantee at all (cgroup v1, say), if so
     */
    public GuaranteePolicy(Set<String> ioCostGroups, Map<String, DiskCapacity> capacities,
                           Map<String, String> groupRefusals, Optional<String> nodeRefusal) {
        this.ioCostGroups = Set.copyOf(ioCostGroups);
        this.capacities = Map.copyOf(capacities);
        this.groupRefusals = Map.copyOf(groupRefusals);
        this.nodeRefusal = nodeRefusal;
    }

    /** The groups whose disks this plugin enabled io.cost on; empty on a node that keeps no guarantee. */
    public Set<String> ioCostGroups() {
        return nodeRefusal.isPresent() ? Set.of() : ioCostGroups;
    }

    public boolean ioCostEnabled(String volumeGroup) {
        return nodeRefusal.isEmpty() && ioCostGroups.contains(volumeGroup);
    }

    /** What floors on the group are admitted against; {@link DiskCapacity#UNDECLARED} when nothing is known. */
    public DiskCapacity declared(String volumeGroup) {
        return capacities.getOrDefault(volumeGroup, DiskCapacity.UNDECLARED);
    }

    public Set<String> declaredGroups() {
        return capacities.keySet();
    }

    /** Why the group keeps no guarantee though the operator asked io.cost for it, if so. */
    public Optional<String> refusalOf(String volumeGroup) {
        return Optional.ofNullable(groupRefusals.get(volumeGroup));
    }

    /**
     * Refuses, with FAILED_PRECONDITION, a guarantee this node cannot keep in this group: no
     * io.cost there, or a floor of a kind (operations, bytes) the group declares no capacity for.
     */
    public void requireSupported(String volumeGroup, Guarantee guarantee) {
        if (guarantee.isNone()) {
            return;
        }
        String asked = QosParameters.describe(guarantee);
        if (nodeRefusal.isPresent()) {
            throw DriverException.failedPrecondition("parameters " + asked + " cannot be kept on this node: "
                    + nodeRefusal.get() + "; remove them from the class, or use a node where they can be kept");
        }
        if (groupRefusals.containsKey(volumeGroup)) {
            throw DriverException.failedPrecondition("parameters " + asked + " cannot be kept on volume group "
                    + volumeGroup + " of this node: " + groupRefusals.get(volumeGroup));
        }
        if (!ioCostGroups.contains(volumeGroup)) {
            throw DriverException.failedPrecondition("parameters " + asked + " need io.cost on the disks of volume group "
                    + volumeGroup + ", which this node's plugin does not enable: start it with --io-cost=" + volumeGroup
                    + " (chart value ioCost.volumeGroups), or remove them from the class");
        }
        DiskCapacity capacity = declared(volumeGroup);
        if (guarantee.iopsNeeded() > 0 && capacity.iops().isEmpty()
                || guarantee.bpsNeeded() > 0 && capacity.bps().isEmpty()) {
            String kind = guarantee.iopsNeeded() > 0 && capacity.iops().isEmpty() ? "iops" : "bps";
            throw DriverException.failedPrecondition("parameters " + asked + " ask for a floor, but volume group "
                    + volumeGroup + " declares no " + (kind.equals("iops") ? "IOPS" : "bytes/s") + " capacity to admit it"
                    + " against (it declares " + capacity + "): start the plugin with --io-capacity=" + volumeGroup + ":"
                    + kind + "=N (chart value ioCost.capacity), N being what its disk does");
        }
    }

    /**
     * Admits {@code asked} beside the floors {@code promised} to the group's other volumes, or
     * refuses with RESOURCE_EXHAUSTED naming what is promised, asked and declared (with a
     * WaitForFirstConsumer class, the provisioner then tries another node).
     */
    public void admit(String volumeGroup, Guarantee asked, Collection<Guarantee> promised) {
        requireSupported(volumeGroup, asked);
        if (!asked.hasFloor()) {
            return;
        }
        DiskCapacity capacity = declared(volumeGroup);
        Promised already = promised(promised);
        // shares add over volumes, each floor counted against the capacity of its own direction
        double share = capacity.share(asked) + promised.stream().mapToDouble(capacity::share).sum();
        // a thousandth of slack: shares are sums of ratios, and a floor that fills the disk exactly fits
        if (share > 1.001) {
            throw DriverException.resourceExhausted("the floors on volume group " + volumeGroup + " would exceed the"
                    + " capacity of its disk: promised " + already + ", asked " + amounts(asked.iopsNeeded(),
                    asked.bpsNeeded()) + ", capacity " + capacity + " (" + Math.round(share * 100) + "% of it); ask for"
                    + " a smaller floor, free one by deleting a volume, or provision on another node");
        }
    }

    /**
     * The guarantees of a group's volumes (snapshots hold none) but one, from an lvs just read:
     * what is promised already.
     */
    public static List<Guarantee> guaranteesOf(String node, List<LogicalVolume> volumes, String exceptLv) {
        return volumes.stream()
                .filter(lv -> !lv.name().equals(exceptLv))
                .map(lv -> ManagedVolume.from(node, lv))
                .flatMap(Optional::stream)
                .filter(volume -> volume.id().kind() == VolumeId.Kind.VOLUME)
                .map(volume -> volume.qos().guarantee())
                .toList();
    }

    /** The floors promised to these volumes, both kinds summed. */
    public static Promised promised(Collection<Guarantee> guarantees) {
        long iops = 0;
        long bps = 0;
        for (Guarantee guarantee : guarantees) {
            iops += guarantee.iopsNeeded();
            bps += guarantee.bpsNeeded();
        }
        return new Promised(iops, bps);
    }

    /** Floors summed over volumes, per kind. */
    public record Promised(long iops, long bps) {
        @Override
        public String toString() {
            return amounts(iops, bps);
        }
    }

    private static String amounts(long iops, long bps) {
        if (bps == 0) {
            return iops + " IOPS";
        }
        return iops == 0 ? bps + " bytes/s" : iops + " IOPS and " + bps + " bytes/s";
    }
}
