package io.lvmqos.server;

import io.grpc.Context;
import io.lvmqos.exec.Deadline;
import java.util.concurrent.TimeUnit;

/**
 * The one place where an RPC's deadline, as gRPC keeps it in the call's {@link Context}, becomes the
 * driver's own {@link Deadline} value: the runner of programs, the per-volume locks and the lvm
 * bound are given this, and below the service layer no code knows a gRPC type.
 */
final class CallDeadlines {

    private CallDeadlines() {
    }

    /** The deadline of the call the current thread serves; {@link Deadline#NONE} outside a call or without one. */
    static Deadline ofCurrentCall() {
        io.grpc.Deadline deadline = Context.current().getDeadline();
        return deadline == null ? Deadline.NONE
                : Deadline.afterNanos(deadline.timeRemaining(TimeUnit.NANOSECONDS));
    }
}
