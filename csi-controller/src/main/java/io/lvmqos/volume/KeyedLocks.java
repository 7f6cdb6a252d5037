package io.lvmqos.volume;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock per volume: calls on the same LV run one after another (so twenty identical
 * CreateVolume calls make one LV), calls on different LVs run in parallel.
 */
public final class KeyedLocks {

    private final ConcurrentHashMap<String, Entry> locks = new ConcurrentHashMap<>();

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
        entry.lock.lock();
        return () -> {
            entry.lock.unlock();
            locks.computeIfPresent(key, (k, e) -> --e.users == 0 ? null : e);
        };
    }

    private static final class Entry {
        private final ReentrantLock lock = new ReentrantLock();
        private int users;
    }
}
