package io.lvmqos.lvm;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.Deadline;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * At most a fixed number of lvm processes at once per volume group, and of them one change at a time.
 * LVM serialises changes on the group's lock anyway, so more processes only wait there, each holding
 * several MiB inside the container's memory limit; the external-provisioner alone sends up to 100
 * calls at once. Changes queue in the driver rather than on that lock: an lvm that waited there reads
 * the group again once it has the lock, because the change before it moved the metadata on, and on a
 * node's CPU the waiters' device scans slow down the change that holds the lock (100 thin creates at
 * once took longer than the same creates one after another). Reports still run beside a change.
 * Calls beyond the bound queue in arrival order within their caller's deadline, and answer ABORTED
 * (which the provisioner retries) once too little of it is left for the command to run.
 */
public final class VolumeGroupLimiter {

    /** Enough to keep reports beside the one change going. */
    public static final int DEFAULT_PERMITS = 4;
    /** What a command needs of the deadline once it may start; waiting longer would only fail later. */
    public static final Duration DEFAULT_RESERVE = Duration.ofSeconds(2);

    private final int permits;
    private final Duration reserve;
    private final Supplier<Optional<Duration>> deadline;
    private final ConcurrentHashMap<String, Semaphore> groups = new ConcurrentHashMap<>();
    /** Per group, held by the driver's change on it, if one runs (re-entered by the changes of a holder's work). */
    private final ConcurrentHashMap<String, ReentrantLock> changes = new ConcurrentHashMap<>();

    public VolumeGroupLimiter(int permits, Duration reserve, Supplier<Optional<Duration>> deadline) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1: " + permits);
        }
        this.permits = permits;
        this.reserve = reserve;
        this.deadline = deadline;
    }

    /** The shipped bound, waiting within the deadline of the call in progress as {@code callDeadline} gives it. */
    public static VolumeGroupLimiter standard(Supplier<Deadline> callDeadline) {
        return new VolumeGroupLimiter(DEFAULT_PERMITS, DEFAULT_RESERVE, () -> callDeadline.get().remaining());
    }

    /**
     * Runs {@code command} once a place among the group's lvm processes is free. Without a caller's
     * deadline (start-up, the health check) it waits at most {@code longest}, the command's own timeout.
     */
    public <T> T run(String volumeGroup, Duration longest, Supplier<T> command) {
        long waitUntil = System.nanoTime() + waitAllowed(longest).toNanos();
        Semaphore places = groups.computeIfAbsent(volumeGroup, vg -> new Semaphore(permits, true));
        await(places::tryAcquire, places::tryAcquire, places::getQueueLength, waitUntil, volumeGroup,
                permits + " lvm commands are running on it");
        try {
            return command.get();
        } finally {
            places.release();
        }
    }

    /**
     * As {@link #run}, for a command that changes the group's metadata: it also waits until no other
     * change of the driver runs on the group, and both waits share the one allowance.
     */
    public <T> T runChange(String volumeGroup, Duration longest, Supplier<T> command) {
        return holdingChangeTurn(volumeGroup, longest, () -> run(volumeGroup, longest, command));
    }

    /**
     * Runs {@code work} while no change of the driver but its own runs on the group: the changes
     * {@code work} makes take the turn it holds, and a read it makes stays true until it ends.
     */
    public <T> T holdingChangeTurn(String volumeGroup, Duration longest, Supplier<T> work) {
        long waitUntil = System.nanoTime() + waitAllowed(longest).toNanos();
        ReentrantLock turn = changes.computeIfAbsent(volumeGroup, vg -> new ReentrantLock(true));
        await(turn::tryLock, turn::tryLock, turn::getQueueLength, waitUntil, volumeGroup,
                "another change of the driver is running on it");
        try {
            return work.get();
        } finally {
            turn.unlock();
        }
    }

    private Duration waitAllowed(Duration longest) {
        return deadline.get().map(left -> left.minus(reserve)).orElse(longest);
    }

    /** A semaphore's or a lock's timed acquisition. */
    private interface TimedAcquire {
        boolean tryFor(long time, TimeUnit unit) throws InterruptedException;
    }

    /** Takes a place or the turn at once, or waits for it until {@code waitUntil}; ABORTED when it does not come. */
    private static void await(BooleanSupplier now, TimedAcquire timed, IntSupplier waiting, long waitUntil,
                              String volumeGroup, String busyWith) {
        boolean acquired;
        try {
            long wait = waitUntil - System.nanoTime();
            acquired = now.getAsBoolean() || (wait > 0 && timed.tryFor(wait, TimeUnit.NANOSECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DriverException.aborted("waiting to run lvm on volume group " + volumeGroup
                    + " was interrupted: the driver is shutting down");
        }
        if (!acquired) {
            throw DriverException.aborted("volume group " + volumeGroup + " is busy: " + busyWith + " and "
                    + waiting.getAsInt() + " more wait; too little of this call's deadline is left to wait longer, "
                    + "retry it");
        }
    }
}
