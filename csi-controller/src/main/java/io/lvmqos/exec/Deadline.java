package io.lvmqos.exec;

import io.lvmqos.errors.DriverException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The moment by which a piece of work must be done, or none: the one budget that every wait of a
 * call (a lock, a place among the running lvm commands, a command itself) must fit in. The service
 * layer turns an RPC's deadline into one; work that no RPC started (start-up, the health check)
 * and work that must be done even after its caller gave up (releasing what a read held) have none.
 */
public record Deadline(Optional<Instant> at) {

    /** No moment to keep: a command has its own timeout only. */
    public static final Deadline NONE = new Deadline(Optional.empty());

    public static Deadline at(Instant at) {
        return new Deadline(Optional.of(at));
    }

    public static Deadline after(Duration left) {
        return at(Instant.now().plus(left));
    }

    /** The time left, zero or negative once the deadline has passed; empty without a deadline. */
    public Optional<Duration> remaining() {
        return at.map(moment -> Duration.between(Instant.now(), moment));
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
