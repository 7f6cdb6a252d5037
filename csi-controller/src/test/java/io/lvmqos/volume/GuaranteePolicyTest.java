package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
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

/** Which guarantees a node can keep, and admission of floors against a group's declared capacity. */
class GuaranteePolicyTest {

    static final GuaranteePolicy POLICY = new GuaranteePolicy(Set.of("fast", "nocapacity"),
            Map.of("fast", DiskCapacity.symmetric(OptionalLong.of(400), OptionalLong.empty())), Map.of(), Optional.empty());

    static Guarantee floor(long iops) {
        return QosParameters.parse(Map.of("iopsFloor", Long.toString(iops))).guarantee();
    }

    @Test
    void aFloorThatFitsIsAdmitted() {
        assertDoesNotThrow(() -> POLICY.admit("fast", floor(200), List.of(floor(100), floor(100))));
    }

    @Test
    void aFloorThatFillsTheDiskExactlyFits() {
        assertDoesNotThrow(() -> POLICY.admit("fast", floor(200), List.of(floor(200))));
    }

    @Test
    void aFloorBeyondWhatIsLeftIsRefusedWithTheNumbers() {
        DriverException e = assertThrows(DriverException.ResourceExhausted.class,
                () -> POLICY.admit("fast", floor(200), List.of(floor(150), floor(100))));
        assertTrue(e.getMessage().contains("promised 250 IOPS"), e.getMessage());
        assertTrue(e.getMessage().contains("asked 200 IOPS"), e.getMessage());
        assertTrue(e.getMessage().contains("capacity 400 IOPS"), e.getMessage());
        assertTrue(e.getMessage().contains("fast"), e.getMessage());
    }

    @Test
    void aWeightNeedsNoCapacity() {
        assertDoesNotThrow(() -> POLICY.admit("nocapacity",
                QosParameters.parse(Map.of("ioWeight", "800")).guarantee(), List.of()));
    }

    @Test
    void aFloorOnAGroupWithNoDeclaredCapacityIsRefused() {
        DriverException e = assertThrows(DriverException.FailedPrecondition.class,
                () -> POLICY.admit("nocapacity", floor(10), List.of()));
        assertTrue(e.getMessage().contains("--io-capacity=nocapacity:iops=N"), e.getMessage());
    }

    @Test
    void aBytesFloorOnAGroupThatDeclaresOnlyIopsIsRefused() {
        Guarantee bytes = QosParameters.parse(Map.of("bpsFloor", "10Mi")).guarantee();
        DriverException e = assertThrows(DriverException.FailedPrecondition.class, () -> POLICY.admit("fast", bytes, List.of()));
        assertTrue(e.getMessage().contains("bytes/s capacity"), e.getMessage());
    }

    @Test
    void aGuaranteeOnAGroupWithoutIoCostIsRefused() {
        DriverException e = assertThrows(DriverException.FailedPrecondition.class,
                () -> POLICY.requireSupported("slow", QosParameters.parse(Map.of("ioWeight", "800")).guarantee()));
        assertTrue(e.getMessage().contains("ioWeight=800") && e.getMessage().contains("--io-cost=slow"), e.getMessage());
    }

    @Test
    void aGroupWithoutATrustedModelRefusesEveryGuaranteeWithWhatToDo() {
        GuaranteePolicy policy = new GuaranteePolicy(Set.of(), Map.of(), Map.of("raw",
                "its disk has no io.cost model lvmqos trusts: run lvmqos calibrate --volume-group raw"), Optional.empty());
        DriverException e = assertThrows(DriverException.FailedPrecondition.class,
                () -> policy.requireSupported("raw", QosParameters.parse(Map.of("ioWeight", "300")).guarantee()));
        assertTrue(e.getMessage().contains("ioWeight=300") && e.getMessage().contains("lvmqos calibrate --volume-group raw"),
                e.getMessage());
        assertEquals(Optional.empty(), policy.refusalOf("other"));
    }

    @Test
    void floorsAreCountedAgainstTheCapacityOfTheirOwnDirection() {
        // a disk that reads 1000 and writes 250 operations per second
        GuaranteePolicy policy = new GuaranteePolicy(Set.of("ssd"), Map.of("ssd", new DiskCapacity(OptionalLong.of(1000),
                OptionalLong.of(250), OptionalLong.empty(), OptionalLong.empty())), Map.of(), Optional.empty());
        Guarantee reads = QosParameters.parse(Map.of("readIOPSFloor", "500")).guarantee();
        Guarantee writes = QosParameters.parse(Map.of("writeIOPSFloor", "125")).guarantee();
        // half the reads and half the writes: the whole disk, and not a thousandth more
        assertDoesNotThrow(() -> policy.admit("ssd", reads, List.of(writes)));
        assertThrows(DriverException.ResourceExhausted.class,
                () -> policy.admit("ssd", QosParameters.parse(Map.of("writeIOPSFloor", "1")).guarantee(),
                        List.of(reads, writes)));
        // a floor for both directions is counted at the slower one: 125 of 250
        Guarantee both = QosParameters.parse(Map.of("iopsFloor", "125")).guarantee();
        assertDoesNotThrow(() -> policy.admit("ssd", both, List.of(reads)));
        assertThrows(DriverException.ResourceExhausted.class, () -> policy.admit("ssd", both, List.of(reads, floor(1))));
    }

    @Test
    void aNodeThatKeepsNoGuaranteeSaysWhy() {
        GuaranteePolicy v1 = GuaranteePolicy.none("this node runs cgroup v1");
        DriverException e = assertThrows(DriverException.FailedPrecondition.class,
                () -> v1.requireSupported("fast", QosParameters.parse(Map.of("ioWeight", "800")).guarantee()));
        assertTrue(e.getMessage().contains("cgroup v1"), e.getMessage());
        assertEquals(Set.of(), v1.ioCostGroups());
    }

    @Test
    void nothingAskedIsAlwaysFine() {
        assertDoesNotThrow(() -> GuaranteePolicy.NONE.admit("any", Guarantee.NONE, List.of()));
    }

    @Test
    void sharesOfBothKindsAdd() {
        DiskCapacity both = DiskCapacity.symmetric(OptionalLong.of(400), OptionalLong.of(100L << 20));
        Guarantee mixed = QosParameters.parse(Map.of("iopsFloor", "100", "bpsFloor", "50Mi")).guarantee();
        assertEquals(0.75, both.share(mixed), 1e-9);
    }
}
