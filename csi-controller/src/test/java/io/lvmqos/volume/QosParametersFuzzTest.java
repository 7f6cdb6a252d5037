package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.errors.DriverException;
import io.lvmqos.fuzz.FuzzReport;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzes {@link QosParameters}: a StorageClass's parameters ({@code parse}) and a
 * VolumeAttributesClass's ({@code parseMutable}), caps and guarantees (ioWeight and the floors).
 *
 * <p>Property: for any map of keys to values, each either returns or throws
 * DriverException.InvalidArgument, never another exception (no NumberFormatException, no
 * ArithmeticException, no IllegalArgumentException from a record's constructor), and the message of
 * a refusal carries no control character (values are echoed through Echo). What they return holds:
 * <ul>
 * <li>its fields round-trip through the LV tags ({@code VolumeTags.qosTags} then {@code qosOf});</li>
 * <li>the limits in force on a device of any size are within the kernel's bounds, and checking the
 *     guarantee against them refuses only with InvalidArgument;</li>
 * <li>what the floors need of the disk is at least each floor (admission counts every floor).</li>
 * </ul>
 * A single known key with a whole number in its range is accepted and stored as that number.
 */
class QosParametersFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(QosParametersFuzzTest.class);
    private static final String[] SUFFIXES = {"", "", "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "k", "M", "G", "T", "P",
            "E", "m", "e3", "E-2", "e+30", "e31", "/GiB"};
    private static final String[] WORDS = {"max", "none", "0", "-1", "1", "4294967294", "4294967295",
            "9223372036854775807", "9223372036854775808", "18446744073709551615", "1.5", ".5", "10000", "10001",
            "8E", "5E", "4.6E", "", " ", "\n", "\u0000", "1\u202e", "\\x"};

    @FuzzTest
    void readsOrRefusesEveryMap(FuzzedDataProvider data) {
        REPORT.count();
        if (data.consumeInt(0, 3) == 0) {
            acceptsAWholeNumberInRange(data);
            return;
        }
        Map<String, String> parameters = new LinkedHashMap<>();
        for (int n = data.consumeInt(0, 6); n > 0; n--) {
            parameters.put(key(data), value(data));
        }
        boolean mutable = data.consumeBoolean();
        long size = data.consumeBoolean() ? data.consumeLong(0, Long.MAX_VALUE) : data.consumeLong(1, 1L << 44);
        QosSpec spec;
        try {
            spec = mutable ? QosSpec.NONE.changedBy(QosParameters.parseMutable(parameters))
                    : QosParameters.parse(parameters);
        } catch (DriverException.InvalidArgument e) {
            assertNoControlCharacter(e.getMessage());
            return;
        }
        assertEquals(spec, VolumeTags.qosOf(VolumeTags.qosTags(spec)), () -> parameters + " gave " + spec.fields());
        IoLimits caps = spec.forSize(size);
        try {
            spec.guarantee().requireConsistent(caps);
        } catch (DriverException.InvalidArgument e) {
            assertNoControlCharacter(e.getMessage());
        }
        Guarantee guarantee = spec.guarantee();
        for (OptionalLong floor : List.of(guarantee.readIopsFloor(), guarantee.writeIopsFloor(), guarantee.iopsFloor())) {
            assertTrue(floor.isEmpty() || guarantee.iopsNeeded() >= floor.getAsLong(), () -> parameters
                    + " needs " + guarantee.iopsNeeded() + " IOPS of the disk, less than a floor");
        }
        for (OptionalLong floor : List.of(guarantee.readBpsFloor(), guarantee.writeBpsFloor(), guarantee.bpsFloor())) {
            assertTrue(floor.isEmpty() || guarantee.bpsNeeded() >= floor.getAsLong(), () -> parameters
                    + " needs " + guarantee.bpsNeeded() + " bytes/s of the disk, less than a floor");
        }
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }

    private static void acceptsAWholeNumberInRange(FuzzedDataProvider data) {
        String key = data.pickValue(List.of(QosKeys.IOPS, QosKeys.READ_IOPS, QosKeys.WRITE_BPS,
                QosKeys.BPS, QosKeys.IO_WEIGHT, QosKeys.IOPS_FLOOR, QosKeys.WRITE_BPS_FLOOR,
                QosKeys.READ_IOPS_FLOOR));
        long max = switch (key) {
            case QosKeys.IO_WEIGHT -> IoCostWeight.MAX;
            case QosKeys.IOPS, QosKeys.READ_IOPS, QosKeys.IOPS_FLOOR,
                 QosKeys.READ_IOPS_FLOOR -> IoLimits.MAX_IOPS;
            default -> IoLimits.MAX_BPS;
        };
        long value = data.consumeLong(1, max);
        Map<String, String> fields = VolumeTags.qosTags(QosParameters.parse(Map.of(key, Long.toString(value))));
        assertTrue(fields.containsValue(Long.toString(value)), () -> key + "=" + value + " gave " + fields);
    }

    private static String key(FuzzedDataProvider data) {
        return data.consumeInt(0, 7) == 0 ? data.consumeString(12) : data.pickValue(QosKeys.KEYS);
    }

    private static String value(FuzzedDataProvider data) {
        return switch (data.consumeInt(0, 3)) {
            case 0 -> data.pickValue(WORDS);
            case 1 -> data.consumeString(24);
            default -> {
                StringBuilder text = new StringBuilder();
                if (data.consumeInt(0, 7) == 0) {
                    text.append(data.pickValue(new String[] {"+", "-", " "}));
                }
                text.append(data.consumeLong(0, Long.MAX_VALUE) >>> data.consumeInt(0, 63));
                if (data.consumeBoolean()) {
                    text.append('.').append(data.consumeInt(0, 999));
                }
                yield text.append(data.pickValue(SUFFIXES)).toString();
            }
        };
    }

    private static void assertNoControlCharacter(String message) {
        assertTrue(message.codePoints().noneMatch(c -> c < 0x20 || (c >= 0x7f && c <= 0x9f)
                        || Character.getType(c) == Character.FORMAT), () -> "a control character in: " + message);
    }
}
