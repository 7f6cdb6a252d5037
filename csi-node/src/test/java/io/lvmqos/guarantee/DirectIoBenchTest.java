package io.lvmqos.guarantee;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lvmqos.guarantee.DirectIoBench.Direction;
import io.lvmqos.guarantee.DirectIoBench.Result;
import io.lvmqos.guarantee.DirectIoBench.Workload;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A workload's figures, whole and by halves: how a burst spent during the run shows. */
class DirectIoBenchTest {

    @Test
    void aDiskThatSpentABurstShowsItInTheHalves() {
        // 10 s: 1500 IOPS for the first 5 s, 300 for the last 5
        Result result = new Result(9000, 4096, Duration.ofSeconds(10), 1500, Duration.ofSeconds(5));
        assertEquals(900, result.iops(), 1e-9);
        assertEquals(1500, result.earlyIops(), 1e-9);
        assertEquals(300, result.lateIops(), 1e-9);
        assertEquals(300, result.late().iops(), 1e-9);
        assertEquals(300 * 4096, result.late().bps(), 1e-6);
    }

    @Test
    void aWorkloadNeedsAlignedBlocksAndSomethingInFlight() {
        assertThrows(IllegalArgumentException.class, () -> new Workload("x", Direction.READ, true, 1000, 1));
        assertThrows(IllegalArgumentException.class, () -> new Workload("x", Direction.READ, true, 4096, 0));
        assertEquals("16 MiB sequential writes, 1 in flight",
                new Workload("wbps", Direction.WRITE, false, 16 << 20, 1).describe());
    }
}
