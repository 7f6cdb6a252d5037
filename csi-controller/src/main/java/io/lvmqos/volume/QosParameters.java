package io.lvmqos.volume;

import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The StorageClass keys that set I/O limits, validated. Both-direction keys ({@code iops},
 * {@code bps}) give each direction the same limit, because io.max limits each direction on its
 * own; per-direction keys override them; per-GiB keys scale with the volume's size.
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

    public static final List<String> KEYS =
            List.of(IOPS, BPS, READ_IOPS, WRITE_IOPS, READ_BPS, WRITE_BPS, IOPS_PER_GIB, BPS_PER_GIB);

    private QosParameters() {
    }

    public static boolean isQosKey(String key) {
        return KEYS.contains(key);
    }

    /**
     * Reads mutable parameters (VolumeAttributesClass): only QoS keys are mutable here, and an
     * absent key leaves that limit as it is.
     */
    public static QosSpec parseMutable(Map<String, String> mutable) {
        for (String key : mutable.keySet()) {
            if (!isQosKey(key)) {
                throw DriverException.invalidArgument("mutable parameter " + Echo.of(key) + " is not supported: the mutable "
                        + "parameters are the QoS keys " + String.join(", ", KEYS));
            }
        }
        return parse(mutable);
    }

    /** Reads the QoS keys of {@code parameters}; other keys are the caller's business. */
    public static QosSpec parse(Map<String, String> parameters) {
        Limit bpsBoth = bytesPerSecond(parameters, BPS);
        Limit iopsBoth = iops(parameters, IOPS);
        Limit bpsPerGiB = perGiB(parameters, BPS_PER_GIB);
        Limit iopsPerGiB = perGiB(parameters, IOPS_PER_GIB);
        Limit readBps = bytesPerSecond(parameters, READ_BPS);
        Limit writeBps = bytesPerSecond(parameters, WRITE_BPS);
        Limit readIops = iops(parameters, READ_IOPS);
        Limit writeIops = iops(parameters, WRITE_IOPS);
        refuseMix(parameters, BPS_PER_GIB, BPS, READ_BPS, WRITE_BPS);
        refuseMix(parameters, IOPS_PER_GIB, IOPS, READ_IOPS, WRITE_IOPS);
        Limit bps = first(bpsBoth, bpsPerGiB);
        Limit iopsLimit = first(iopsBoth, iopsPerGiB);
        return new QosSpec(first(readBps, bps), first(writeBps, bps), first(readIops, iopsLimit),
                first(writeIops, iopsLimit));
    }

    private static Limit first(Limit preferred, Limit fallback) {
        return preferred instanceof Limit.Unlimited ? fallback : preferred;
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

    private static Limit bytesPerSecond(Map<String, String> parameters, String key) {
        return value(parameters, key).map(text -> {
            BigDecimal value = positive(key, text, "a byte rate such as 52428800, 50Mi or 1G");
            return (Limit) new Limit.Fixed(integral(key, text, value, "bytes per second"));
        }).orElse(Limit.UNLIMITED);
    }

    private static Limit iops(Map<String, String> parameters, String key) {
        return value(parameters, key).map(text -> {
            BigDecimal value = positive(key, text, "a whole number of operations per second such as 300 or 2k");
            long iops = integral(key, text, value, "I/O operations per second");
            if (iops > QosSpec.MAX_IOPS) {
                throw DriverException.invalidArgument("parameter " + Echo.of(key) + "=\"" + Echo.of(text) + "\" is above the kernel's "
                        + "largest IOPS limit, " + QosSpec.MAX_IOPS);
            }
            return (Limit) new Limit.Fixed(iops);
        }).orElse(Limit.UNLIMITED);
    }

    private static Limit perGiB(Map<String, String> parameters, String key) {
        return value(parameters, key)
                .map(text -> (Limit) new Limit.PerGiB(positive(key, text, "a positive number per GiB such as 10 or 0.5")))
                .orElse(Limit.UNLIMITED);
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
