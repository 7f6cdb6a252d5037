package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The guarantee keys of a StorageClass and a VolumeAttributesClass: ioWeight and the floors. */
class GuaranteeParametersTest {

    @Test
    void ioWeightIsTheWeight() {
        Guarantee guarantee = QosParameters.parse(Map.of("ioWeight", "800")).guarantee();
        assertEquals(Optional.of(new IoCostWeight(800)), guarantee.weight());
        assertEquals(0, guarantee.iopsNeeded());
    }

    @ParameterizedTest(name = "ioWeight=\"{0}\"")
    @ValueSource(strings = {"0", "10001", "1.5", "abc", "-5", "1e3", "", "800 "})
    void ioWeightOutsideTheKernelsWholeNumbersIsRefused(String value) {
        DriverException e = assertThrows(DriverException.InvalidArgument.class,
                () -> QosParameters.parse(Map.of("ioWeight", value)));
        assertTrue(e.getMessage().contains("ioWeight"), e.getMessage());
        assertTrue(e.getMessage().contains("1 to 10000"), e.getMessage());
    }

    @Test
    void theKernelsBoundsAreAccepted() {
        assertEquals(Optional.of(new IoCostWeight(1)), QosParameters.parse(Map.of("ioWeight", "1")).guarantee().weight());
        assertEquals(Optional.of(new IoCostWeight(10000)), QosParameters.parse(Map.of("ioWeight", "10000")).guarantee().weight());
    }

    @Test
    void perDirectionFloorsAddUp() {
        Guarantee guarantee = QosParameters.parse(Map.of("readIOPSFloor", "150", "writeIOPSFloor", "50",
                "writeBPSFloor", "10Mi")).guarantee();
        assertEquals(200, guarantee.iopsNeeded());
        assertEquals(10L << 20, guarantee.bpsNeeded());
    }

    @Test
    void iopsFloorCountsBothDirections() {
        assertEquals(200, QosParameters.parse(Map.of("iopsFloor", "200")).guarantee().iopsNeeded());
    }

    @Test
    void byteFloorsThatAddUpBeyondALongNeedTheMostALongHoldsAndAreRefusedByAnyDisk() {
        // QosParametersFuzzTest's finding: the sum wrapped around to a negative, so no floor was seen and none admitted
        Guarantee guarantee = QosParameters.parse(Map.of("readBPSFloor", "9223372036854775807", "writeBPSFloor", "8E"))
                .guarantee();
        assertEquals(Long.MAX_VALUE, guarantee.bpsNeeded());
        assertTrue(guarantee.hasFloor());
        GuaranteePolicy policy = new GuaranteePolicy(Set.of("vg"),
                Map.of("vg", DiskCapacity.symmetric(OptionalLong.empty(), OptionalLong.of(1L << 40))), Map.of(), Optional.empty());
        assertThrows(DriverException.ResourceExhausted.class, () -> policy.admit("vg", guarantee, List.of()));
    }

    @Test
    void aChangeWithAFloorForBothDirectionsBesideALargerPerDirectionOneNeedsTheLarger() {
        // QosParametersFuzzTest's finding: iopsFloor alone was counted, below readIOPSFloor
        Guarantee guarantee = QosSpec.NONE.changedBy(QosParameters.parseMutable(Map.of("iopsFloor", "10001",
                "readIOPSFloor", "4294967294"))).guarantee();
        assertEquals(4294967294L, guarantee.iopsNeeded());
        assertThrows(DriverException.InvalidArgument.class, () -> guarantee.requireConsistent(IoLimits.NONE));
    }

    @Test
    void aFloorForBothDirectionsBesideAPerDirectionOneIsRefused() {
        DriverException e = assertThrows(DriverException.InvalidArgument.class,
                () -> QosParameters.parse(Map.of("iopsFloor", "200", "readIOPSFloor", "100")));
        assertTrue(e.getMessage().contains("iopsFloor") && e.getMessage().contains("readIOPSFloor"), e.getMessage());
    }

    @ParameterizedTest(name = "{0}=\"{1}\"")
    @CsvSource({"iopsFloor,0", "iopsFloor,1.5", "iopsFloor,abc", "readBPSFloor,-1", "bpsFloor,1.5"})
    void floorsMustBePositiveWholeNumbers(String key, String value) {
        DriverException e = assertThrows(DriverException.InvalidArgument.class,
                () -> QosParameters.parse(Map.of(key, value)));
        assertTrue(e.getMessage().contains(key), e.getMessage());
    }

    @ParameterizedTest(name = "cap {0}={1}, floor {2}={3}")
    @CsvSource({"readIOPS,100,readIOPSFloor,150", "writeBPS,1Mi,writeBPSFloor,2Mi", "iops,100,iopsFloor,201"})
    void aFloorAboveTheCapInItsDirectionIsRefused(String capKey, String cap, String floorKey, String floor) {
        QosSpec spec = QosParameters.parse(Map.of(capKey, cap, floorKey, floor));
        DriverException e = assertThrows(DriverException.InvalidArgument.class,
                () -> spec.guarantee().requireConsistent(spec.forSize(1L << 30)));
        assertTrue(e.getMessage().contains(floorKey) && e.getMessage().contains("above"), e.getMessage());
    }

    @Test
    void aFloorUpToBothDirectionsCapsTogetherIsKept() {
        QosSpec spec = QosParameters.parse(Map.of("iops", "100", "iopsFloor", "200"));
        spec.guarantee().requireConsistent(spec.forSize(1L << 30));
    }

    @Test
    void guaranteesSurviveTheTagsRoundTrip() {
        QosSpec spec = QosParameters.parse(Map.of("iops", "300", "ioWeight", "800", "readIOPSFloor", "100",
                "bpsFloor", "20Mi"));
        assertEquals(spec, VolumeTags.qosOf(VolumeTags.qosTags(spec).entrySet().stream()
                .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue))));
    }

    @Test
    void aClassChangeSetsAndTakesAwayGuarantees() {
        QosSpec before = QosParameters.parse(Map.of("ioWeight", "800", "iopsFloor", "200", "iops", "500"));
        QosSpec after = before.changedBy(QosParameters.parseMutable(Map.of("ioWeight", "none", "iopsFloor", "300")));
        assertEquals(Optional.empty(), after.guarantee().weight());
        assertEquals(OptionalLong.of(300), after.guarantee().iopsFloor());
        assertEquals(before.readIops(), after.readIops());
    }

    @Test
    void ofTwoBadKeysTheFirstInTheKeysOrderIsNamed() {
        String message = assertThrows(DriverException.InvalidArgument.class,
                () -> QosParameters.parse(Map.of("readIOPSFloor", "y", "iopsFloor", "x"))).getMessage();
        assertTrue(message.startsWith("parameter iopsFloor=\"x\""), message);
    }

    @Test
    void describeNamesTheParameters() {
        assertEquals("ioWeight=800, iopsFloor=200",
                QosParameters.describe(QosParameters.parse(Map.of("iopsFloor", "200", "ioWeight", "800")).guarantee()));
    }
}
