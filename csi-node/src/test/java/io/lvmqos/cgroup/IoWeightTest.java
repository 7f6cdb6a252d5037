package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class IoWeightTest {

    @Test
    void parsesTheDefaultAndTheDevicesLines() {
        IoWeight weight = IoWeight.parse("default 100\n254:0 800\n8:16 50\n");
        assertEquals(100, weight.defaultWeight());
        assertEquals(Map.of(new DeviceNumber(254, 0), 800, new DeviceNumber(8, 16), 50), weight.perDevice());
        assertEquals(800, weight.on(new DeviceNumber(254, 0)));
        assertEquals(100, weight.on(new DeviceNumber(7, 0)));
    }

    @Test
    void aSystemdSetDefaultIsThatCgroupsBase() {
        assertEquals(500, IoWeight.parse("default 500\n").on(new DeviceNumber(254, 0)));
    }

    @Test
    void linesAreWhatTheKernelReads() {
        assertEquals("254:0 800", IoWeight.line(new DeviceNumber(254, 0), 800));
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
