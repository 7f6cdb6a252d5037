package io.lvmqos.exec;

import io.grpc.Context;
import io.grpc.Deadline;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What is left of the caller's gRPC deadline, read from the current {@link Context}: the one
 * budget that every wait of a call (a lock, a place among the running lvm commands, the command
 * itself) must fit in. Empty for work that no RPC started (start-up, the health check).
 */
public final class CallDeadline {

    private CallDeadline() {
    }

    /** The time left, zero or negative once the deadline has passed; empty without a deadline. */
    public static Optional<Duration> remaining() {
        Deadline deadline = Context.current().getDeadline();
        return deadline == null ? Optional.empty()
                : Optional.of(Duration.ofNanos(deadline.timeRemaining(TimeUnit.NANOSECONDS)));
    }
}
