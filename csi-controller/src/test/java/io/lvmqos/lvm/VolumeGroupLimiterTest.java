package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The bound on lvm processes per volume group, with "commands" that block on a latch and an injected deadline. */
class VolumeGroupLimiterTest {

    static final Duration HANG_GUARD = Duration.ofSeconds(20);
    static final Duration LONGEST = Duration.ofMinutes(2);

    final AtomicReference<Optional<Duration>> deadline = new AtomicReference<>(Optional.of(Duration.ofMinutes(5)));
    final VolumeGroupLimiter limiter = new VolumeGroupLimiter(2, Duration.ofSeconds(2), () -> deadline.get());
    final CountDownLatch finish = new CountDownLatch(1);
    final AtomicInteger running = new AtomicInteger();
    final List<CompletableFuture<String>> started = new ArrayList<>();

    @AfterEach
    void finishAll() {
        finish.countDown();
        started.forEach(CompletableFuture::join);
    }

    /** Fills {@code count} places of {@code vg} with reports that run until {@link #finish}. */
    void occupy(String vg, int count) throws InterruptedException {
        occupy(vg, count, false);
    }

    /** Starts {@code count} reports, or changes, on {@code vg} that run until {@link #finish}. */
    void occupy(String vg, int count, boolean changes) throws InterruptedException {
        CountDownLatch inside = new CountDownLatch(count);
        for (int i = 0; i < count; i++) {
            started.add(CompletableFuture.supplyAsync(() -> changes
                    ? limiter.runChange(vg, LONGEST, () -> holdUntilFinished(inside))
                    : limiter.run(vg, LONGEST, () -> holdUntilFinished(inside)), r -> Thread.ofPlatform().daemon().start(r)));
        }
        inside.await();
    }

