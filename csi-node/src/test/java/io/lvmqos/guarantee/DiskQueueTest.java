package io.lvmqos.guarantee;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lvmqos.device.DeviceNumber;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A disk's sysfs files as the kernel writes them, read back (a tree made in a temporary directory). */
class DiskQueueTest {

    @TempDir
    Path sys;

    DiskQueue disk() throws IOException {
        Path dir = sys.resolve("dev/block/254:0");
        Files.createDirectories(dir.resolve("queue"));
        Files.writeString(dir.resolve("size"), "8388608\n");
        // fields: reads, merged, sectors read, ms, writes, merged, sectors written, ms, in flight, ...
        Files.writeString(dir.resolve("stat"), "    4000        0    32000     5000     2000        0   409600     900"
                + "        0     6000     5900        0        0        0        0        0        0\n");
        Files.writeString(dir.resolve("queue/scheduler"), "[mq-deadline] none\n");
        Files.writeString(dir.resolve("queue/nomerges"), "0\n");
        return new DiskQueue(sys, DeviceNumber.parse("254:0"));
    }

    @Test
    void sizeIsCountedInSectorsOf512Bytes() throws IOException {
        assertEquals(4L << 30, disk().sizeBytes());
    }

    @Test
    void countersAreOperationsAndBytesPerDirection() throws IOException {
        assertEquals(new DiskQueue.Counters(4000, 32000L * 512, 2000, 409600L * 512, 6000), disk().counters());
    }

    @Test
    void theSchedulerInUseIsTheBracketedOne() throws IOException {
        DiskQueue disk = disk();
        assertEquals(Optional.of("mq-deadline"), disk.scheduler());
        Files.writeString(sys.resolve("dev/block/254:0/queue/scheduler"), "none\n");
        assertEquals(Optional.empty(), disk.scheduler(), "a queue without a choice shows none bracketed");
    }

    @Test
    void aDifferenceOfCountersIsWhatHappenedBetween() {
        DiskQueue.Counters before = new DiskQueue.Counters(10, 4096, 5, 8192, 100);
        DiskQueue.Counters after = new DiskQueue.Counters(110, 413696, 5, 8192, 1100);
        assertEquals(new DiskQueue.Counters(100, 409600, 0, 0, 1000), after.minus(before));
    }
}
