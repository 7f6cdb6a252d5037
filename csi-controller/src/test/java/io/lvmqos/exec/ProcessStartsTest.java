package io.lvmqos.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The gate between process starts and unmounts, with a system call that waits on a latch. */
class ProcessStartsTest {

    @Test
    void aStartWaitsForAnUnmountInItsCall() throws Exception {
        CountDownLatch inUnmount = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean unmounted = new AtomicBoolean();
        // the unmount goes first and stays in its call, so that a start then finds the gate taken
        Thread unmount = Thread.ofPlatform().start(() -> ProcessStarts.unmounting(() -> {
            inUnmount.countDown();
            awaitQuietly(release);
            unmounted.set(true);
            return 0;
        }));
        assertTrue(inUnmount.await(10, TimeUnit.SECONDS));
        AtomicBoolean startedDuringUnmount = new AtomicBoolean();
        Thread start = Thread.ofPlatform().start(() -> {
            try {
                Process child = ProcessStarts.start(new ProcessBuilder("true"));
                startedDuringUnmount.set(!unmounted.get());
                child.waitFor();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        awaitQueued();
        assertEquals(0, ProcessStarts.startsInFlight(), "no start begins while an unmount is in its call");
        release.countDown();
        unmount.join();
        start.join();
        assertFalse(startedDuringUnmount.get(), "the start went ahead only after the unmount returned");
    }

    @Test
    void anUnmountWaitsForTheStartsInFlight() throws Exception {
        CountDownLatch inStart = new CountDownLatch(1);
        CountDownLatch exec = new CountDownLatch(1);
        AtomicBoolean execd = new AtomicBoolean();
        // a start whose child has not exec'd yet: it still holds copies of the driver's descriptors
        Thread start = Thread.ofPlatform().start(() -> {
            try {
                ProcessStarts.starting(() -> {
                    inStart.countDown();
                    awaitQuietly(exec);
                    execd.set(true);
                    return null;
                });
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(inStart.await(10, TimeUnit.SECONDS));
        AtomicBoolean unmountedBeforeExec = new AtomicBoolean();
        Thread unmount = Thread.ofPlatform().start(() -> ProcessStarts.unmounting(() -> {
            unmountedBeforeExec.set(!execd.get());
            return 0;
        }));
        awaitQueued();
        exec.countDown();
        start.join();
        unmount.join();
        assertFalse(unmountedBeforeExec.get(), "umount2 ran only after the child had exec'd");
    }

    @Test
    void unmountsWaitForEachOtherAndReturnTheCallsResult() throws Exception {
        assertEquals(-1, ProcessStarts.unmounting(() -> -1));
        CountDownLatch inFirst = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean firstDone = new AtomicBoolean();
        AtomicBoolean secondSawFirstDone = new AtomicBoolean();
        Thread first = Thread.ofPlatform().start(() -> ProcessStarts.unmounting(() -> {
            inFirst.countDown();
            awaitQuietly(release);
            firstDone.set(true);
            return 0;
        }));
        assertTrue(inFirst.await(10, TimeUnit.SECONDS));
        Thread second = Thread.ofPlatform().start(() -> ProcessStarts.unmounting(() -> {
            secondSawFirstDone.set(firstDone.get());
            return 0;
        }));
        awaitQueued();
        release.countDown();
        first.join();
        second.join();
        assertTrue(secondSawFirstDone.get());
    }

    private static void awaitQueued() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!ProcessStarts.waiting()) {
            assertTrue(System.nanoTime() < deadline, "the second thread never queued at the gate");
            Thread.sleep(1);
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
