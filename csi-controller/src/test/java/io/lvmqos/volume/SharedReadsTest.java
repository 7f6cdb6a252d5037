package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SharedReadsTest {

    /** A reader whose reads are numbered and each held until the test lets it go. */
    private static final class HeldReader {
        final AtomicInteger started = new AtomicInteger();
        final Map<Integer, CountDownLatch> release = new ConcurrentHashMap<>();
        volatile RuntimeException failNext;

        String read(String key) {
            int n = started.incrementAndGet();
            try {
                release.computeIfAbsent(n, i -> new CountDownLatch(1)).await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            RuntimeException failure = failNext;
            if (failure != null) {
                failNext = null;
                throw failure;
            }
            return key + "#" + n;
        }

        void let(int n) {
            release.computeIfAbsent(n, i -> new CountDownLatch(1)).countDown();
        }
    }

    private final ExecutorService callers = Executors.newCachedThreadPool();
    private final List<Thread> threads = new ArrayList<>();

    @AfterEach
    void stop() {
        callers.shutdownNow();
    }

    private Future<String> call(SharedReads<String, String> reads, String key) {
        return callers.submit(() -> {
            synchronized (threads) {
                threads.add(Thread.currentThread());
            }
            return reads.read(key);
        });
    }

    /** Waits until {@code count} callers are blocked (waiting for a round, or for the read before theirs). */
    private void awaitBlocked(int count) throws InterruptedException {
        while (true) {
            int blocked = 0;
            synchronized (threads) {
                for (Thread thread : threads) {
                    if (thread.getState() == Thread.State.WAITING) {
                        blocked++;
                    }
                }
            }
            if (blocked >= count) {
                return;
            }
            Thread.sleep(2);
        }
    }

    @Test
    void callersArrivingDuringAReadShareTheNextOneAndNeverGetTheOlderAnswer() throws Exception {
        HeldReader reader = new HeldReader();
        SharedReads<String, String> reads = new SharedReads<>(reader::read);
        Future<String> first = call(reads, "vg/pool");
        awaitBlocked(1); // the first read has started and is held
        List<Future<String>> burst = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            burst.add(call(reads, "vg/pool"));
        }
        awaitBlocked(11);
        assertEquals(1, reader.started.get(), "the burst waits for the read in flight, it does not start its own");
        reader.let(1);
        assertEquals("vg/pool#1", first.get());
        reader.let(2);
        for (Future<String> answer : burst) {
            assertEquals("vg/pool#2", answer.get(), "a caller that arrived during read 1 is answered by read 2");
        }
        assertEquals(2, reader.started.get(), "eleven callers, two reads");
    }

    @Test
    void aFailedReadFailsItsWholeRoundAndTheNextCallerReadsAgain() throws Exception {
        HeldReader reader = new HeldReader();
        SharedReads<String, String> reads = new SharedReads<>(reader::read);
        IllegalStateException failure = new IllegalStateException("lvs failed");
        reader.failNext = failure;
        Future<String> leader = call(reads, "vg/pool");
        awaitBlocked(1);
        reader.let(1);
        ExecutionException seen = assertThrows(ExecutionException.class, leader::get);
        assertSame(failure, seen.getCause(), "the reader's own exception, not a wrapper");
        reader.let(2);
        assertEquals("vg/pool#2", call(reads, "vg/pool").get());
    }

    @Test
    void differentKeysAreReadSideBySide() throws Exception {
        HeldReader reader = new HeldReader();
        SharedReads<String, String> reads = new SharedReads<>(reader::read);
        Future<String> a = call(reads, "vg/a");
        Future<String> b = call(reads, "vg/b");
        awaitBlocked(2);
        assertEquals(2, reader.started.get(), "a read of one pool does not hold up another pool's");
        reader.let(1);
        reader.let(2);
        assertEquals(List.of("vg/a", "vg/b"), List.of(a.get().split("#")[0], b.get().split("#")[0]));
    }

    @Test
    void anExceptionIsRethrownAsItselfToTheCaller() {
        IllegalArgumentException failure = new IllegalArgumentException("no such pool");
        SharedReads<String, String> reads = new SharedReads<>(key -> {
            throw failure;
        });
        assertSame(failure, assertThrows(IllegalArgumentException.class, () -> reads.read("vg/pool")));
    }
}
