package io.lvmqos.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.lvm.VolumeGroup;
import io.lvmqos.metrics.LvmReports.VolumeGroupReport;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LvmReportsTest {

    private static final Duration MAX_AGE = Duration.ofSeconds(30);

    /** A clock the test moves. */
    private static final class FakeClock extends Clock {
        private Instant now = Instant.parse("2025-06-01T12:00:00Z");

        void advance(Duration duration) {
            now = now.plus(duration);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    private final FakeClock clock = new FakeClock();
    private final Deque<Runnable> background = new ArrayDeque<>();
    private final AtomicInteger reads = new AtomicInteger();
    private volatile RuntimeException failure;

    private final LvmReports reports = new LvmReports(() -> {
        reads.incrementAndGet();
        if (failure != null) {
            throw failure;
        }
        return List.of(new VolumeGroupReport(new VolumeGroup("lvmqos", 4L << 30, reads.get() << 20, 4 << 20),
                List.of()));
    }, MAX_AGE, clock, background::add);

    private void runBackground() {
        while (!background.isEmpty()) {
            background.poll().run();
        }
    }

    @Test
    void aScrapeGetsWhatIsAtHandAndLeavesTheReportToTheBackground() {
        assertTrue(reports.latest().isEmpty(), "nothing before the first report finished");
        assertEquals(0, reads.get(), "the scrape itself ran no report");
        assertEquals(1, background.size());
        runBackground();
        assertEquals(1L << 20, reports.latest().orElseThrow().groups().getFirst().group().freeBytes());
        assertEquals(clock.instant(), reports.latest().orElseThrow().takenAt());
    }

    @Test
    void reportsRunAtMostOncePerMaximumAge() {
        reports.latest();
        runBackground();
        clock.advance(MAX_AGE.minusSeconds(1));
        reports.latest();
        reports.latest();
        assertTrue(background.isEmpty(), "not due yet");
        clock.advance(Duration.ofSeconds(1));
        reports.latest();
        assertEquals(1, background.size());
        assertEquals(1L << 20, reports.latest().orElseThrow().groups().getFirst().group().freeBytes(),
                "the old report is served until the new one is in");
        runBackground();
        assertEquals(2L << 20, reports.latest().orElseThrow().groups().getFirst().group().freeBytes());
        assertEquals(2, reads.get());
    }

    @Test
    void onlyOneReportRunsAtATimeEvenWhenItTakesLongerThanTheMaximumAge() {
        reports.latest();
        clock.advance(MAX_AGE.multipliedBy(3));
        reports.latest();
        assertEquals(1, background.size(), "the first report is still running (stuck behind an LVM lock)");
    }

    @Test
    void aFailedReportKeepsThePreviousOneAndIsNotRetriedAtOnce() {
        reports.latest();
        runBackground();
        Instant first = reports.latest().orElseThrow().takenAt();
        failure = new IllegalStateException("lvm is broken");
        clock.advance(MAX_AGE);
        reports.latest();
        runBackground();
        assertEquals(first, reports.latest().orElseThrow().takenAt(), "the last good report, with its own time");
        reports.latest();
        assertTrue(background.isEmpty(), "a failure waits as long as a success before the next try");
        failure = null;
        clock.advance(MAX_AGE);
        reports.latest();
        runBackground();
        assertEquals(clock.instant(), reports.latest().orElseThrow().takenAt());
    }

    @Test
    void closingStopsTheRunningReportAndStartsNoOther() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        LvmReports blocked = new LvmReports(() -> {
            calls.incrementAndGet();
            started.countDown();
            try {
                // as an lvs waiting for a lock someone else holds
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                interrupted.countDown();
                throw new IllegalStateException("stopped");
            }
            return List.of();
        }, MAX_AGE, clock, task -> Thread.ofVirtual().start(task));
        blocked.refreshIfDue();
        assertTrue(started.await(10, TimeUnit.SECONDS));

        blocked.close(Duration.ofSeconds(10));

        assertEquals(0, interrupted.getCount(), "the running report was interrupted before close returned");
        clock.advance(MAX_AGE.multipliedBy(2));
        assertTrue(blocked.latest().isEmpty());
        assertEquals(1, calls.get(), "no report starts after close");
    }
}
