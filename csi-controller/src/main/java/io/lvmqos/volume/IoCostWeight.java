package io.lvmqos.volume;

/**
 * An io.cost weight, as io.weight holds it for a cgroup: from a StorageClass's {@code ioWeight},
 * through the node's share calculation, to the {@code MAJ:MIN N} line written in the pod's cgroup.
 * The kernel's range and default are defined here and nowhere else.
 *
 * @param value 1..10000 (CGROUP_WEIGHT_MIN..CGROUP_WEIGHT_MAX)
 */
public record IoCostWeight(int value) {

    public static final int MIN = 1;
    public static final int MAX = 10_000;
    /** The weight a cgroup has when nobody sets one (CGROUP_WEIGHT_DFL). */
    public static final IoCostWeight DEFAULT = new IoCostWeight(100);

    public IoCostWeight {
        if (value < MIN || value > MAX) {
            throw new IllegalArgumentException("io.cost weight " + value + " is out of the kernel's range " + MIN + ".." + MAX);
        }
    }

    /** The weight nearest to {@code exact} within the kernel's range. */
    public static IoCostWeight nearest(long exact) {
        return new IoCostWeight((int) Math.max(MIN, Math.min(MAX, exact)));
    }

    /** Reads the decimal form io.weight and the LV tags use. */
    public static IoCostWeight parse(String text) {
        return new IoCostWeight(Integer.parseInt(text));
    }

    /** The decimal form io.weight and the LV tags use. */
    @Override
    public String toString() {
        return Integer.toString(value);
    }
}
