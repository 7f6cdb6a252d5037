package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.volume.IoLimits;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class IoMaxTest {

    static final DeviceNumber LV = new DeviceNumber(253, 300);

    @Test
    void writesAllFourKeysWithMaxForUnlimited() {
        IoLimits limits = new IoLimits(OptionalLong.of(2097152), OptionalLong.empty(), OptionalLong.empty(),
                OptionalLong.of(200));
        assertEquals("253:300 rbps=2097152 wbps=max riops=max wiops=200", IoMax.line(LV, limits));
    }

    @Test
    void removingIsAllMax() {
        assertEquals("253:300 rbps=max wbps=max riops=max wiops=max", IoMax.line(LV, IoLimits.NONE));
    }

    @Test
    void parsesTheKernelsLinesPerDevice() {
        Map<DeviceNumber, IoLimits> parsed = IoMax.parse("""
                8:16 rbps=2097152 wbps=max riops=max wiops=120
                253:300 rbps=max wbps=4194304 riops=1000 wiops=max
                """);
        assertEquals(new IoLimits(OptionalLong.of(2097152), OptionalLong.empty(), OptionalLong.empty(),
                OptionalLong.of(120)), parsed.get(new DeviceNumber(8, 16)));
        assertEquals(new IoLimits(OptionalLong.empty(), OptionalLong.of(4194304), OptionalLong.of(1000),
                OptionalLong.empty()), parsed.get(LV));
    }

    @Test
    void readsAByteRateBeyondALongAsTheLargestLong() {
        // IoMaxFuzzTest's finding: the kernel holds up to 2^64-2, and one such line made the whole file unreadable
        Map<DeviceNumber, IoLimits> parsed = IoMax.parse("""
                8:16 rbps=18446744073709551614 wbps=9223372036854775808 riops=max wiops=max
                253:300 rbps=2097152 wbps=max riops=max wiops=max
                """);
        assertEquals(new IoLimits(OptionalLong.of(Long.MAX_VALUE), OptionalLong.of(Long.MAX_VALUE), OptionalLong.empty(),
                OptionalLong.empty()), parsed.get(new DeviceNumber(8, 16)));
        assertEquals(new IoLimits(OptionalLong.of(2097152), OptionalLong.empty(), OptionalLong.empty(),
                OptionalLong.empty()), parsed.get(LV));
    }

    @Test
    void ignoresKeysItDoesNotKnow() {
        assertEquals(IoLimits.NONE, IoMax.parse("7:0 rbps=max wbps=max riops=max wiops=max rlat=10\n")
                .get(new DeviceNumber(7, 0)));
    }

    @Test
    void anEmptyFileHasNoDevices() {
        assertEquals(Map.of(), IoMax.parse(""));
    }

    @Test
    void parsesV1ThrottleFiles() {
        assertEquals(Map.of(new DeviceNumber(7, 0), 2097152L, new DeviceNumber(8, 0), 10L),
                BlkioThrottle.READ_BPS.parse("7:0 2097152\n8:0 10\n"));
    }

    @Test
    void aLineItCannotReadIsRefusedAsInternalWithTheLine() {
        // a NumberFormatException of a field used to escape bare: only the reader's refusal may leave it
        DriverException.Internal refused = assertThrows(DriverException.Internal.class,
                () -> IoMax.parse("8:16 rbps=max\n253:300 rbps=12x wbps=max\n"));
        assertEquals("io.max line is not understood: '253:300 rbps=12x wbps=max': For input string: \"12x\"",
                refused.getMessage());
        assertInstanceOf(NumberFormatException.class, refused.getCause());
        assertEquals("io.max line is not understood: '8:16x rbps=max': not a MAJ:MIN device number: '8:16x'",
                assertThrows(DriverException.Internal.class, () -> IoMax.parse("8:16x rbps=max")).getMessage());
    }

    @Test
    void aV1ThrottleLineItCannotReadIsRefusedAsInternalWithItsFile() {
        assertEquals("blkio.throttle.write_iops_device line is not understood: '8:0 x1': For input string: \"x1\"",
                assertThrows(DriverException.Internal.class, () -> BlkioThrottle.WRITE_IOPS.parse("7:0 1\n8:0 x1\n"))
                        .getMessage());
        assertEquals("blkio.throttle.read_bps_device line is not understood: '8:0 1 2': expected 'MAJ:MIN value'",
                assertThrows(DriverException.Internal.class, () -> BlkioThrottle.READ_BPS.parse("8:0 1 2\n"))
                        .getMessage());
    }
}
