package io.lvmqos.volume;

import java.util.OptionalLong;

/**
 * What a volume group's disk can do, the budget floors are admitted against, per direction: I/O
 * operations per second and bytes per second, for reads and for writes. On a node with io.cost it
 * is the disk's cost model (random IOPS, sequential bytes per second) scaled by the lowest vrate
 * io.cost may run at, so that admission promises no more than io.cost will issue; an operator's
 * {@code --io-capacity} then only checks it. A floor is only as true as this figure.
 *
 * <p>Each kind (operations, bytes) is known for both directions or for neither.
 */
public record DiskCapacity(OptionalLong readIops, OptionalLong writeIops, OptionalLong readBps,
                           OptionalLong writeBps) {

    public static final DiskCapacity UNDECLARED = new DiskCapacity(OptionalLong.empty(), OptionalLong.empty(),
            OptionalLong.empty(), OptionalLong.empty());

    public DiskCapacity {
        for (OptionalLong value : new OptionalLong[] {readIops, writeIops, readBps, writeBps}) {
            if (value.isPresent() && value.getAsLong() <= 0) {
                throw new IllegalArgumentException("a capacity must be positive: " + value.getAsLong());
            }
        }
        if (readIops.isPresent() != writeIops.isPresent() || readBps.isPresent() != writeBps.isPresent()) {
            throw new IllegalArgumentException("a capacity gives a kind for both directions or for neither");
        }
    }

    /** The same figures for reads and writes, as --io-capacity declares them. */
    public static DiskCapacity symmetric(OptionalLong iops, OptionalLong bps) {
        return new DiskCapacity(iops, iops, bps, bps);
    }

    public boolean isDeclared() {
        return readIops.isPresent() || readBps.isPresent();
    }

    /** The operations per second of the slower direction: what a floor for both directions is counted against. */
    public OptionalLong iops() {
        return readIops.isPresent() ? OptionalLong.of(Math.min(readIops.getAsLong(), writeIops.getAsLong()))
                : OptionalLong.empty();
    }

    /** The bytes per second of the slower direction. */
    public OptionalLong bps() {
        return readBps.isPresent() ? OptionalLong.of(Math.min(readBps.getAsLong(), writeBps.getAsLong()))
                : OptionalLong.empty();
    }

    /**
     * The share of the disk a guarantee's floors take, 0 for none: each floor over the capacity of
     * its direction, added, because reads and writes, operations and bytes all spend the same device
     * time. A floor for both directions is counted against the slower one, since the pod may spend
     * it all there. A floor of a kind with no capacity is not counted here; {@link GuaranteePolicy}
     * refuses it before.
     */
    public double share(Guarantee guarantee) {
        return part(guarantee.readIopsFloor(), readIops) + part(guarantee.writeIopsFloor(), writeIops)
                + part(guarantee.iopsFloor(), iops()) + part(guarantee.readBpsFloor(), readBps)
                + part(guarantee.writeBpsFloor(), writeBps) + part(guarantee.bpsFloor(), bps());
    }

    private static double part(OptionalLong floor, OptionalLong capacity) {
        return floor.isPresent() && capacity.isPresent() ? (double) floor.getAsLong() / capacity.getAsLong() : 0;
    }

    /**
     * How far {@code other} is from this capacity, as a fraction of this one: the largest relative
     * difference over the figures both give; 0 when they share none.
     */
    public double differenceFrom(DiskCapacity other) {
        double worst = 0;
        worst = Math.max(worst, relative(iops(), other.iops()));
        worst = Math.max(worst, relative(bps(), other.bps()));
        return worst;
    }

    private static double relative(OptionalLong mine, OptionalLong theirs) {
        if (mine.isEmpty() || theirs.isEmpty()) {
            return 0;
        }
        return Math.abs((double) theirs.getAsLong() - mine.getAsLong()) / mine.getAsLong();
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder();
        if (readIops.isPresent()) {
            text.append(readIops.equals(writeIops) ? readIops.getAsLong() + " IOPS"
                    : readIops.getAsLong() + " read IOPS, " + writeIops.getAsLong() + " write IOPS");
        }
        if (readBps.isPresent()) {
            text.append(text.isEmpty() ? "" : " and ").append(readBps.equals(writeBps) ? readBps.getAsLong() + " bytes/s"
                    : readBps.getAsLong() + " read bytes/s, " + writeBps.getAsLong() + " write bytes/s");
        }
        return text.isEmpty() ? "nothing" : text.toString();
    }
}
