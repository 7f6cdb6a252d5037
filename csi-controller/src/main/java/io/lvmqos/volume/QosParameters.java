package io.lvmqos.volume;

import static io.lvmqos.volume.QosKeys.BPS;
import static io.lvmqos.volume.QosKeys.BPS_FLOOR;
import static io.lvmqos.volume.QosKeys.BPS_PER_GIB;
import static io.lvmqos.volume.QosKeys.GUARANTEE_KEYS;
import static io.lvmqos.volume.QosKeys.IOPS;
import static io.lvmqos.volume.QosKeys.IOPS_FLOOR;
import static io.lvmqos.volume.QosKeys.IOPS_PER_GIB;
import static io.lvmqos.volume.QosKeys.IO_WEIGHT;
import static io.lvmqos.volume.QosKeys.KEYS;
import static io.lvmqos.volume.QosKeys.NO_GUARANTEE;
import static io.lvmqos.volume.QosKeys.NO_LIMIT;
import static io.lvmqos.volume.QosKeys.READ_BPS;
import static io.lvmqos.volume.QosKeys.READ_BPS_FLOOR;
import static io.lvmqos.volume.QosKeys.READ_IOPS;
import static io.lvmqos.volume.QosKeys.READ_IOPS_FLOOR;
import static io.lvmqos.volume.QosKeys.WRITE_BPS;
import static io.lvmqos.volume.QosKeys.WRITE_BPS_FLOOR;
import static io.lvmqos.volume.QosKeys.WRITE_IOPS;
import static io.lvmqos.volume.QosKeys.WRITE_IOPS_FLOOR;

import io.lvmqos.errors.DriverException;
import io.lvmqos.errors.Echo;
import java.math.BigDecimal;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The StorageClass keys that set I/O limits, validated; the one place their text is read.
 * Both-direction keys ({@code iops}, {@code bps}) give each direction the same limit, because
 * io.max limits each direction on its own; per-direction keys override them; per-GiB keys scale
 * with the volume's size. Every key also takes {@value QosKeys#NO_LIMIT}: no limit in that direction,
 * which in a VolumeAttributesClass lifts a limit the volume has (a key the class leaves out leaves
 * the limit as it is).
 */
public final class QosParameters {

    /** Guarantee key to the {@link Guarantee} part it sets. */
    private static final Map<String, Guarantee.Part> GUARANTEE_PARTS = Map.of(
            IO_WEIGHT, Guarantee.Part.WEIGHT,
            IOPS_FLOOR, Guarantee.Part.IOPS_FLOOR,
            READ_IOPS_FLOOR, Guarantee.Part.READ_IOPS_FLOOR,
            WRITE_IOPS_FLOOR, Guarantee.Part.WRITE_IOPS_FLOOR,
            BPS_FLOOR, Guarantee.Part.BPS_FLOOR,
            READ_BPS_FLOOR, Guarantee.Part.READ_BPS_FLOOR,
            WRITE_BPS_FLOOR, Guarantee.Part.WRITE_BPS_FLOOR);

    private QosParameters() {
    }

    public static boolean isQosKey(String key) {
        return KEYS.contains(key);
    }

    /**
     * Reads mutable parameters (VolumeAttributesClass): only QoS keys are mutable here, an absent
     * key leaves that limit as it is, and {@value QosKeys#NO_LIMIT} lifts it.
     */
    public static QosChange parseMutable(Map<String, String> mutable) {
        requireMutableKeys(mutable);
        return change(mutable);
    }

    /**
     * Refuses a key a VolumeAttributesClass may not carry; the values are read where they are
     * used (CreateVolume reads them with the StorageClass's parameters they override).
     */
    public static void requireMutableKeys(Map<String, String> mutable) {
        for (String key : mutable.keySet()) {
            if (!isQosKey(key)) {
                throw DriverException.invalidArgument("mutable parameter " + Echo.of(key) + " is not supported: the mutable "
                        + "parameters are the QoS keys " + String.join(", ", KEYS));
            }
        }
    }

