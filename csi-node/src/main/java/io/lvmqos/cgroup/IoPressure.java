package io.lvmqos.cgroup;

import java.util.OptionalLong;

/**
 * A cgroup v2 {@code io.pressure} file (pressure stall information): the total time, in
 * microseconds, during which some of the cgroup's tasks were stalled waiting for I/O, and the time
 * during which all of its non-idle tasks were. A pod held back by io.max accumulates "some" time
 * while its writers wait in the throttle queue.
 *
 * @param someMicros the "some" line's total
 * @param fullMicros the "full" line's total, if the kernel printed one
 */
public record IoPressure(long someMicros, OptionalLong fullMicros) {

    /**
     * Parses {@code some avg10=0.00 avg60=0.00 avg300=0.00 total=123\nfull avg10=... total=45}.
     *
     * @throws IllegalArgumentException when there is no "some" line with a total
     */
    public static IoPressure parse(String text) {
        OptionalLong some = OptionalLong.empty();
        OptionalLong full = OptionalLong.empty();
        for (String line : text.split("\n")) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length < 2) {
                continue;
            }
            OptionalLong total = total(fields, line);
            switch (fields[0]) {
                case "some" -> some = total;
                case "full" -> full = total;
                default -> {
                    // a line a later kernel may add
                }
            }
        }
        if (some.isEmpty()) {
            throw new IllegalArgumentException("io.pressure has no 'some ... total=N' line: '" + text.strip() + "'");
        }
        return new IoPressure(some.getAsLong(), full);
    }

    private static OptionalLong total(String[] fields, String line) {
        for (String field : fields) {
            if (field.startsWith("total=")) {
                try {
                    return OptionalLong.of(Long.parseLong(field.substring("total=".length())));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("'" + field + "' in io.pressure line '" + line
                            + "' is not a number of microseconds");
                }
            }
        }
        return OptionalLong.empty();
    }
}
