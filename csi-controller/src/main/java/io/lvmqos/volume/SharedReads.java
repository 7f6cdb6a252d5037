package io.lvmqos.volume;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * Reads of one key that arrive together share one read, and every caller still gets an answer read
 * after it arrived: callers gather into the next round, which starts only when the read before it
 * has finished, and closes to newcomers at the moment its own read starts. So a burst of N callers
 * costs at most two reads, not N, and no caller is answered from a read that began before it asked
 * (which a cache with an age could not promise). A read's exception reaches every caller of its
 * round.
 *
 * @param <K> what is read (a pool's name)
 * @param <V> what the read answers
 */
final class SharedReads<K, V> {

    private final Function<K, V> reader;
    /** The round that callers of a key join: not started yet. */
    private final ConcurrentMap<K, CompletableFuture<V>> gathering = new ConcurrentHashMap<>();
    /** Held while a key's read runs, so that the next round waits for it. */
    private final ConcurrentMap<K, ReentrantLock> reading = new ConcurrentHashMap<>();

    SharedReads(Function<K, V> reader) {
        this.reader = reader;
    }

    V read(K key) {
        CompletableFuture<V> mine = new CompletableFuture<>();
        CompletableFuture<V> round = gathering.putIfAbsent(key, mine);
        if (round == null) {
            lead(key, mine);
            round = mine;
        }
        try {
            return round.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            if (e.getCause() instanceof Error cause) {
                throw cause;
            }
            throw e;
        }
    }

    /** Runs the round that this caller opened, once the key's read before it has finished. */
    private void lead(K key, CompletableFuture<V> round) {
        ReentrantLock lock = reading.computeIfAbsent(key, k -> new ReentrantLock());
        lock.lock();
        try {
            gathering.remove(key, round);
            try {
                round.complete(reader.apply(key));
            } catch (RuntimeException | Error e) {
                round.completeExceptionally(e);
            }
        } finally {
            lock.unlock();
        }
    }
}
