package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.fuzz.FuzzReport;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzes {@link BlkioThrottle#parse}, the reader of cgroup v1's blkio.throttle.*_device files.
 *
 * <p>Property: for any text, {@code parse} returns each device's value or refuses with
 * DriverException.Internal "FILE line is not understood: 'LINE': WHY" naming the file and one of
 * the text's lines, never another exception (no bare NumberFormatException). A
 * file as the kernel writes it, lines "MAJ:MIN value" with any u64 value (all ones included, which
 * is "no limit"), with blanks around, parses to exactly those values.
 */
class BlkioThrottleFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(BlkioThrottleFuzzTest.class);
    private static final String[] WORDS = {"8:0", "0", "18446744073709551615", "18446744073709551616", "-1", " ", "\t",
            "\n", "\r\n", ":", "4096:0", "8:1048576", "x"};

    @FuzzTest
    void readsEveryFileTheKernelWrites(FuzzedDataProvider data) {
        REPORT.count();
        if (data.consumeBoolean()) {
            StringBuilder text = new StringBuilder();
            for (int n = data.consumeInt(0, 12); n > 0; n--) {
                text.append(data.consumeBoolean() ? data.pickValue(WORDS) : data.consumeString(8));
            }
            BlkioThrottle file = data.pickValue(BlkioThrottle.values());
            NotUnderstood.readOrRefuse(file.file, text.toString(), () -> file.parse(text.toString()));
            return;
        }
        Map<DeviceNumber, Long> values = new LinkedHashMap<>();
        StringBuilder text = new StringBuilder();
        for (int n = data.consumeInt(0, 6); n > 0; n--) {
            DeviceNumber device = new DeviceNumber(data.consumeInt(0, DeviceNumber.MAX_MAJOR),
                    data.consumeInt(0, DeviceNumber.MAX_MINOR));
            long value = data.consumeLong();
            values.remove(device);
            values.put(device, value);
            text.append(data.pickValue(new String[] {"", " "})).append(device).append(data.pickValue(new String[] {" ", "\t", "  "}))
                    .append(Long.toUnsignedString(value)).append(data.pickValue(new String[] {"", " "})).append('\n');
        }
        Map<DeviceNumber, Long> read = data.pickValue(BlkioThrottle.values()).parse(text.toString());
        assertEquals(values, read, text::toString);
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }
}
