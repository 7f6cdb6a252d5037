package io.lvmqos.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.errors.DriverException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DeviceNumberTest {

    @ParameterizedTest(name = "dev_t {0} is {1}:{2}")
    @CsvSource({
            "0x00000800, 8, 0",
            "0x000007ff, 7, 255",
            "0x00100700, 7, 256",
            "0x0010072c, 7, 300",
            "0x0000fd04, 253, 4",
            "0xfff103ff, 259, 1048575",
            "0x000fff00, 4095, 0",
            "0x00000000, 0, 0",
    })
    void splitsDevTTheWayTheKernelDoes(String dev, int major, int minor) {
        long value = Long.decode(dev);
        DeviceNumber number = DeviceNumber.fromDev(value);
        assertEquals(new DeviceNumber(major, minor), number);
        assertEquals(value, makedev(major, minor));
    }

    /** glibc's gnu_dev_makedev, the inverse of the split: the table's dev_t values are consistent. */
    private static long makedev(long major, long minor) {
        return ((major & 0xfffff000L) << 32) | ((major & 0xfffL) << 8) | ((minor & 0xffffff00L) << 12) | (minor & 0xffL);
    }

    @Test
    void minorAbove255IsNotTheRemainderOfDividingBy256() {
        DeviceNumber number = DeviceNumber.fromDev(0x0010072cL);
        assertEquals(7, number.major());
        assertEquals(300, number.minor());
    }

    @Test
    void printsAndParsesMajorColonMinor() {
        assertEquals("259:1048575", new DeviceNumber(259, 1048575).toString());
        assertEquals(new DeviceNumber(7, 300), DeviceNumber.parse("7:300"));
    }

    @Test
    void refusesNumbersTheKernelCannotHold() {
        assertThrows(IllegalArgumentException.class, () -> new DeviceNumber(4096, 0));
        assertThrows(IllegalArgumentException.class, () -> new DeviceNumber(0, 1 << 20));
        assertThrows(IllegalArgumentException.class, () -> DeviceNumber.fromDev(0x0000100000000000L));
        assertThrows(IllegalArgumentException.class, () -> DeviceNumber.parse("7:0 "));
        assertThrows(IllegalArgumentException.class, () -> DeviceNumber.parse("-1:0"));
    }

    @Test
    void aCharacterDeviceIsNotABlockDevice() {
        assertThrows(DriverException.FailedPrecondition.class, () -> DeviceNumber.of(Path.of("/dev/null")));
    }

    @Test
    void aRegularFileIsNotABlockDevice(@TempDir Path dir) throws Exception {
        Path file = java.nio.file.Files.createFile(dir.resolve("disk.img"));
        assertThrows(DriverException.FailedPrecondition.class, () -> DeviceNumber.of(file));
    }

    @Test
    void aMissingDeviceIsNotFound(@TempDir Path dir) {
        assertThrows(DriverException.NotFound.class, () -> DeviceNumber.of(dir.resolve("nothing")));
    }

    @Test
    void anInactiveLvsMissingNodeIsNoDeviceButSomethingElseIsStillRefused(@TempDir Path dir) {
        assertEquals(java.util.Optional.empty(), DeviceNumber.ofActive(dir.resolve("nothing")));
        assertThrows(DriverException.FailedPrecondition.class, () -> DeviceNumber.ofActive(Path.of("/dev/null")));
    }
}
