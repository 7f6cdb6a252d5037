package io.lvmqos.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The per-volume lock against an injected deadline. The timeouts here only stop a hang of the
 * code before this fix (it waited without limit); no test measures how long anything took.
 */
class KeyedLocksTest {

    static final Duration HANG_GUARD = Duration.ofSeconds(20);

    final AtomicReference<Optional<Duration>> deadline = new AtomicReference<>(Optional.empty());
    final KeyedLocks locks = new KeyedLocks(deadline::get);

    /** Holds {@code key} on a thread of its own until {@link #release} is counted down. */
    final CountDownLatch release = new CountDownLatch(1);

    CompletableFuture<Void> holdElsewhere(String key) throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> {
            try (KeyedLocks.Held h = locks.lock(key)) {
                held.countDown();
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, r -> Thread.ofPlatform().daemon().start(r));
        held.await();
        return done;
    }

    /**
     * What {@code lock(key)} ends in, from a daemon thread of its own: a lock call that never
     * returns fails the test at the guard without keeping the test JVM alive.
     */
    Throwable attemptLock(String key) throws Exception {
        return CompletableFuture.supplyAsync(() -> {
            try (KeyedLocks.Held h = locks.lock(key)) {
                return (Throwable) null;
            } catch (Throwable t) {
                return t;
            }
        }, r -> Thread.ofPlatform().daemon().start(r)).get(HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void aLockHeldElsewhereAnswersAbortedOnceTheDeadlinePassed() throws Exception {
        CompletableFuture<Void> holder = holdElsewhere("vg/vol_a");
        deadline.set(Optional.of(Duration.ZERO));
        Throwable e = attemptLock("vg/vol_a");
        assertInstanceOf(DriverException.Aborted.class, e);
        assertTrue(e.getMessage().contains("vg/vol_a") && e.getMessage().contains("retry"), e.getMessage());
        release.countDown();
        holder.get();
    }

    @Test
    void aShortDeadlineEndsTheWaitWithAborted() throws Exception {
        CompletableFuture<Void> holder = holdElsewhere("vg/vol_a");
        deadline.set(Optional.of(Duration.ofMillis(50)));
        assertInstanceOf(DriverException.Aborted.class, attemptLock("vg/vol_a"));
        release.countDown();
        holder.get();
    }

    @Test
    void aWaiterWithTimeLeftGetsTheLockWhenItIsReleased() throws Exception {
        CompletableFuture<Void> holder = holdElsewhere("vg/vol_a");
        deadline.set(Optional.of(Duration.ofMinutes(5)));
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
            try (KeyedLocks.Held h = locks.lock("vg/vol_a")) {
                return true;
            }
        }, r -> Thread.ofPlatform().daemon().start(r));
        release.countDown();
        assertTrue(waiter.get(HANG_GUARD.toSeconds(), TimeUnit.SECONDS));
        holder.get();
    }

    @Test
    void aFreeLockIsTakenEvenWithTheDeadlinePassed() {
        deadline.set(Optional.of(Duration.ofSeconds(-1)));
        try (KeyedLocks.Held h = locks.lock("vg/vol_a")) {
            assertEquals(1, locks.size());
        }
    }

    @Test
    void otherVolumesAreNotBlocked() throws Exception {
        CompletableFuture<Void> holder = holdElsewhere("vg/vol_a");
        deadline.set(Optional.of(Duration.ZERO));
        try (KeyedLocks.Held h = locks.lock("vg/vol_b")) {
            assertEquals(2, locks.size());
        }
        release.countDown();
        holder.get();
    }

    @Test
    void anAbortedWaiterLeavesNoEntryBehind() throws Exception {
        CompletableFuture<Void> holder = holdElsewhere("vg/vol_a");
        deadline.set(Optional.of(Duration.ZERO));
        assertInstanceOf(DriverException.Aborted.class, attemptLock("vg/vol_a"));
        release.countDown();
        holder.get();
        assertEquals(0, locks.size());
    }
}
