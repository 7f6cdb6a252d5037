package io.lvmqos.guarantee;

import io.lvmqos.volume.DiskCapacity;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A disk's io.cost linear model: what it does with each kind of I/O, as the kernel's
 * {@code io.cost.model} takes it (Documentation/admin-guide/cgroup-v2.rst, block/blk-iocost.c).
 * The bytes per second are sequential transfers of large blocks; the operations per second are
 * 4 KiB operations, sequential and random, with many in flight. io.cost derives a cost for every
 * bio from these six figures, so they are also what the disk can be promised: a 4 KiB random read
 * costs exactly {@code 1 / rrandiops} of a second of the disk.
 */
public record CostModel(long rbps, long rseqiops, long rrandiops, long wbps, long wseqiops, long wrandiops) {

    /** The figures' names, in the kernel's order. */
    public static final List<String> KEYS = List.of("rbps", "rseqiops", "rrandiops", "wbps", "wseqiops", "wrandiops");

    public CostModel {
        for (long value : new long[] {rbps, rseqiops, rrandiops, wbps, wseqiops, wrandiops}) {
            if (value <= 0) {
                throw new IllegalArgumentException("every figure of an io.cost model must be positive: " + value);
            }
        }
    }

    /**
     * The model in {@code settings}, as io.cost.model prints a disk's line or --io-cost-model gives it
     * ({@code ctrl=user model=linear rbps=... }); empty unless all six figures are there, whole and positive.
     */
    public static Optional<CostModel> fromSettings(Map<String, String> settings) {
        long[] values = new long[KEYS.size()];
        for (int i = 0; i < values.length; i++) {
            String value = settings.get(KEYS.get(i));
            if (value == null || !value.matches("[0-9]{1,18}") || Long.parseLong(value) <= 0) {
                return Optional.empty();
            }
            values[i] = Long.parseLong(value);
        }
        return Optional.of(new CostModel(values[0], values[1], values[2], values[3], values[4], values[5]));
    }

    /** key=value pairs separated by blanks, as in io.cost.model and --io-cost-model. */
    public static Map<String, String> settingsOf(String text) {
        Map<String, String> settings = new LinkedHashMap<>();
        for (String pair : text.strip().split("\\s+")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                settings.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        return settings;
    }

    /** What io.cost.model takes for a disk after its device number: a user-controlled linear model. */
    public String settings() {
        return "ctrl=user model=linear rbps=" + rbps + " rseqiops=" + rseqiops + " rrandiops=" + rrandiops + " wbps="
                + wbps + " wseqiops=" + wseqiops + " wrandiops=" + wrandiops;
    }

    /**
     * What floors can be promised on the disk when io.cost may slow its issue rate down to
     * {@code minVratePercent} of the model: random 4 KiB operations and sequential bytes, per
     * direction. Operations are counted at the random rate, the dearer kind, so a floor holds
     * whatever the pod's pattern; bytes at the sequential rate, which leaves out the per-operation
     * cost of small transfers.
     */
    public DiskCapacity capacity(double minVratePercent) {
        double scale = minVratePercent / 100;
        return new DiskCapacity(scaled(rrandiops, scale), scaled(wrandiops, scale), scaled(rbps, scale),
                scaled(wbps, scale));
    }

    private static OptionalLong scaled(long value, double scale) {
        return OptionalLong.of(Math.max(1, (long) Math.floor(value * scale)));
    }
}
