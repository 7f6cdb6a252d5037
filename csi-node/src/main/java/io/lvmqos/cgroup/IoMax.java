package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoLimits;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/** The cgroup v2 io.max format: one line per device, "MAJ:MIN rbps=N wbps=N riops=N wiops=N", "max" for none. */
final class IoMax {

    static final String FILE = "io.max";

    private IoMax() {
    }

    /** The line that sets all four limits; "max" everywhere removes the device's line. */
    static String line(DeviceNumber device, IoLimits limits) {
        return device + " rbps=" + value(limits.readBps()) + " wbps=" + value(limits.writeBps())
                + " riops=" + value(limits.readIops()) + " wiops=" + value(limits.writeIops());
    }

    /**
     * Every device's limits in an io.max file; keys it does not know (newer kernels) are ignored.
     *
     * @throws DriverException.Internal naming the line it cannot read ({@link CgroupFiles#notUnderstood})
     */
    static Map<DeviceNumber, IoLimits> parse(String text) {
        Map<DeviceNumber, IoLimits> limits = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            String[] fields = line.strip().split("\\s+");
            if (fields.length < 2) {
                continue;
            }
            try {
                limits.put(DeviceNumber.parse(fields[0]), limits(fields));
            } catch (IllegalArgumentException e) {
                throw CgroupFiles.notUnderstood(FILE, line, e);
            }
        }
        return limits;
    }

    private static IoLimits limits(String[] fields) {
        OptionalLong rbps = OptionalLong.empty();
        OptionalLong wbps = OptionalLong.empty();
        OptionalLong riops = OptionalLong.empty();
        OptionalLong wiops = OptionalLong.empty();
        for (int i = 1; i < fields.length; i++) {
            int eq = fields[i].indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("field '" + fields[i] + "' has no '='");
            }
            String key = fields[i].substring(0, eq);
            OptionalLong value = parseValue(fields[i].substring(eq + 1));
            switch (key) {
                case "rbps" -> rbps = value;
                case "wbps" -> wbps = value;
                case "riops" -> riops = value;
                case "wiops" -> wiops = value;
                default -> {
                }
            }
        }
        return new IoLimits(rbps, wbps, riops, wiops);
    }

    private static String value(OptionalLong limit) {
        return limit.isPresent() ? Long.toUnsignedString(limit.getAsLong()) : "max";
    }

    /**
     * A value as the kernel shows it. The kernel holds byte rates up to 2^64-2, beyond the largest
     * the driver writes (a long's): such a value, set by someone else on any device of the cgroup,
     * reads as that largest rather than making the whole file unreadable (found by IoMaxFuzzTest).
     */
    private static OptionalLong parseValue(String text) {
        if (text.equals("max")) {
            return OptionalLong.empty();
        }
        long value = Long.parseUnsignedLong(text);
        return OptionalLong.of(value < 0 ? Long.MAX_VALUE : value);
    }
}
