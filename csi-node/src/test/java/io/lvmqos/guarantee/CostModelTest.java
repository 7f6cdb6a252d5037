package io.lvmqos.guarantee;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.volume.DiskCapacity;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The io.cost model's six figures: read from the kernel's line, written back, kept in a tag, turned into capacity. */
class CostModelTest {

    /** What io.cost.model printed for a qemu disk throttled to 400 IOPS, after a calibration. */
    static final String KERNEL_LINE = "ctrl=user model=linear rbps=412316860 rseqiops=402 rrandiops=399 wbps=401604608"
            + " wseqiops=398 wrandiops=397";
    static final CostModel MODEL = new CostModel(412316860, 402, 399, 401604608, 398, 397);

    @Test
    void theKernelsLineIsReadWhole() {
        assertEquals(Optional.of(MODEL), CostModel.fromSettings(CostModel.settingsOf(KERNEL_LINE)));
    }

    @Test
    void itsSettingsAreWhatIoCostModelTakes() {
        assertEquals(KERNEL_LINE, MODEL.settings());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ctrl=auto", "rbps=1 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5",
            "rbps=1 rseqiops=2 rrandiops=0 wbps=4 wseqiops=5 wrandiops=6",
            "rbps=1 rseqiops=2 rrandiops=1.5 wbps=4 wseqiops=5 wrandiops=6",
            "rbps=1 rseqiops=2 rrandiops=-3 wbps=4 wseqiops=5 wrandiops=6",
            "rbps=99999999999999999999 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 wrandiops=6"})
    void anIncompleteOrOddModelIsNoModel(String settings) {
        assertEquals(Optional.empty(), CostModel.fromSettings(CostModel.settingsOf(settings)));
    }

    @Test
    void aModelOfZeroIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new CostModel(1, 1, 0, 1, 1, 1));
    }

    @Test
    void capacityIsRandomOperationsAndSequentialBytesPerDirectionAtTheLowestVrate() {
        DiskCapacity capacity = MODEL.capacity(95);
        assertEquals(OptionalLong.of(379), capacity.readIops()); // floor(399 * 0.95)
        assertEquals(OptionalLong.of(377), capacity.writeIops());
        assertEquals(OptionalLong.of(391701017), capacity.readBps());
        assertEquals(OptionalLong.of(381524377), capacity.writeBps());
        assertEquals(OptionalLong.of(377), capacity.iops(), "both directions: the slower one");
    }

    @Test
    void aCalibrationRoundTripsThroughItsVolumeGroupTag() {
        Calibration calibration = new Calibration(MODEL, 4L << 30, Instant.ofEpochSecond(1_796_000_000L));
        String tag = calibration.tag();
        assertEquals("lvmqos.iocost=rbps:412316860/rseqiops:402/rrandiops:399/wbps:401604608/wseqiops:398/"
                + "wrandiops:397/disk:4294967296/at:1796000000", tag);
        assertTrue(tag.matches("[A-Za-z0-9_+.\\-/=!:&#]{1,1024}"), "LVM's tag alphabet: " + tag);
        assertEquals(Optional.of(calibration), Calibration.fromTags(List.of("other=1", tag)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"lvmqos.iocost=", "lvmqos.iocost=rbps:1", "lvmqos.iocost=rbps:1/rseqiops:2/rrandiops:3/"
            + "wbps:4/wseqiops:5/wrandiops:6/disk:0/at:1", "lvmqos.iocost=rbps:1/rseqiops:2/rrandiops:3/wbps:4/"
            + "wseqiops:5/wrandiops:6/disk:10/at:x", "lvmqos.iocost=rbps/rseqiops:2"})
    void aDamagedTagIsNoCalibration(String tag) {
        assertEquals(Optional.empty(), Calibration.fromTags(List.of(tag)));
        assertTrue(Calibration.isCalibrationTag(tag), "and it is still known as one, so a new calibration replaces it");
    }

    @Test
    void theLowestVrateIsReadFromTheKernelsQosLine() {
        assertEquals(95.0, IoCostModels.minVrate(Map.of("enable", "1", "min", "95.00", "max", "95.00")));
        assertEquals(100.0, IoCostModels.minVrate(Map.of("enable", "1")));
    }
}
