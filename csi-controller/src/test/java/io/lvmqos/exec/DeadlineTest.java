package io.lvmqos.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A call's budget on the monotonic clock: what is left, how a wait is cut to it, and its ends. */
class DeadlineTest {

    @Test
    void whatIsLeftIsAtMostTheBudgetAndShrinks() throws InterruptedException {
        Deadline deadline = Deadline.after(Duration.ofSeconds(30));
        Duration first = deadline.remaining().orElseThrow();
        assertTrue(first.compareTo(Duration.ofSeconds(30)) <= 0 && first.compareTo(Duration.ofSeconds(29)) > 0, first::toString);
        Thread.sleep(5);
        assertTrue(deadline.remaining().orElseThrow().compareTo(first) < 0, "time left goes down");
    }

    @Test
    void aWaitIsCutToTheTimeLeftAndAShortOneIsKept() {
        Deadline deadline = Deadline.after(Duration.ofSeconds(2));
        assertTrue(deadline.bound(Duration.ofMinutes(5)).compareTo(Duration.ofSeconds(2)) <= 0);
        assertEquals(Duration.ofMillis(100), deadline.bound(Duration.ofMillis(100)));
    }

    @Test
    void aPassedDeadlineRefusesEveryWait() {
        Deadline passed = Deadline.after(Duration.ofSeconds(-1));
        assertTrue(passed.remaining().orElseThrow().isNegative());
        assertThrows(DriverException.DeadlineExceeded.class, () -> passed.bound(Duration.ofSeconds(1)));
    }

    @Test
    void noDeadlineBoundsNothing() {
        assertEquals(Optional.empty(), Deadline.NONE.remaining());
        assertEquals(Duration.ofHours(3), Deadline.NONE.bound(Duration.ofHours(3)));
    }

    @Test
    void aBudgetOfCenturiesDoesNotOverflowIntoThePast() {
        for (Deadline huge : new Deadline[] {Deadline.afterNanos(Long.MAX_VALUE), Deadline.after(Duration.ofDays(1_000_000))}) {
            assertTrue(huge.remaining().orElseThrow().compareTo(Duration.ofDays(365 * 99)) > 0, huge::toString);
            assertEquals(Duration.ofSeconds(1), huge.bound(Duration.ofSeconds(1)));
        }
    }
}
