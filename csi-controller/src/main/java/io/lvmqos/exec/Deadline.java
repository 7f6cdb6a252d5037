package io.lvmqos.exec;

import io.lvmqos.errors.DriverException;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The moment by which a piece of work must be done, or none: the one budget that every wait of a
 * call (a lock, a place among the running lvm commands, a command itself) must fit in. The service
 * layer turns an RPC's deadline into one; work that no RPC started (start-up, the health check)
 * and work that must be done even after its caller gave up (releasing what a read held) have none.
 *
 * <p>The moment is on the monotonic clock ({@link System#nanoTime()}), as gRPC keeps a call's
 * deadline: a step of the wall clock (chrony's correction after a node boots with its clock off)
 * neither ends every call's budget at once nor stretches it past what the caller waits.
 *
 * @param atNanos the moment in {@link System#nanoTime()}'s terms; empty for none
 */
public record Deadline(OptionalLong atNanos) {

    /** No moment to keep: a command has its own timeout only. */
    public static final Deadline NONE = new Deadline(OptionalLong.empty());

    private static final long LONGEST_NANOS = Duration.ofDays(36525).toNanos();

    public static Deadline after(Duration left) {
        return afterNanos(left.compareTo(Duration.ofNanos(LONGEST_NANOS)) > 0 ? LONGEST_NANOS : left.toNanos());
    }

    /**
     * The moment {@code nanos} from now. Moments are compared by their difference, as nanoTime's
     * must be; a budget beyond a century is cut to one, so that no difference overflows.
     */
    public static Deadline afterNanos(long nanos) {
        return new Deadline(OptionalLong.of(System.nanoTime() + Math.min(nanos, LONGEST_NANOS)));
    }

    /** The time left, zero or negative once the deadline has passed; empty without a deadline. */
    public Optional<Duration> remaining() {
        if (atNanos.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(Duration.ofNanos(atNanos.getAsLong() - System.nanoTime()));
    }

    /** {@code requested}, shortened to the time left; DEADLINE_EXCEEDED when none is left. */
    public Duration bound(Duration requested) {
        Optional<Duration> left = remaining();
        if (left.isEmpty()) {
            return requested;
        }
        if (!left.get().isPositive()) {
            throw DriverException.deadlineExceeded("the caller's deadline has already passed");
        }
        return requested.compareTo(left.get()) < 0 ? requested : left.get();
    }
}
