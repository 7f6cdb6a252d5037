package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.fuzz.FuzzReport;
import io.lvmqos.volume.IoLimits;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzes {@link IoMax#parse}, which reads a pod cgroup's io.max back after every write and before
 * every removal.
 *
 * <p>Property: for any text, {@code parse} returns each device's limits or refuses with
 * DriverException.Internal "io.max line is not understood: 'LINE': WHY" naming one of its lines
 * (INTERNAL: the kernel answered in a way the driver does not understand), never another exception
 * (no bare NumberFormatException). It reads whatever the kernel can write:
 * lines of any devices, each key "max" or a number the kernel holds (bytes 1..2^64-2, I/O operations
 * 1..2^32-2), keys in any order, keys it does not know, blanks around; a value beyond what the driver
 * can write reads as the largest it can. And the line {@link IoMax#line} writes for any limits parses
 * back to those limits.
 */
class IoMaxFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(IoMaxFuzzTest.class);
    private static final String[] KEYS = {"rbps", "wbps", "riops", "wiops"};
    private static final String[] WORDS = {"max", "0", "1", "-1", "", "=", "18446744073709551615", "18446744073709551616",
            "9223372036854775808", "4294967295", "x", " ", "\t", "\n", "8:0", "rbps", "rbps=", "=max"};

    @FuzzTest
    void readsEveryFileTheKernelWrites(FuzzedDataProvider data) {
        REPORT.count();
        switch (data.consumeInt(0, 2)) {
            case 0 -> {
                StringBuilder text = new StringBuilder();
                for (int n = data.consumeInt(0, 12); n > 0; n--) {
                    text.append(data.consumeBoolean() ? data.pickValue(WORDS) : data.consumeString(8));
                }
                readOrRefuse(text.toString());
            }
            case 1 -> {
                DeviceNumber device = device(data);
                IoLimits limits = new IoLimits(value(data, IoLimits.MAX_BPS), value(data, IoLimits.MAX_BPS),
                        value(data, IoLimits.MAX_IOPS), value(data, IoLimits.MAX_IOPS));
                Map<DeviceNumber, IoLimits> read = IoMax.parse(IoMax.line(device, limits) + "\n");
                assertEquals(limits.isUnlimited() ? Map.of(device, IoLimits.NONE) : Map.of(device, limits), read);
            }
            default -> {
                Map<DeviceNumber, String> lines = new LinkedHashMap<>();
                for (int n = data.consumeInt(0, 5); n > 0; n--) {
                    StringBuilder line = new StringBuilder();
                    for (int k = data.consumeInt(0, 5); k > 0; k--) {
                        String key = data.consumeInt(0, 5) == 0 ? "wrbps" : data.pickValue(KEYS);
                        boolean iops = key.endsWith("iops");
                        long value = data.consumeLong(1, iops ? 0xffff_fffeL : Long.MAX_VALUE);
                        line.append(' ').append(key).append('=').append(data.consumeInt(0, 3) == 0 ? "max"
                                : Long.toUnsignedString(iops ? value : value + data.consumeLong(0, Long.MAX_VALUE - 1)));
                    }
                    lines.put(device(data), line.toString());
                }
                StringBuilder text = new StringBuilder();
                lines.forEach((device, line) -> text.append(device).append(line).append('\n'));
                IoMax.parse(text.toString()); // a file the kernel could have written is read, not refused
            }
        }
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }

    private static void readOrRefuse(String text) {
        NotUnderstood.readOrRefuse(IoMax.FILE, text, () -> IoMax.parse(text));
    }

    private static DeviceNumber device(FuzzedDataProvider data) {
        return new DeviceNumber(data.consumeInt(0, DeviceNumber.MAX_MAJOR), data.consumeInt(0, DeviceNumber.MAX_MINOR));
    }

    private static OptionalLong value(FuzzedDataProvider data, long max) {
        return data.consumeBoolean() ? OptionalLong.empty() : OptionalLong.of(data.consumeLong(1, max));
    }
}
