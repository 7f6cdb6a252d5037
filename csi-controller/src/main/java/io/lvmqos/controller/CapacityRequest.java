package io.lvmqos.controller;

import csi.v1.Csi;
import io.lvmqos.errors.DriverException;

/** A CSI capacity range, validated, and the size it gives once rounded to LVM extents. */
record CapacityRequest(long requiredBytes, long limitBytes) {

    static final long DEFAULT_BYTES = 1L << 30;

    static CapacityRequest of(Csi.CapacityRange range) {
        long required = range.getRequiredBytes();
        long limit = range.getLimitBytes();
        if (required < 0 || limit < 0) {
            throw DriverException.invalidArgument("capacity_range must not be negative (required_bytes=" + required
                    + ", limit_bytes=" + limit + ")");
        }
        if (limit > 0 && required > limit) {
            throw DriverException.invalidArgument("capacity_range.required_bytes " + required
                    + " exceeds limit_bytes " + limit);
        }
        return new CapacityRequest(required, limit);
    }

    /** The LV size: the requested size (1 GiB when none) rounded up to whole extents, within the limit. */
    long sizeFor(long extentBytes) {
        long wanted = requiredBytes > 0 ? requiredBytes : limitBytes > 0 ? Math.min(DEFAULT_BYTES, limitBytes) : DEFAULT_BYTES;
        long size = roundUp(wanted, extentBytes);
        if (limitBytes > 0 && size > limitBytes) {
            long roundedDown = limitBytes / extentBytes * extentBytes;
            if (roundedDown >= Math.max(requiredBytes, 1)) {
                return roundedDown;
            }
            throw DriverException.outOfRange("no size between required_bytes " + requiredBytes + " and limit_bytes "
                    + limitBytes + " is a whole number of " + extentBytes + "-byte extents");
        }
        return size;
    }

    /** Whether an existing volume of {@code sizeBytes} satisfies this range. */
    boolean accepts(long sizeBytes) {
        return sizeBytes >= requiredBytes && (limitBytes == 0 || sizeBytes <= limitBytes);
    }

    private static long roundUp(long bytes, long unit) {
        if (bytes > Long.MAX_VALUE - unit) {
            throw DriverException.outOfRange(bytes + " bytes cannot be rounded up to whole " + unit + "-byte extents");
        }
        return Math.max(1, (bytes + unit - 1) / unit) * unit;
    }
}
