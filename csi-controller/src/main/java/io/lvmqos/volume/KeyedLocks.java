package io.lvmqos.volume;

import io.lvmqos.errors.DriverException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One lock per volume: calls on the same LV run one after another (so twenty identical
 * CreateVolume calls make one LV), calls on different LVs run in parallel. A call waits for the
 * lock only as long as its caller's deadline lasts, and then answers ABORTED, which the sidecars
 * retry: a call stuck on a volume (a stalled device, a slow lvm) must not pile up every retry of it
 * behind the first.
 */
public final class KeyedLocks {

    private final ConcurrentHashMap<String, Entry> locks = new ConcurrentHashMap<>();
    private final Supplier<Optional<Duration>> deadline;

    /** {@code deadline} gives what is left of the caller's deadline; empty waits without limit. */
    public KeyedLocks(Supplier<Optional<Duration>> deadline) {
        this.deadline = deadline;
    }

    /** A held lock; closing it releases it. */
    public interface Held extends AutoCloseable {
        @Override
        void close();
    }

    public Held lock(String key) {
        Entry entry = locks.compute(key, (k, existing) -> {
            Entry e = existing == null ? new Entry() : existing;
            e.users++;
            return e;
        });
        boolean acquired = false;
        try {
            acquired = acquire(entry.lock, key);
        } finally {
            if (!acquired) {
                release(key);
            }
        }
        return () -> {
            entry.lock.unlock();
            release(key);
        };
    }

    private boolean acquire(ReentrantLock lock, String key) {
        Optional<Duration> left = deadline.get();
        if (left.isEmpty()) {
            lock.lock();
            return true;
        }
        try {
            if (lock.tryLock() || lock.tryLock(Math.max(0, left.get().toNanos()), TimeUnit.NANOSECONDS)) {
                return true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DriverException.aborted("waiting for another call on " + key + " was interrupted: the driver is "
                    + "shutting down");
        }
        throw DriverException.aborted("another call on " + key + " is still in progress and this call's deadline "
                + "passed while it waited for it; retry");
    }

    private void release(String key) {
        locks.computeIfPresent(key, (k, e) -> --e.users == 0 ? null : e);
    }

    /** How many keys have a holder or a waiter; for tests that check nothing is left behind. */
    int size() {
        return locks.size();
    }

    private static final class Entry {
        private final ReentrantLock lock = new ReentrantLock();
        private int users;
    }
}
