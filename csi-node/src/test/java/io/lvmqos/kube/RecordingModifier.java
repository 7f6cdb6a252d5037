package io.lvmqos.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.lvmqos.volume.VolumeId;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Records what would have been applied; can be told to fail the next calls. */
final class RecordingModifier implements VolumeModifier {

    record Applied(VolumeId volume, Map<String, String> parameters) {
    }

    private final BlockingQueue<Applied> applied = new LinkedBlockingQueue<>();
    private final Deque<RuntimeException> failures = new ArrayDeque<>();
    private int calls;

    @Override
    public synchronized void modify(VolumeId volume, Map<String, String> mutableParameters) {
        calls++;
        RuntimeException failure = failures.poll();
        if (failure != null) {
            throw failure;
        }
        applied.add(new Applied(volume, Map.copyOf(mutableParameters)));
    }

    synchronized void failNext(RuntimeException failure) {
        failures.add(failure);
    }

    synchronized int calls() {
        return calls;
    }

    /** The next application, waiting for it. */
    Applied next(Duration timeout) throws InterruptedException {
        Applied next = applied.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        assertNotNull(next, "nothing was applied within " + timeout);
        return next;
    }

    void assertNext(VolumeId volume, Map<String, String> parameters, Duration timeout) throws InterruptedException {
        assertEquals(new Applied(volume, parameters), next(timeout));
    }

    /** Everything applied and not yet taken with {@link #next}. */
    List<Applied> rest() {
        List<Applied> rest = new ArrayList<>();
        applied.drainTo(rest);
        return rest;
    }
}
