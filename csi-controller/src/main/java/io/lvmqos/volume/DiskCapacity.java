package io.lvmqos.volume;

import java.util.OptionalLong;

/**
 * What the operator declares a volume group's disk can do, the budget floors are admitted
 * against: I/O operations per second, bytes per second, or both. Nothing measures it: the
 * operator knows the disk (or its model for io.cost), and a floor is only as true as this figure.
 */
public record DiskCapacity(OptionalLong iops, OptionalLong bps) {

    public static final DiskCapacity UNDECLARED = new DiskCapacity(OptionalLong.empty(), OptionalLong.empty());

    public DiskCapacity {
        if (iops.isPresent() && iops.getAsLong() <= 0 || bps.isPresent() && bps.getAsLong() <= 0) {
            throw new IllegalArgumentException("a declared capacity must be positive: iops " + iops + ", bps " + bps);
        }
    }

    public boolean isDeclared() {
        return iops.isPresent() || bps.isPresent();
    }

    /**
     * The share of the disk a guarantee's floors take, 0 for none: each kind's floor over its
     * capacity, added, because reads and writes, operations and bytes all spend the same device
     * time. A floor of a kind with no declared capacity is not counted here; {@link GuaranteePolicy}
     * refuses it before.
     */
    public double share(Guarantee guarantee) {
        double share = 0;
        if (guarantee.iopsNeeded() > 0 && iops.isPresent()) {
            share += (double) guarantee.iopsNeeded() / iops.getAsLong();
        }
        if (guarantee.bpsNeeded() > 0 && bps.isPresent()) {
            share += (double) guarantee.bpsNeeded() / bps.getAsLong();
        }
        return share;
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder();
        iops.ifPresent(v -> text.append(v).append(" IOPS"));
        bps.ifPresent(v -> text.append(text.isEmpty() ? "" : " and ").append(v).append(" bytes/s"));
        return text.isEmpty() ? "nothing" : text.toString();
    }
}
