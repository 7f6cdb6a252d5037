package io.lvmqos.volume;

import java.util.OptionalLong;

/**
 * Limits in force on one device for one pod, in bytes per second and I/O operations per second
 * per direction; empty means no limit in that direction. The last stage before the cgroup line:
 * {@link QosParameters} reads the StorageClass into a {@link QosSpec}, {@link QosSpec#forSize}
 * turns it into these numbers for a device of a given size, and the node's cgroup writer turns
 * these into an io.max line (cgroup v2) or blkio.throttle lines (v1).
 *
 * <p>The bounds here are the only ones in the driver; every stage refers to them. They are what
 * the kernel's blk-throttle (block/blk-throttle.c) can hold as a limit:
 * <ul>
 * <li>v2 io.max reads each value as a u64 ("max" is U64_MAX, which means no limit) and refuses 0
 *     with ERANGE; it clamps an IOPS value to UINT_MAX, which again means no limit;</li>
 * <li>v1 blkio.throttle.*_bps_device reads a u64 where 0 deletes the line (stored as U64_MAX, no
 *     limit); *_iops_device stores the value in an unsigned int, so a larger value is silently
 *     truncated to its low 32 bits, and UINT_MAX is no limit.</li>
 * </ul>
 * So an IOPS limit is 1..2^32-2 and a byte rate is 1..2^64-2; a Java long stops the byte rate at
 * 2^63-1, some exabytes per second, beyond any device. Some kernels (about 5.10 until the io.low
 * limit was taken out, around 6.9) also refuse the value 1 in io.max with EINVAL; the writer then
 * fails the call rather than leaving a pod unthrottled.
 */
public record IoLimits(OptionalLong readBps, OptionalLong writeBps, OptionalLong readIops, OptionalLong writeIops) {

    /** The largest byte rate a limit can be (see the class comment). */
    public static final long MAX_BPS = Long.MAX_VALUE;

    /** The largest IOPS limit the kernel holds as a limit: 2^32-1 means "none" to it (see the class comment). */
    public static final long MAX_IOPS = 0xffff_fffeL;

    public static final IoLimits NONE =
            new IoLimits(OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty());

    public IoLimits {
        check("read bytes/s", readBps, MAX_BPS);
        check("write bytes/s", writeBps, MAX_BPS);
        check("read IOPS", readIops, MAX_IOPS);
        check("write IOPS", writeIops, MAX_IOPS);
    }

    /**
     * Limits from computed values, each brought within its bound: a limit beyond what the kernel
     * holds is as good as the largest it holds (a per-GiB limit on a huge volume, say).
     */
    public static IoLimits within(OptionalLong readBps, OptionalLong writeBps, OptionalLong readIops,
                                  OptionalLong writeIops) {
        return new IoLimits(cap(readBps, MAX_BPS), cap(writeBps, MAX_BPS), cap(readIops, MAX_IOPS),
                cap(writeIops, MAX_IOPS));
    }

    private static OptionalLong cap(OptionalLong value, long max) {
        return value.isPresent() && value.getAsLong() > max ? OptionalLong.of(max) : value;
    }

    private static void check(String what, OptionalLong value, long max) {
        // 0 would mean "no limit" to cgroup v1 and is refused by v2; absence is how "no limit" is said here
        if (value.isPresent() && (value.getAsLong() <= 0 || value.getAsLong() > max)) {
            throw new IllegalArgumentException(what + " limit " + Long.toUnsignedString(value.getAsLong())
                    + " is out of range 1.." + max);
        }
    }

    public boolean isUnlimited() {
        return readBps.isEmpty() && writeBps.isEmpty() && readIops.isEmpty() && writeIops.isEmpty();
    }

    @Override
    public String toString() {
        return "rbps=" + show(readBps) + " wbps=" + show(writeBps) + " riops=" + show(readIops)
                + " wiops=" + show(writeIops);
    }

    private static String show(OptionalLong value) {
        return value.isPresent() ? Long.toString(value.getAsLong()) : "max";
    }
}
