package io.lvmqos.controller;

import io.lvmqos.lvm.LogicalVolume;
import java.math.BigDecimal;
import java.util.List;

/**
 * How much a thin pool can still promise. Two bounds, the smaller wins: the pool's size times the
 * over-provisioning ratio less the sizes of the thin LVs already in it, and the pool's data space
 * not yet written, times the same ratio. The second matters once data fills the pool: promises far
 * below the ratio would otherwise still admit new volumes into a pool that is nearly full. In an
 * empty pool both bounds are equal, so one volume may be larger than the pool when the ratio allows.
 *
 * @param poolBytes     the pool's data size
 * @param usedBytes     the data the pool has already allocated ({@code data_percent} of its size)
 * @param promisedBytes the virtual sizes of its thin LVs, snapshots included
 * @param ratio         how far the pool may be over-provisioned, at least 1
 */
record ThinPoolRoom(long poolBytes, long usedBytes, long promisedBytes, BigDecimal ratio) {

    ThinPoolRoom {
        if (poolBytes < 0 || usedBytes < 0 || promisedBytes < 0 || ratio.compareTo(BigDecimal.ONE) < 0) {
            throw new IllegalArgumentException("pool " + poolBytes + ", used " + usedBytes + ", promised "
                    + promisedBytes + ", ratio " + ratio);
        }
    }

    static ThinPoolRoom of(LogicalVolume pool, List<LogicalVolume> lvs, BigDecimal ratio) {
        long promised = lvs.stream().filter(lv -> lv.isThin() && pool.name().equals(lv.pool().orElse("")))
                .mapToLong(LogicalVolume::sizeBytes).sum();
        double percent = pool.dataPercent().orElse(0);
        long used = Math.min(pool.sizeBytes(), (long) Math.ceil(pool.sizeBytes() * percent / 100));
        return new ThinPoolRoom(pool.sizeBytes(), used, promised, ratio);
    }

    /**
     * The same pool as if its thin LVs had since written all they may (their sizes, at most the
     * pool): the room that holds whatever was written after {@code usedBytes} was read.
     */
    ThinPoolRoom assumingAllPromisedWritten() {
        return new ThinPoolRoom(poolBytes, Math.max(usedBytes, Math.min(poolBytes, promisedBytes)), promisedBytes,
                ratio);
    }

    /** The most the pool's thin LVs may add up to: its size times the ratio. */
    long ceilingBytes() {
        return ratio.multiply(BigDecimal.valueOf(poolBytes)).longValue();
    }

    /** How many more bytes of thin LVs (new ones, or growth of existing ones) the pool can promise now. */
    long availableBytes() {
        long underRatio = Math.max(0, ceilingBytes() - promisedBytes);
        long unwritten = ratio.multiply(BigDecimal.valueOf(Math.max(0, poolBytes - usedBytes))).longValue();
        return Math.min(underRatio, unwritten);
    }

    String describe() {
        return promisedBytes + " bytes promised and " + usedBytes + " bytes written of " + poolBytes
                + " at over-provisioning ratio " + ratio.toPlainString();
    }
}
