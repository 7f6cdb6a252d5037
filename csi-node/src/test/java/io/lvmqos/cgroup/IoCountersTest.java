package io.lvmqos.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.device.DeviceNumber;
import org.junit.jupiter.api.Test;

class IoCountersTest {

    private static final DeviceNumber DM_3 = new DeviceNumber(253, 3);

    /** As a 6.1 kernel prints it for a pod that wrote to a dm device and (remapped) its disk. */
    private static final String IO_STAT = """
            98:0 rbytes=4096 wbytes=25165824 rios=1 wios=24 dbytes=0 dios=0
            253:3 rbytes=1048576 wbytes=25165824 rios=2 wios=24 dbytes=0 dios=0
            253:30 rbytes=7 wbytes=7 rios=7 wios=7 dbytes=0 dios=0
            """;

    @Test
    void readsTheDevicesLineOfIoStat() {
        assertEquals(new IoCounters(1048576, 25165824, 2, 24), IoCounters.fromIoStat(IO_STAT, DM_3));
    }

    @Test
    void aDeviceTheCgroupHasNotUsedCountsZero() {
        assertEquals(IoCounters.ZERO, IoCounters.fromIoStat(IO_STAT, new DeviceNumber(253, 4)));
        assertEquals(IoCounters.ZERO, IoCounters.fromIoStat("", DM_3));
    }

    @Test
    void aDeviceListedWithoutFieldsCountsZero() {
        // 6.1 lists a device that has a limit but no I/O yet by its number alone
        assertEquals(IoCounters.ZERO, IoCounters.fromIoStat("98:0 rbytes=0 wbytes=4096 rios=0 wios=1 dbytes=0 dios=0\n"
                + "253:3 \n", DM_3));
    }

    @Test
    void keysOtherControllersAddAreIgnored() {
        String withCost = "253:3 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0 cost.vrate=100.00 cost.usage=5"
                + " cost.wait=0 cost.indebt=0 cost.indelay=0 use_delay=0 delay_nsec=0\n";
        assertEquals(new IoCounters(1, 2, 3, 4), IoCounters.fromIoStat(withCost, DM_3));
    }

    @Test
    void countersPastLongMaxSaturate() {
        String huge = "253:3 rbytes=18446744073709551615 wbytes=0 rios=0 wios=0\n";
        assertEquals(Long.MAX_VALUE, IoCounters.fromIoStat(huge, DM_3).readBytes());
    }

    @Test
    void aMalformedLineForTheDeviceIsAnError() {
        var missing = assertThrows(IllegalArgumentException.class,
                () -> IoCounters.fromIoStat("253:3 rbytes=1 wbytes=2 rios=3\n", DM_3));
        assertTrue(missing.getMessage().contains("has no wios"), missing.getMessage());
        var notANumber = assertThrows(IllegalArgumentException.class,
                () -> IoCounters.fromIoStat("253:3 rbytes=x wbytes=2 rios=3 wios=4\n", DM_3));
        assertTrue(notANumber.getMessage().contains("'x'"), notANumber.getMessage());
    }

    @Test
    void readsTheReadAndWriteLinesOfTheBlkioThrottleFiles() {
        String bytes = """
                253:3 Read 1048576
                253:3 Write 4194304
                253:3 Sync 4194304
                253:3 Async 1048576
                253:3 Discard 0
                253:3 Total 5242880
                98:0 Read 9
                98:0 Write 9
                Total 5242898
                """;
        String ops = """
                253:3 Read 1
                253:3 Write 4
                253:3 Total 5
                Total 5
                """;
        assertEquals(new IoCounters(1048576, 4194304, 1, 4), IoCounters.fromBlkio(bytes, ops, DM_3));
        assertEquals(IoCounters.ZERO, IoCounters.fromBlkio("Total 0\n", "Total 0\n", DM_3));
    }
}
