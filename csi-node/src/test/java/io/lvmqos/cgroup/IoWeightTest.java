package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoCostWeight;
import java.util.Map;
import org.junit.jupiter.api.Test;

class IoWeightTest {

    private static IoCostWeight w(int value) {
        return new IoCostWeight(value);
    }

    @Test
    void parsesTheDefaultAndTheDevicesLines() {
        IoWeight weight = IoWeight.parse("default 100\n254:0 800\n8:16 50\n");
        assertEquals(IoCostWeight.DEFAULT, weight.defaultWeight());
        assertEquals(Map.of(new DeviceNumber(254, 0), w(800), new DeviceNumber(8, 16), w(50)), weight.perDevice());
        assertEquals(w(800), weight.on(new DeviceNumber(254, 0)));
        assertEquals(w(100), weight.on(new DeviceNumber(7, 0)));
    }

    @Test
    void aSystemdSetDefaultIsThatCgroupsBase() {
        assertEquals(w(500), IoWeight.parse("default 500\n").on(new DeviceNumber(254, 0)));
    }

    @Test
    void aFileWithoutADefaultLineHasTheKernelsDefault() {
        assertEquals(IoCostWeight.DEFAULT, IoWeight.parse("254:0 800\n").defaultWeight());
    }

    @Test
    void aWeightOutsideTheKernelsRangeIsNotUnderstood() {
        assertEquals("io.weight line is not understood: '254:0 0': io.cost weight 0 is out of the kernel's range 1..10000",
                assertThrows(DriverException.Internal.class, () -> IoWeight.parse("254:0 0\n")).getMessage());
    }

    @Test
    void linesAreWhatTheKernelReads() {
        assertEquals("254:0 800", IoWeight.line(new DeviceNumber(254, 0), w(800)));
        assertEquals("254:0 default", IoWeight.removal(new DeviceNumber(254, 0)));
    }

    @Test
    void aLineItCannotReadIsRefusedAsInternalWithTheLine() {
        assertEquals("io.weight line is not understood: 'default x': For input string: \"x\"",
                assertThrows(DriverException.Internal.class, () -> IoWeight.parse("default x\n")).getMessage());
        assertEquals("io.weight line is not understood: '254:0 99999999999': For input string: \"99999999999\"",
                assertThrows(DriverException.Internal.class, () -> IoWeight.parse("254:0 99999999999\n")).getMessage());
    }
}
