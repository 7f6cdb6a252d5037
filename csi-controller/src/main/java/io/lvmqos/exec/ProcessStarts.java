package io.lvmqos.exec;

import java.io.IOException;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntSupplier;

/**
 * Keeps the driver's process starts and its unmounts apart.
 *
 * <p>Starting a child copies this process's descriptor table: until the child execs, it holds a
 * reference to every file the driver had open at that instant, the O_PATH descriptors that pin a
 * mount among them (they are O_CLOEXEC, so the exec drops them). A mount with such a reference is
 * busy, and umount2 fails with EBUSY. So a publish that pins its target, closes the pin and then
 * unmounts can fail when another thread of the driver started a program (the health check's
 * {@code vgs}, a {@code blkid}) while the pin was open and the child has not yet exec'd. Seen in
 * ScaleBenchmark on 2026-12-05: NodeUnpublishVolume answered "it is busy; no process has a file
 * ... on its filesystem" while the health check's {@code lvm vgs} was starting.
 *
 * <p>{@link ProcessBuilder#start()} returns only once the child has exec'd (glibc's posix_spawn
 * waits for it, and the JDK's other launch mechanisms wait for the exec to close a pipe). So starts
 * share this gate around {@code start()}, and an unmount takes it alone around umount2: it waits
 * out the starts in flight, whose children then hold no copy of any descriptor any more, and holds
 * off new ones for the few microseconds of the system call. The gate is process-wide, like the
 * descriptor table it protects.
 */
public final class ProcessStarts {

    private static final ReentrantReadWriteLock GATE = new ReentrantReadWriteLock();

    private ProcessStarts() {
    }

    /** Starts a child, but not while an unmount is in its system call. */
    public static Process start(ProcessBuilder builder) throws IOException {
        return starting(builder::start);
    }

    /** What a start does at the gate, with the start itself given (tests stand in for the child's exec). */
    static <T> T starting(Start<T> start) throws IOException {
        GATE.readLock().lock();
        try {
            return start.run();
        } finally {
            GATE.readLock().unlock();
        }
    }

    /** A process start: returns once the child has exec'd. */
    @FunctionalInterface
    interface Start<T> {
        T run() throws IOException;
    }

    /**
     * Runs an unmount's system call once no child started by this process still holds a copy of
     * its descriptors, and keeps new children from starting until it returns; the call's result.
     */
    public static int unmounting(IntSupplier systemCall) {
        GATE.writeLock().lock();
        try {
            return systemCall.getAsInt();
        } finally {
            GATE.writeLock().unlock();
        }
    }

    /** Starts in flight now (for tests). */
    static int startsInFlight() {
        return GATE.getReadLockCount();
    }

    /** Whether a thread waits at the gate, a start or an unmount (for tests). */
    static boolean waiting() {
        return GATE.hasQueuedThreads();
    }
}
