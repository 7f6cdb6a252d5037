package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class IoLimitsTest {

    private static IoLimits readIops(long value) {
        return new IoLimits(OptionalLong.empty(), OptionalLong.empty(), OptionalLong.of(value), OptionalLong.empty());
    }

    @Test
    void zeroIsNoLimitAndIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> new IoLimits(OptionalLong.of(0), OptionalLong.empty(), OptionalLong.empty(), OptionalLong.empty()));
        assertThrows(IllegalArgumentException.class, () -> readIops(0));
    }

    @Test
    void anIopsLimitMustFitBelowTheKernelsThirtyTwoBitNone() {
        assertDoesNotThrow(() -> readIops(0xffff_fffeL));
        assertThrows(IllegalArgumentException.class, () -> readIops(0xffff_ffffL));
        assertThrows(IllegalArgumentException.class, () -> readIops(1L << 32));
    }

    @Test
    void aByteRateAboveTheLargestLongIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> new IoLimits(OptionalLong.empty(), OptionalLong.of(-1), OptionalLong.empty(), OptionalLong.empty()));
    }

    @Test
    void withinCapsComputedValuesAtTheBounds() {
        assertEquals(readIops(IoLimits.MAX_IOPS), IoLimits.within(OptionalLong.empty(), OptionalLong.empty(),
                OptionalLong.of(Long.MAX_VALUE), OptionalLong.empty()));
    }

    @Test
    void printsMaxForNoLimitAsIoMaxDoes() {
        assertEquals("rbps=max wbps=max riops=7 wiops=max", readIops(7).toString());
    }
}
