package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The cgroup v1 blkio throttle files: one per direction and unit, lines "MAJ:MIN value"; writing
 * "MAJ:MIN 0" removes the device's limit (the line), which is how "no limit" is written here. The
 * bounds of a value are {@link io.lvmqos.volume.IoLimits}'s.
 */
enum BlkioThrottle {
    READ_BPS("blkio.throttle.read_bps_device", -1L),
    WRITE_BPS("blkio.throttle.write_bps_device", -1L),
    READ_IOPS("blkio.throttle.read_iops_device", 0xffff_ffffL),
    WRITE_IOPS("blkio.throttle.write_iops_device", 0xffff_ffffL);

    final String file;
    /** What the kernel stores for "no limit": all ones of the field, a u64 for bytes, an unsigned int for IOPS. */
    private final long none;

    BlkioThrottle(String file, long none) {
        this.file = file;
        this.none = none;
    }

    /** Whether a value read from the file limits anything: 0 never shows (it deletes the line), "none" does not. */
    boolean isLimit(long value) {
        return value != 0 && value != none;
    }

    /**
     * Each device's value in this file.
     *
     * @throws DriverException.Internal naming the line it cannot read ({@link CgroupFiles#notUnderstood})
     */
    Map<DeviceNumber, Long> parse(String text) {
        Map<DeviceNumber, Long> values = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            String[] fields = line.strip().split("\\s+");
            try {
                if (fields.length != 2) {
                    throw new IllegalArgumentException("expected 'MAJ:MIN value'");
                }
                values.put(DeviceNumber.parse(fields[0]), Long.parseUnsignedLong(fields[1]));
            } catch (IllegalArgumentException e) {
                throw CgroupFiles.notUnderstood(file, line, e);
            }
        }
        return values;
    }
}
