package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class QosSpecTest {

    static final QosSpec MIXED = new QosSpec(new Limit.Fixed(52428800), Limit.UNLIMITED,
            new Limit.PerGiB(new BigDecimal("0.5")), new Limit.PerGiB(new BigDecimal("10")));

    @Test
    void fieldsLeaveOutUnlimitedDirections() {
        assertEquals(Map.of("rbps", "52428800", "riops", "0.5/GiB", "wiops", "10/GiB"), MIXED.fields());
    }

    @Test
    void fieldsReadBackToTheSameSpec() {
        assertEquals(MIXED, QosSpec.fromFields(MIXED.fields()));
    }

    @Test
    void allFourFieldsReadBack() {
        QosSpec all = new QosSpec(new Limit.Fixed(1), new Limit.Fixed(2), new Limit.Fixed(3),
                new Limit.PerGiB(new BigDecimal("1E+3")));
        assertEquals(all, QosSpec.fromFields(all.fields()));
    }

    @Test
    void noLimitsHaveNoFields() {
        assertEquals(Map.of(), QosSpec.NONE.fields());
    }

    @Test
    void noFieldsAreNoLimits() {
        assertEquals(QosSpec.NONE, QosSpec.fromFields(Map.of()));
    }

    @Test
    void aPerGiBValueIsStoredInPlainNotation() {
        assertEquals("1000/GiB", new Limit.PerGiB(new BigDecimal("1E+3")).tagValue());
    }

    @Test
    void unlimitedKnowsItIs() {
        assertTrue(QosSpec.NONE.isUnlimited());
        assertFalse(MIXED.isUnlimited());
    }

    @Test
    void forSizeComputesEachDirection() {
        assertEquals(new IoLimits(OptionalLong.of(52428800), OptionalLong.empty(), OptionalLong.of(1),
                OptionalLong.of(20)), MIXED.forSize(2L << 30));
    }

    @Test
    void aChangeReplacesOnlyTheDirectionsItNames() {
        QosChange change = new QosChange(Optional.empty(), Optional.of(new Limit.Fixed(7)), Optional.empty(),
                Optional.of(new Limit.Fixed(9)));
        assertEquals(new QosSpec(MIXED.readBps(), new Limit.Fixed(7), MIXED.readIops(), new Limit.Fixed(9)),
                MIXED.changedBy(change));
    }

    @Test
    void aChangeToUnlimitedLiftsThatDirectionAndItsTag() {
        QosChange lift = new QosChange(Optional.of(Limit.UNLIMITED), Optional.empty(), Optional.empty(),
                Optional.of(Limit.UNLIMITED));
        QosSpec lifted = MIXED.changedBy(lift);
        assertEquals(new QosSpec(Limit.UNLIMITED, Limit.UNLIMITED, MIXED.readIops(), Limit.UNLIMITED), lifted);
        assertEquals(Map.of("riops", "0.5/GiB"), lifted.fields());
    }

    @Test
    void nothingChangesNothing() {
        assertEquals(MIXED, MIXED.changedBy(QosChange.NOTHING));
    }

    @Test
    void tagsWrittenByEarlierVersionsReadBackTheSame() {
        // the tag values of volumes made before the per-direction change record existed
        assertEquals(new QosSpec(new Limit.Fixed(4194304), Limit.UNLIMITED, new Limit.PerGiB(new BigDecimal("10")),
                new Limit.Fixed(300)), QosSpec.fromFields(Map.of("rbps", "4194304", "riops", "10/GiB", "wiops", "300")));
    }

    @Test
    void computedLimitsStayWithinTheKernelsBounds() {
        QosSpec huge = new QosSpec(new Limit.PerGiB(new BigDecimal("1e30")), Limit.UNLIMITED,
                new Limit.PerGiB(new BigDecimal("1e12")), new Limit.Fixed(IoLimits.MAX_IOPS));
        IoLimits limits = huge.forSize(1L << 40);
        assertEquals(OptionalLong.of(IoLimits.MAX_BPS), limits.readBps());
        assertEquals(OptionalLong.of(IoLimits.MAX_IOPS), limits.readIops());
        assertEquals(OptionalLong.of(IoLimits.MAX_IOPS), limits.writeIops());
    }
}
