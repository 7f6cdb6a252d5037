package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.lvm.LogicalVolume.PoolHealth;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

class ThinPoolSpaceTest {

    private static LogicalVolume pool(double data, double metadata, PoolHealth health) {
        return new LogicalVolume("vg0", "thinpool", 256L << 20, LogicalVolume.SegmentType.THIN_POOL, true, true, false,
                Optional.of(true), Map.of(), Optional.empty(), Optional.empty(), Instant.EPOCH,
                Path.of("/dev/mapper/vg0-thinpool"), OptionalDouble.of(data), OptionalDouble.of(metadata), health);
    }

    @Test
    void aPoolWithRoomHasNoProblem() {
        assertEquals(Optional.empty(), ThinPoolSpace.problemOf(pool(99.99, 13.18, PoolHealth.OK)));
    }

    @Test
    void aPoolOutOfDataSpaceIsNamedWithItsPercentagesAndTheCommandThatExtendsIt() {
        String message = ThinPoolSpace.problemOf(pool(100, 13.18, PoolHealth.OUT_OF_DATA_SPACE)).orElseThrow();
        assertTrue(message.startsWith("thin pool vg0/thinpool is out of data space (data 100.00%, metadata 13.18%): "),
                message);
        assertTrue(message.endsWith("; extend the pool: lvextend -L +<size> vg0/thinpool"), message);
    }

    @Test
    void aPoolWhoseMetadataWentReadOnlyNamesTheMetadataExtension() {
        String message = ThinPoolSpace.problemOf(pool(40, 99.5, PoolHealth.METADATA_READ_ONLY)).orElseThrow();
        assertTrue(message.contains("metadata read-only"), message);
        assertTrue(message.contains("lvextend --poolmetadatasize +<size> vg0/thinpool"), message);
    }

    @Test
    void aFailedPoolNamesTheRepair() {
        LogicalVolume failed = new LogicalVolume("vg0", "thinpool", 256L << 20, LogicalVolume.SegmentType.THIN_POOL,
                true, true, false, Optional.of(true), Map.of(), Optional.empty(), Optional.empty(), Instant.EPOCH,
                Path.of("/dev/mapper/vg0-thinpool"), OptionalDouble.empty(), OptionalDouble.empty(), PoolHealth.FAILED);
        String message = ThinPoolSpace.problemOf(failed).orElseThrow();
        assertTrue(message.startsWith("thin pool vg0/thinpool has failed (data unknown, metadata unknown): "), message);
        assertTrue(message.contains("lvconvert --repair vg0/thinpool"), message);
    }

    @Test
    void aPoolAtOneHundredPercentIsFullEvenBeforeTheKernelSaysSo() {
        assertTrue(ThinPoolSpace.problemOf(pool(100, 10, PoolHealth.OK)).orElseThrow()
                .startsWith("thin pool vg0/thinpool is full"));
    }
}
