package io.lvmqos.cgroup;

import io.lvmqos.device.DeviceNumber;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a cgroup has done on one device since the cgroup was made, as the kernel counts it after
 * throttling: bytes and I/O operations read and written.
 */
public record IoCounters(long readBytes, long writeBytes, long readOps, long writeOps) {

    public static final IoCounters ZERO = new IoCounters(0, 0, 0, 0);

    public IoCounters {
        if (readBytes < 0 || writeBytes < 0 || readOps < 0 || writeOps < 0) {
            throw new IllegalArgumentException("I/O counters cannot be negative");
        }
    }

    /**
     * The device's line of a cgroup v2 {@code io.stat}:
     * {@code 253:3 rbytes=1048576 wbytes=4194304 rios=1 wios=4 dbytes=0 dios=0}, with any further
     * keys the kernel's controllers add. A device the cgroup has not used yet is either left out
     * or, once a limit is set on it, listed with no fields at all ({@code 253:3 }, as 6.1 prints
     * it); both are zero, not unknown.
     *
     * @throws IllegalArgumentException when the device's line is malformed
     */
    public static IoCounters fromIoStat(String ioStat, DeviceNumber device) {
        String prefix = device + " ";
        for (String line : ioStat.split("\n")) {
            if (!line.startsWith(prefix)) {
                continue;
            }
            Map<String, String> values = new TreeMap<>();
            for (String field : line.substring(prefix.length()).trim().split("\\s+")) {
                int equals = field.indexOf('=');
                if (equals > 0) {
                    values.put(field.substring(0, equals), field.substring(equals + 1));
                }
            }
            if (values.isEmpty()) {
                return ZERO;
            }
            return new IoCounters(required(values, "rbytes", line), required(values, "wbytes", line),
                    required(values, "rios", line), required(values, "wios", line));
        }
        return ZERO;
    }

    /**
     * The device's Read and Write lines of cgroup v1's {@code blkio.throttle.io_service_bytes}
     * and {@code blkio.throttle.io_serviced} (or their {@code _recursive} forms):
     * {@code 253:3 Read 1048576}. A device the cgroup has not used is not listed: zero.
     */
    public static IoCounters fromBlkio(String serviceBytes, String serviced, DeviceNumber device) {
        long[] bytes = readWrite(serviceBytes, device);
        long[] ops = readWrite(serviced, device);
        return new IoCounters(bytes[0], bytes[1], ops[0], ops[1]);
    }

    private static long[] readWrite(String text, DeviceNumber device) {
        long[] values = new long[2];
        String prefix = device + " ";
        for (String line : text.split("\n")) {
            if (!line.startsWith(prefix)) {
                continue;
            }
            String[] fields = line.trim().split("\\s+");
            if (fields.length != 3) {
                throw new IllegalArgumentException("blkio line '" + line + "' is not 'MAJ:MIN Op value'");
            }
            switch (fields[1]) {
                case "Read" -> values[0] = parseCount(fields[2], line);
                case "Write" -> values[1] = parseCount(fields[2], line);
                default -> {
                    // Sync, Async, Discard, Total: other cuts of the same I/O
                }
            }
        }
        return values;
    }

    private static long required(Map<String, String> values, String key, String line) {
        String value = values.get(key);
        if (value == null) {
            throw new IllegalArgumentException("io.stat line '" + line + "' has no " + key);
        }
        return parseCount(value, line);
    }

    /** The kernel prints u64 counters; past Long.MAX_VALUE (never in practice) they saturate. */
    private static long parseCount(String text, String line) {
        try {
            long value = Long.parseUnsignedLong(text);
            return value < 0 ? Long.MAX_VALUE : value;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' in '" + line + "' is not a counter");
        }
    }
}
