package io.lvmqos.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The wipe's pieces, pacing, saved progress and stop at the deadline, on a fake disk and a fake clock. */
class ResumableWipeTest {

    private static final long MIB = 1L << 20;
    private static final Path DEVICE = Path.of("/dev/lvmqos/vol_x");

    /** A disk that writes at a fixed speed on a clock that only moves when the wipe writes or sleeps. */
    private static final class FakeDisk implements ResumableWipe.Zeroer, ResumableWipe.Clock {
        final long bytesPerSecond;
        final List<long[]> pieces = new ArrayList<>();
        long now;
        long slept;

        FakeDisk(long bytesPerSecond) {
            this.bytesPerSecond = bytesPerSecond;
        }

        @Override
        public void zero(Path device, long offset, long length) {
            pieces.add(new long[] {offset, length});
            now += (long) (length * 1e9 / bytesPerSecond);
        }

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public void sleep(Duration duration) {
            now += duration.toNanos();
            slept += duration.toNanos();
        }

        long covered() {
            return pieces.stream().mapToLong(p -> p[1]).sum();
        }
    }

    private final List<Long> saves = new ArrayList<>();

    @Test
    void withoutALimitOrADeadlineItZeroesEverythingInLargePieces() {
        FakeDisk disk = new FakeDisk(1000 * MIB);

        new ResumableWipe(disk, disk, OptionalLong.empty()).run(DEVICE, 1000 * MIB, 0, saves::add, Optional.empty());

        assertEquals(1000 * MIB, disk.covered());
        assertTrue(disk.pieces.stream().allMatch(p -> p[1] <= ResumableWipe.MAX_PIECE));
        assertEquals(0, disk.slept);
        long expectedOffset = 0;
        for (long[] piece : disk.pieces) {
            assertEquals(expectedOffset, piece[0], "pieces follow one another");
            expectedOffset += piece[1];
        }
    }

    @Test
    void itGoesOnFromWhereTheLastCallStopped() {
        FakeDisk disk = new FakeDisk(1000 * MIB);

        new ResumableWipe(disk, disk, OptionalLong.empty()).run(DEVICE, 600 * MIB, 400 * MIB, saves::add,
                Optional.empty());

        assertEquals(400 * MIB, disk.pieces.getFirst()[0]);
        assertEquals(200 * MIB, disk.covered());
    }

    @Test
    void theAverageRateStaysAtTheLimit() {
        FakeDisk disk = new FakeDisk(1000 * MIB);

        new ResumableWipe(disk, disk, OptionalLong.of(16 * MIB)).run(DEVICE, 160 * MIB, 0, saves::add, Optional.empty());

        assertEquals(160 * MIB, disk.covered());
        assertEquals(Duration.ofSeconds(10).toNanos(), disk.now, 1_000_000, "160 MiB at 16 MiB/s take 10 s");
        assertTrue(disk.pieces.stream().allMatch(p -> p[1] == 16 * MIB), "pieces of about a second at the rate");
    }

    @Test
    void progressIsSavedWhileItRuns() {
        FakeDisk disk = new FakeDisk(1000 * MIB);

        new ResumableWipe(disk, disk, OptionalLong.of(16 * MIB)).run(DEVICE, 800 * MIB, 0, saves::add, Optional.empty());

        // 50 s of wiping: a save at least every 10 s, each further than the last, none at the end
        assertTrue(saves.size() >= 4, "saves: " + saves);
        for (int i = 1; i < saves.size(); i++) {
            assertTrue(saves.get(i) > saves.get(i - 1), "saves: " + saves);
        }
        assertTrue(saves.getLast() < 800 * MIB);
    }

    @Test
    void nearItsDeadlineItSavesWhereItIsAndAnswersAborted() {
        FakeDisk disk = new FakeDisk(1000 * MIB);

        DriverException.Aborted stopped = assertThrows(DriverException.Aborted.class, () ->
                new ResumableWipe(disk, disk, OptionalLong.of(16 * MIB)).run(DEVICE, 800 * MIB, 0, saves::add,
                        Optional.of(Duration.ofSeconds(20))));

        long done = saves.getLast();
        assertEquals(disk.covered(), done, "what was zeroed is what was saved");
        assertTrue(done > 0 && done < 800 * MIB, "stopped part-way: " + done);
        assertTrue(disk.now <= Duration.ofSeconds(20).toNanos(), "stopped within the deadline");
        assertTrue(stopped.getMessage().contains(done + " of " + 800 * MIB), stopped.getMessage());
        assertTrue(stopped.getMessage().contains("the next DeleteVolume goes on"), stopped.getMessage());
    }

    @Test
    void aRateBelowOneMebibyteIsRefused() {
        FakeDisk disk = new FakeDisk(MIB);
        assertThrows(IllegalArgumentException.class, () -> new ResumableWipe(disk, disk, OptionalLong.of(MIB - 1)));
    }
}
