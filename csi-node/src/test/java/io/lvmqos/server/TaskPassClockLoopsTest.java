package io.lvmqos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** One clock reading per pass over the loop's tasks, and none that outlives its pass. */
class TaskPassClockLoopsTest {

    /** A ticker that counts its reads and moves one nanosecond each time it is read. */
    private static final class CountingTicker implements Ticker {
        final AtomicLong reads = new AtomicLong();

        @Override
        public long initialNanoTime() {
            return 0;
        }

        @Override
        public long nanoTime() {
            return reads.incrementAndGet();
        }

        @Override
        public void sleep(long delay, TimeUnit unit) {
        }
    }

    @Test
    void inAPassOneReadingServesItsReadsThenTheClockIsReadAgain() {
        CountingTicker system = new CountingTicker();
        TaskPassClockLoops.PassClock clock = new TaskPassClockLoops.PassClock(system);
        clock.beginPass();
        List<Long> seen = new ArrayList<>();
        for (int i = 0; i < TaskPassClockLoops.READS_PER_READING + 1; i++) {
            seen.add(clock.nanoTime());
        }
        clock.endPass();
        assertEquals(2, system.reads.get(), "one reading for the first reads of the pass, one after");
        assertEquals(1, seen.stream().distinct().filter(t -> t == 1).count());
        assertEquals(seen.get(0), seen.get(TaskPassClockLoops.READS_PER_READING - 1));
        assertNotEquals(seen.get(0), seen.get(TaskPassClockLoops.READS_PER_READING));
    }

    @Test
    void outsideAPassAndOnOtherThreadsEveryReadIsTheSystemsClock() throws Exception {
        CountingTicker system = new CountingTicker();
        TaskPassClockLoops.PassClock clock = new TaskPassClockLoops.PassClock(system);
        long first = clock.nanoTime();
        assertNotEquals(first, clock.nanoTime(), "no pass: no reading kept");
        clock.beginPass();
        long inPass = clock.nanoTime();
        long other = CompletableFuture.supplyAsync(clock::nanoTime).get(10, TimeUnit.SECONDS);
        assertNotEquals(inPass, other, "another thread reads the clock while this one is in a pass");
        assertEquals(inPass, clock.nanoTime());
        clock.endPass();
        clock.beginPass();
        assertNotEquals(inPass, clock.nanoTime(), "a new pass takes a new reading");
    }

    /**
     * The case a kept reading could get wrong: the loop idles in epoll, then a task schedules a timer.
     * Had the pass's reading been taken before the wait, the timer would be due the moment it is set.
     */
    @Test
    void aTimerSetByATaskAfterTheLoopIdledRunsNoEarlierThanItsDelay() throws Exception {
        TaskPassClockLoops loops = new TaskPassClockLoops(1, "test-loop");
        try {
            EventLoop loop = loops.next();
            assertTrue(loop instanceof TaskPassClockLoops.Loop);
            // a pass, then the loop idles with a far timer pending (as a call's deadline is)
            loop.schedule(() -> { }, 1, TimeUnit.HOURS);
            loop.submit(() -> { }).get(10, TimeUnit.SECONDS);
            Thread.sleep(300);
            long delay = Duration.ofMillis(200).toNanos();
            CompletableFuture<Long> late = new CompletableFuture<>();
            loop.execute(() -> {
                for (int i = 0; i < 5; i++) {
                    loop.ticker().nanoTime(); // the reads Netty makes in a pass
                }
                long set = System.nanoTime();
                loop.schedule(() -> late.complete(System.nanoTime() - set - delay), delay, TimeUnit.NANOSECONDS);
            });
            long lateBy = late.get(10, TimeUnit.SECONDS);
            assertTrue(lateBy >= -Duration.ofMillis(5).toNanos(), "the timer ran " + -lateBy + " ns before its time");
        } finally {
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
