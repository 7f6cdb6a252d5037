package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.fuzz.FuzzReport;
import io.lvmqos.volume.IoCostWeight;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzes {@link IoWeight#parse}, which reads a cgroup's io.weight back after the driver sets a
 * pod's weight on a disk.
 *
 * <p>Property: for any text, {@code parse} returns the weights or refuses with DriverException.Internal
 * "io.weight line is not understood: 'LINE': WHY" naming one of its lines, never another exception
 * (no bare NumberFormatException). A file as io.cost writes it,
 * "default N" then "MAJ:MIN N" per device with weights in the kernel's 1..10000, parses to exactly
 * those weights (no default line: the kernel's 100); the line {@link IoWeight#line} writes parses
 * back to its device and weight.
 */
class IoWeightFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(IoWeightFuzzTest.class);
    private static final String[] WORDS = {"default", "8:0", "100", "0", "10000", "10001", "-1", "2147483648", " ",
            "\t", "\n", "x", "default default", "8:0 default"};

    @FuzzTest
    void readsEveryFileTheKernelWrites(FuzzedDataProvider data) {
        REPORT.count();
        switch (data.consumeInt(0, 2)) {
            case 0 -> {
                StringBuilder text = new StringBuilder();
                for (int n = data.consumeInt(0, 12); n > 0; n--) {
                    text.append(data.consumeBoolean() ? data.pickValue(WORDS) : data.consumeString(8));
                }
                NotUnderstood.readOrRefuse(IoWeight.FILE, text.toString(), () -> IoWeight.parse(text.toString()));
            }
            case 1 -> {
                DeviceNumber device = device(data);
                IoCostWeight weight = new IoCostWeight(data.consumeInt(IoCostWeight.MIN, IoCostWeight.MAX));
                IoWeight read = IoWeight.parse(IoWeight.line(device, weight));
                assertEquals(Map.of(device, weight), read.perDevice());
                assertEquals(weight, read.on(device));
            }
            default -> {
                boolean hasDefault = data.consumeBoolean();
                IoCostWeight dflt = hasDefault ? new IoCostWeight(data.consumeInt(IoCostWeight.MIN, IoCostWeight.MAX))
                        : IoCostWeight.DEFAULT;
                StringBuilder text = new StringBuilder(hasDefault ? "default " + dflt + "\n" : "");
                Map<DeviceNumber, IoCostWeight> devices = new LinkedHashMap<>();
                for (int n = data.consumeInt(0, 6); n > 0; n--) {
                    DeviceNumber device = device(data);
                    IoCostWeight weight = new IoCostWeight(data.consumeInt(IoCostWeight.MIN, IoCostWeight.MAX));
                    devices.put(device, weight);
                    text.append(device).append(' ').append(weight).append('\n');
                }
                IoWeight read = IoWeight.parse(text.toString());
                assertEquals(new IoWeight(dflt, devices), read, text::toString);
            }
        }
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }

    private static DeviceNumber device(FuzzedDataProvider data) {
        return new DeviceNumber(data.consumeInt(0, DeviceNumber.MAX_MAJOR), data.consumeInt(0, DeviceNumber.MAX_MINOR));
    }
}