    String holdUntilFinished(CountDownLatch inside) {
        running.incrementAndGet();
        inside.countDown();
        try {
            finish.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        running.decrementAndGet();
        return "done";
    }

    @Test
    void aChangeWaitsForTheChangeBeforeIt() throws Exception {
        occupy("vg0", 1, true);
        CompletableFuture<String> second = CompletableFuture.supplyAsync(
                () -> limiter.runChange("vg0", LONGEST, () -> "second change with " + running.get() + " running"),
                r -> Thread.ofPlatform().daemon().start(r));
        // a report still has a place beside the running change
        assertEquals("report with 1 running", limiter.run("vg0", LONGEST, () -> "report with " + running.get() + " running"));
        Thread.sleep(200);
        assertFalse(second.isDone(), "the second change ran beside the first");
        finish.countDown();
        assertEquals("second change with 0 running", assertTimeoutPreemptively(HANG_GUARD, () -> second.get()));
    }

    @Test
    void aChangeQueuedBehindAnotherAnswersAbortedWhenTheDeadlineIsNear() throws Exception {
        occupy("vg0", 1, true);
        deadline.set(Optional.of(Duration.ofMillis(1500)));
        DriverException e = assertTimeoutPreemptively(HANG_GUARD, () -> assertThrows(DriverException.Aborted.class,
                () -> limiter.runChange("vg0", LONGEST, () -> "ran")));
        assertTrue(e.getMessage().contains("another change of the driver is running on it"), e.getMessage());
        // and its turn went to nobody: once the first ends, the next change runs at once
        finish.countDown();
        started.forEach(CompletableFuture::join);
        deadline.set(Optional.of(Duration.ZERO));
        assertEquals("ran", limiter.runChange("vg0", LONGEST, () -> "ran"));
    }

    @Test
    void aChangeAlsoNeedsAPlace() throws Exception {
        occupy("vg0", 2);
        deadline.set(Optional.of(Duration.ofMillis(1500)));
        DriverException e = assertTimeoutPreemptively(HANG_GUARD, () -> assertThrows(DriverException.Aborted.class,
                () -> limiter.runChange("vg0", LONGEST, () -> "ran")));
        assertTrue(e.getMessage().contains("2 lvm commands are running on it"), e.getMessage());
        // the change that gave up also gave its turn back
        finish.countDown();
        started.forEach(CompletableFuture::join);
        deadline.set(Optional.of(Duration.ZERO));
        assertEquals("ran", limiter.runChange("vg0", LONGEST, () -> "ran"));
    }

    @Test
    void workHoldingTheTurnRunsItsOwnChangesAndKeepsOthersOut() throws Exception {
        CountDownLatch holding = new CountDownLatch(1);
        CompletableFuture<String> holder = CompletableFuture.supplyAsync(() -> limiter.holdingChangeTurn("vg0", LONGEST,
                () -> {
                    holding.countDown();
                    String first = limiter.runChange("vg0", LONGEST, () -> "own change");
                    try {
                        finish.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return first + ", then " + limiter.runChange("vg0", LONGEST, () -> "another own change");
                }), r -> Thread.ofPlatform().daemon().start(r));
        holding.await();
        CompletableFuture<String> other = CompletableFuture.supplyAsync(
                () -> limiter.runChange("vg0", LONGEST, () -> "other change"), r -> Thread.ofPlatform().daemon().start(r));
        Thread.sleep(200);
        assertFalse(other.isDone(), "another caller's change ran inside the holder's turn");
        finish.countDown();
        assertEquals("own change, then another own change", assertTimeoutPreemptively(HANG_GUARD, () -> holder.get()));
        assertEquals("other change", assertTimeoutPreemptively(HANG_GUARD, () -> other.get()));
    }

    @Test
    void changesOfTwoGroupsRunAtOnce() throws Exception {
        occupy("vg0", 1, true);
        deadline.set(Optional.of(Duration.ZERO));
        assertEquals("ran", limiter.runChange("vg1", LONGEST, () -> "ran"));
    }

    @Test
    void aFullGroupAnswersAbortedWhenTheDeadlineIsNear() throws Exception {
        occupy("vg0", 2);
        deadline.set(Optional.of(Duration.ofMillis(1500)));
        DriverException e = assertTimeoutPreemptively(HANG_GUARD, () -> assertThrows(DriverException.Aborted.class,
                () -> limiter.run("vg0", LONGEST, () -> "ran")));
        assertTrue(e.getMessage().contains("volume group vg0 is busy") && e.getMessage().contains("retry"),
                e.getMessage());
        assertEquals(2, running.get());
    }

    @Test
    void aCallBeyondTheBoundRunsOnceAPlaceIsFree() throws Exception {
        occupy("vg0", 2);
        CompletableFuture<String> queued = CompletableFuture.supplyAsync(
                () -> limiter.run("vg0", LONGEST, () -> "ran with " + running.get() + " others"),
                r -> Thread.ofPlatform().daemon().start(r));
        finish.countDown();
        assertTrue(assertTimeoutPreemptively(HANG_GUARD, () -> queued.get()).startsWith("ran"));
    }

    @Test
    void neverMoreThanTheBoundRunAtOnce() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<CompletableFuture<Void>> calls = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            calls.add(CompletableFuture.runAsync(() -> limiter.run("vg0", LONGEST, () -> {
                most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                Thread.onSpinWait();
                inside.decrementAndGet();
                return null;
            }), r -> Thread.ofPlatform().daemon().start(r)));
        }
        assertTimeoutPreemptively(HANG_GUARD, () -> CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get());
        assertTrue(most.get() <= 2, "at most 2 at once, saw " + most.get());
    }

    @Test
    void anotherGroupIsNotHeldUp() throws Exception {
        occupy("vg0", 2);
        deadline.set(Optional.of(Duration.ZERO));
        assertEquals("ran", limiter.run("vg1", LONGEST, () -> "ran"));
    }

    @Test
    void aFailingCommandGivesItsPlaceBack() {
        for (int i = 0; i < 3; i++) {
            assertThrows(IllegalStateException.class, () -> limiter.run("vg0", LONGEST, () -> {
                throw new IllegalStateException("lvm failed");
            }));
        }
        deadline.set(Optional.of(Duration.ZERO));
        assertEquals("ran", limiter.run("vg0", LONGEST, () -> "ran"));
    }
}
