package io.lvmqos.volume;

import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The StorageClass keys that set I/O limits, validated; the one place their text is read.
 * Both-direction keys ({@code iops}, {@code bps}) give each direction the same limit, because
 * io.max limits each direction on its own; per-direction keys override them; per-GiB keys scale
 * with the volume's size. Every key also takes {@value #NO_LIMIT}: no limit in that direction,
 * which in a VolumeAttributesClass lifts a limit the volume has (a key the class leaves out leaves
 * the limit as it is).
 */
public final class QosParameters {

    public static final String IOPS = "iops";
    public static final String BPS = "bps";
    public static final String READ_IOPS = "readIOPS";
    public static final String WRITE_IOPS = "writeIOPS";
    public static final String READ_BPS = "readBPS";
    public static final String WRITE_BPS = "writeBPS";
    public static final String IOPS_PER_GIB = "iopsPerGiB";
    public static final String BPS_PER_GIB = "bpsPerGiB";

    /** The value that means "no limit", as io.max writes it. */
    public static final String NO_LIMIT = "max";

    public static final List<String> KEYS =
            List.of(IOPS, BPS, READ_IOPS, WRITE_IOPS, READ_BPS, WRITE_BPS, IOPS_PER_GIB, BPS_PER_GIB);

    private QosParameters() {
    }

    public static boolean isQosKey(String key) {
        return KEYS.contains(key);
    }

    /**
     * Reads mutable parameters (VolumeAttributesClass): only QoS keys are mutable here, an absent
     * key leaves that limit as it is, and {@value #NO_LIMIT} lifts it.
     */
    public static QosChange parseMutable(Map<String, String> mutable) {
        for (String key : mutable.keySet()) {
            if (!isQosKey(key)) {
                throw DriverException.invalidArgument("mutable parameter " + Echo.of(key) + " is not supported: the mutable "
                        + "parameters are the QoS keys " + String.join(", ", KEYS));
            }
        }
        return change(mutable);
    }

    /** Reads the QoS keys of {@code parameters} (a StorageClass); other keys are the caller's business. */
    public static QosSpec parse(Map<String, String> parameters) {
        return QosSpec.NONE.changedBy(change(parameters));
    }

    /** Per direction, the limit the keys name: a per-direction key first, then a both-direction one. */
    private static QosChange change(Map<String, String> parameters) {
        Optional<Limit> bpsBoth = bytesPerSecond(parameters, BPS);
        Optional<Limit> iopsBoth = iops(parameters, IOPS);
        Optional<Limit> bpsPerGiB = perGiB(parameters, BPS_PER_GIB);
        Optional<Limit> iopsPerGiB = perGiB(parameters, IOPS_PER_GIB);
        Optional<Limit> readBps = bytesPerSecond(parameters, READ_BPS);
        Optional<Limit> writeBps = bytesPerSecond(parameters, WRITE_BPS);
        Optional<Limit> readIops = iops(parameters, READ_IOPS);
        Optional<Limit> writeIops = iops(parameters, WRITE_IOPS);
        refuseMix(parameters, BPS_PER_GIB, BPS, READ_BPS, WRITE_BPS);
        refuseMix(parameters, IOPS_PER_GIB, IOPS, READ_IOPS, WRITE_IOPS);
        Optional<Limit> bps = bpsBoth.or(() -> bpsPerGiB);
        Optional<Limit> iopsLimit = iopsBoth.or(() -> iopsPerGiB);
        return new QosChange(readBps.or(() -> bps), writeBps.or(() -> bps), readIops.or(() -> iopsLimit),
                writeIops.or(() -> iopsLimit));
    }

    private static void refuseMix(Map<String, String> parameters, String perGiBKey, String... absoluteKeys) {
        if (!parameters.containsKey(perGiBKey)) {
            return;
        }
        for (String absolute : absoluteKeys) {
            if (parameters.containsKey(absolute)) {
                throw DriverException.invalidArgument("parameter " + perGiBKey + " cannot be combined with "
                        + absolute + ": give either a per-GiB limit or absolute limits of that kind");
            }
        }
    }

    private static Optional<Limit> bytesPerSecond(Map<String, String> parameters, String key) {
        return limit(parameters, key, text -> {
            String expected = "a byte rate such as 52428800, 50Mi or 1G, or " + NO_LIMIT;
            long bps = integral(key, text, positive(key, text, expected), "bytes per second");
            return new Limit.Fixed(atMost(key, text, bps, IoLimits.MAX_BPS, "byte rate"));
        });
    }

    private static Optional<Limit> iops(Map<String, String> parameters, String key) {
        return limit(parameters, key, text -> {
            String expected = "a whole number of operations per second such as 300 or 2k, or " + NO_LIMIT;
            long iops = integral(key, text, positive(key, text, expected), "I/O operations per second");
            return new Limit.Fixed(atMost(key, text, iops, IoLimits.MAX_IOPS, "IOPS limit"));
        });
    }

    private static Optional<Limit> perGiB(Map<String, String> parameters, String key) {
        return limit(parameters, key,
                text -> new Limit.PerGiB(positive(key, text, "a positive number per GiB such as 10 or 0.5, or " + NO_LIMIT)));
    }

    /** The key's limit: empty when the key is absent, unlimited for {@value #NO_LIMIT}, else what {@code read} makes. */
    private static Optional<Limit> limit(Map<String, String> parameters, String key,
                                         java.util.function.Function<String, Limit> read) {
        return value(parameters, key).map(text -> text.equals(NO_LIMIT) ? Limit.UNLIMITED : read.apply(text));
    }

    private static long atMost(String key, String text, long value, long max, String what) {
        if (value > max) {
            throw DriverException.invalidArgument("parameter " + Echo.of(key) + "=\"" + Echo.of(text) + "\" is above the kernel's "
                    + "largest " + what + ", " + max + ": leave the key out, or give " + NO_LIMIT + ", for no limit");
        }
        return value;
    }

    private static Optional<String> value(Map<String, String> parameters, String key) {
        return Optional.ofNullable(parameters.get(key));
    }

    private static BigDecimal positive(String key, String text, String expected) {
        BigDecimal value = Quantity.parse(text).orElseThrow(() -> DriverException.invalidArgument(
                "parameter " + Echo.of(key) + "=\"" + Echo.of(text) + "\" is not valid: expected " + expected));
        if (value.signum() <= 0) {
            throw DriverException.invalidArgument(
                    "parameter " + Echo.of(key) + "=\"" + Echo.of(text) + "\" must be greater than zero: expected " + expected);
        }
        return value;
    }

    private static long integral(String key, String text, BigDecimal value, String unit) {
        if (value.stripTrailingZeros().scale() > 0) {
            throw DriverException.invalidArgument(
                    "parameter " + Echo.of(key) + "=\"" + Echo.of(text) + "\" must be a whole number of " + unit);
        }
        try {
            return value.longValueExact();
        } catch (ArithmeticException e) {
            throw DriverException.invalidArgument("parameter " + Echo.of(key) + "=\"" + Echo.of(text) + "\" is too large");
        }
    }
}
