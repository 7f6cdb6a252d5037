package io.lvmqos.node;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.lvm.LogicalVolume;
import io.lvmqos.volume.LvmNames;
import io.lvmqos.volume.ManagedVolume;
import io.lvmqos.volume.QosSpec;
import io.lvmqos.volume.VolumeId;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

/** Which volumes are formatted as reading zeros throughout (StageFlow.readsAsZeros). */
class ReadsAsZerosTest {

    private static ManagedVolume volume(LogicalVolume.SegmentType type, Optional<Boolean> zeroing,
                                        Optional<String> source) {
        String name = LvmNames.volumeLvName("pvc-1");
        LogicalVolume lv = new LogicalVolume("lvmqos", name, 1L << 30, type, true, false, false, zeroing, Map.of(),
                type == LogicalVolume.SegmentType.THIN ? Optional.of("thinpool") : Optional.empty(), Optional.empty(),
                Instant.EPOCH, Path.of("/dev/lvmqos/" + name), OptionalDouble.of(0), OptionalDouble.empty(),
                LogicalVolume.PoolHealth.OK);
        return new ManagedVolume(VolumeId.issue(VolumeId.Kind.VOLUME, "node-1", "lvmqos", name), "pvc-1", lv,
                1L << 30, "", QosSpec.NONE, source);
    }

    @Test
    void aNewThinVolumeOfAZeroingPoolReadsAsZeros() {
        assertTrue(StageFlow.readsAsZeros(volume(LogicalVolume.SegmentType.THIN, Optional.of(true), Optional.empty())));
    }

    @Test
    void aSnapshotOrCloneHoldsItsSourcesData() {
        assertFalse(StageFlow.readsAsZeros(volume(LogicalVolume.SegmentType.THIN, Optional.of(true),
                Optional.of("snapshot/node-1/lvmqos/snap-1"))));
    }

    @Test
    void aPoolThatDoesNotZeroOrIsNotKnownToZeroMayHandOutOldBlocks() {
        assertFalse(StageFlow.readsAsZeros(volume(LogicalVolume.SegmentType.THIN, Optional.of(false), Optional.empty())));
        assertFalse(StageFlow.readsAsZeros(volume(LogicalVolume.SegmentType.THIN, Optional.empty(), Optional.empty())));
    }

    @Test
    void aLinearVolumeHoldsWhateverItsExtentsHeld() {
        assertFalse(StageFlow.readsAsZeros(volume(LogicalVolume.SegmentType.LINEAR, Optional.of(true),
                Optional.empty())));
    }
}
