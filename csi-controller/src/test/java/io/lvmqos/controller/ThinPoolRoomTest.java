package io.lvmqos.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

class ThinPoolRoomTest {

    private static final long GIB = 1L << 30;

    @Test
    void atRatioOneTheRoomIsWhatIsNotYetPromised() {
        ThinPoolRoom room = new ThinPoolRoom(2 * GIB, GIB / 4, GIB, BigDecimal.ONE);
        assertEquals(GIB, room.availableBytes());
        assertEquals(2 * GIB, room.ceilingBytes());
    }

    @Test
    void aHigherRatioPromisesMoreThanThePoolHolds() {
        ThinPoolRoom room = new ThinPoolRoom(2 * GIB, 0, 3 * GIB, new BigDecimal("2"));
        assertEquals(GIB, room.availableBytes());
        assertEquals(4 * GIB, room.ceilingBytes());
    }

    @Test
    void dataAlreadyWrittenBoundsTheRoomEvenWhenTheRatioWouldAllowMore() {
        ThinPoolRoom room = new ThinPoolRoom(2 * GIB, 2 * GIB - GIB / 8, 2 * GIB, new BigDecimal("4"));
        assertEquals(GIB / 2, room.availableBytes(), "6 GiB under the ratio, but only 128 MiB unwritten, times 4");
    }

    @Test
    void inAnEmptyPoolOneVolumeMayBeLargerThanThePoolUnderARatio() {
        assertEquals(4 * GIB, new ThinPoolRoom(2 * GIB, 0, 0, new BigDecimal("2")).availableBytes());
    }

    @Test
    void promisesBeyondTheRatioLeaveNoRoomRatherThanANegativeOne() {
        assertEquals(0, new ThinPoolRoom(GIB, 0, 3 * GIB, new BigDecimal("1.5")).availableBytes());
    }

    @Test
    void aFractionalRatioIsExact() {
        assertEquals(3 * GIB / 2, new ThinPoolRoom(GIB, 0, 0, new BigDecimal("1.5")).ceilingBytes());
    }

    @Test
    void aRatioBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ThinPoolRoom(GIB, 0, 0, new BigDecimal("0.5")));
    }

    @Test
    void atItsWorstAPoolHasWrittenAllItPromisedUpToItsSize() {
        BigDecimal one = BigDecimal.ONE;
        BigDecimal ten = BigDecimal.TEN;
        ThinPoolRoom ratioOne = new ThinPoolRoom(1000, 0, 600, one);
        assertEquals(ratioOne.availableBytes(), ratioOne.assumingAllPromisedWritten().availableBytes(),
                "at ratio 1 the ratio bound is the written bound");
        assertEquals(4000, new ThinPoolRoom(1000, 0, 600, ten).assumingAllPromisedWritten().availableBytes());
        assertEquals(0, new ThinPoolRoom(1000, 100, 2000, ten).assumingAllPromisedWritten().availableBytes(),
                "promised beyond the pool: it may be full by now");
        assertEquals(1000, new ThinPoolRoom(1000, 900, 500, ten).assumingAllPromisedWritten().availableBytes(),
                "what was read stands when it is more (snapshots' shared blocks, pool metadata)");
    }
}
