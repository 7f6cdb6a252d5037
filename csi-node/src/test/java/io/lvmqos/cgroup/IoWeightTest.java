package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lvmqos.device.DeviceNumber;
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
}
