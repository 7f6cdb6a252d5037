package io.lvmqos.lvm;

import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.CallDeadline;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * At most a fixed number of lvm processes at once per volume group. LVM serialises changes on the
 * group's lock anyway, so more processes only wait there, each holding several MiB inside the
 * container's memory limit; the external-provisioner alone sends up to 100 calls at once. Calls
 * beyond the bound queue in arrival order within their caller's deadline, and answer ABORTED (which
 * the provisioner retries) once too little of it is left for the command to run.
 */
public final class VolumeGroupLimiter {

    /** Enough to keep a report beside a change going; lvm's own lock admits one change at a time. */
    public static final int DEFAULT_PERMITS = 4;
    /** What a command needs of the deadline once it may start; waiting longer would only fail later. */
    public static final Duration DEFAULT_RESERVE = Duration.ofSeconds(2);

    private final int permits;
    private final Duration reserve;
    private final Supplier<Optional<Duration>> deadline;
    private final ConcurrentHashMap<String, Semaphore> groups = new ConcurrentHashMap<>();

    public VolumeGroupLimiter(int permits, Duration reserve, Supplier<Optional<Duration>> deadline) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1: " + permits);
        }
        this.permits = permits;
        this.reserve = reserve;
        this.deadline = deadline;
    }

    /** The shipped bound, waiting within the current gRPC call's deadline. */
    public static VolumeGroupLimiter standard() {
        return new VolumeGroupLimiter(DEFAULT_PERMITS, DEFAULT_RESERVE, CallDeadline::remaining);
    }

    /**
     * Runs {@code command} once a place among the group's lvm processes is free. Without a caller's
     * deadline (start-up, the health check) it waits at most {@code longest}, the command's own timeout.
     */
    public <T> T run(String volumeGroup, Duration longest, Supplier<T> command) {
        Semaphore semaphore = groups.computeIfAbsent(volumeGroup, vg -> new Semaphore(permits, true));
        Duration wait = deadline.get().map(left -> left.minus(reserve)).orElse(longest);
        boolean acquired;
        try {
            acquired = semaphore.tryAcquire() || (wait.isPositive() && semaphore.tryAcquire(wait.toNanos(),
                    TimeUnit.NANOSECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DriverException.aborted("waiting to run lvm on volume group " + volumeGroup
                    + " was interrupted: the driver is shutting down");
        }
        if (!acquired) {
            throw DriverException.aborted("volume group " + volumeGroup + " is busy: " + permits
                    + " lvm commands are running on it and " + semaphore.getQueueLength() + " more wait; too little "
                    + "of this call's deadline is left to wait longer, retry it");
        }
        try {
            return command.get();
        } finally {
            semaphore.release();
        }
    }
}
