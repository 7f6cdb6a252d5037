package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link Guarantee#changedBy}: typed parts merged one by one, no tag text in between. */
class GuaranteeChangeTest {

    private static final Guarantee BEFORE = new Guarantee(Optional.of(new IoCostWeight(800)), OptionalLong.empty(),
            OptionalLong.empty(), OptionalLong.of(200), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.of(10L << 20));

    private static Guarantee weightOnly(int weight) {
        return new Guarantee(Optional.of(new IoCostWeight(weight)), OptionalLong.empty(), OptionalLong.empty(),
                OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty());
    }

    @Test
    void aNewWeightReplacesTheOldAndLeavesTheFloors() {
        Guarantee after = BEFORE.changedBy(new Guarantee.Change(weightOnly(50), Set.of()));
        assertEquals(Optional.of(new IoCostWeight(50)), after.weight());
        assertEquals(OptionalLong.of(200), after.iopsFloor());
        assertEquals(OptionalLong.of(10L << 20), after.bpsFloor());
    }

    @Test
    void aClearedFloorGoesAndTheRestStays() {
        Guarantee after = BEFORE.changedBy(new Guarantee.Change(Guarantee.NONE, Set.of(Guarantee.Part.IOPS_FLOOR)));
        assertEquals(OptionalLong.empty(), after.iopsFloor());
        assertEquals(Optional.of(new IoCostWeight(800)), after.weight());
        assertEquals(OptionalLong.of(10L << 20), after.bpsFloor());
    }

    @Test
    void clearingEverythingLeavesNone() {
        Guarantee after = BEFORE.changedBy(new Guarantee.Change(Guarantee.NONE, Set.of(Guarantee.Part.values())));
        assertTrue(after.isNone());
    }

    @Test
    void noChangeIsTheSameGuarantee() {
        assertTrue(Guarantee.Change.NONE.isEmpty());
        assertEquals(BEFORE, BEFORE.changedBy(Guarantee.Change.NONE));
    }

    @Test
    void aPartSetAndClearedAtOnceIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> new Guarantee.Change(weightOnly(50), Set.of(Guarantee.Part.WEIGHT)));
    }

    @Test
    void theParametersGiveTheTypedChange() {
        QosChange change = QosParameters.parseMutable(java.util.Map.of("ioWeight", "300", "bpsFloor", "none"));
        assertEquals(new Guarantee.Change(weightOnly(300), Set.of(Guarantee.Part.BPS_FLOOR)), change.guarantee());
    }
}