    /** Reads the QoS keys of {@code parameters} (a StorageClass); other keys are the caller's business. */
    public static QosSpec parse(Map<String, String> parameters) {
        QosSpec spec = QosSpec.NONE.changedBy(change(parameters));
        // the mix of floors is refused here already; a floor against a per-GiB cap needs the size
        spec.guarantee().requireConsistent(IoLimits.NONE);
        return spec;
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
                writeIops.or(() -> iopsLimit), guarantee(parameters));
    }

    /** The guarantee as the parameters that give it ({@code ioWeight=800, iopsFloor=200}), for messages. */
    public static String describe(Guarantee guarantee) {
        StringBuilder text = new StringBuilder();
        for (String key : GUARANTEE_KEYS) {
            guarantee.value(GUARANTEE_PARTS.get(key)).ifPresent(value ->
                    text.append(text.isEmpty() ? "" : ", ").append(key).append('=').append(value));
        }
        return text.toString();
    }

    /** The guarantee parts the keys set (a value) or take away ({@value QosKeys#NO_GUARANTEE}). */
    private static Guarantee.Change guarantee(Map<String, String> parameters) {
        Set<Guarantee.Part> cleared = new LinkedHashSet<>();
        for (String key : GUARANTEE_KEYS) {
            if (NO_GUARANTEE.equals(parameters.get(key))) {
                cleared.add(GUARANTEE_PARTS.get(key));
            }
        }
        Optional<IoCostWeight> weight = given(parameters, IO_WEIGHT).map(QosParameters::weight);
        // read in the keys' order, so that of two bad keys the same one is named first as before
        Map<String, OptionalLong> floors = new HashMap<>();
        for (String key : GUARANTEE_KEYS) {
            if (!key.equals(IO_WEIGHT)) {
                floors.put(key, floor(parameters, key));
            }
        }
        return new Guarantee.Change(new Guarantee(weight, floors.get(READ_IOPS_FLOOR), floors.get(WRITE_IOPS_FLOOR),
                floors.get(IOPS_FLOOR), floors.get(READ_BPS_FLOOR), floors.get(WRITE_BPS_FLOOR), floors.get(BPS_FLOOR)),
                cleared);
    }

    /** The key's value unless it is absent or {@value QosKeys#NO_GUARANTEE}. */
    private static Optional<String> given(Map<String, String> parameters, String key) {
        return value(parameters, key).filter(text -> !text.equals(NO_GUARANTEE));
    }

    private static OptionalLong floor(Map<String, String> parameters, String key) {
        return given(parameters, key).map(text -> OptionalLong.of(floorValue(key, text))).orElse(OptionalLong.empty());
    }

    private static long floorValue(String key, String text) {
        boolean bytes = key.equals(BPS_FLOOR) || key.equals(READ_BPS_FLOOR) || key.equals(WRITE_BPS_FLOOR);
        String expected = (bytes ? "a byte rate such as 52428800 or 50Mi" : "a whole number of operations per second"
                + " such as 200 or 2k") + ", or " + NO_GUARANTEE;
        long value = integral(key, text, positive(key, text, expected), bytes ? "bytes per second" : "I/O operations per second");
        return atMost(key, text, value, bytes ? IoLimits.MAX_BPS : IoLimits.MAX_IOPS, bytes ? "byte rate" : "IOPS value");
    }

    /** io.weight's own range; a fraction or a quantity suffix is refused rather than rounded. */
    private static IoCostWeight weight(String text) {
        String expected = "a whole number from " + IoCostWeight.MIN + " to " + IoCostWeight.MAX
                + " (the pod's io.cost weight on the volume's disk; " + IoCostWeight.DEFAULT + " is every cgroup's"
                + " default), or " + NO_GUARANTEE;
        if (!text.matches("[0-9]{1,6}")) {
            throw DriverException.invalidArgument("parameter " + IO_WEIGHT + "=\"" + Echo.of(text) + "\" is not valid: expected "
                    + expected);
        }
        int weight = Integer.parseInt(text);
        if (weight < IoCostWeight.MIN || weight > IoCostWeight.MAX) {
            throw DriverException.invalidArgument("parameter " + IO_WEIGHT + "=\"" + Echo.of(text) + "\" is out of the"
                    + " kernel's range: expected " + expected);
        }
        return new IoCostWeight(weight);
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

    /** The key's limit: empty when the key is absent, unlimited for {@value QosKeys#NO_LIMIT}, else what {@code read} makes. */
    private static Optional<Limit> limit(Map<String, String> parameters, String key,
                                         Function<String, Limit> read) {
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
