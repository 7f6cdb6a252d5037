package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The cgroup v1 blkio throttle files: one per direction and unit, lines "MAJ:MIN value"; writing
 * "MAJ:MIN 0" removes the device's limit.
 */
enum BlkioThrottle {
    READ_BPS("blkio.throttle.read_bps_device"),
    WRITE_BPS("blkio.throttle.write_bps_device"),
    READ_IOPS("blkio.throttle.read_iops_device"),
    WRITE_IOPS("blkio.throttle.write_iops_device");

    final String file;

    BlkioThrottle(String file) {
        this.file = file;
    }

    static Map<DeviceNumber, Long> parse(String text) {
        Map<DeviceNumber, Long> values = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            String[] fields = line.strip().split("\\s+");
            if (fields.length == 2) {
                values.put(DeviceNumber.parse(fields[0]), Long.parseUnsignedLong(fields[1]));
            } else if (!line.isBlank()) {
                throw new IllegalArgumentException("blkio throttle line '" + line + "' is not 'MAJ:MIN value'");
            }
        }
        return values;
    }
}
