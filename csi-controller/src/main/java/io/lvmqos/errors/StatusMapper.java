package io.lvmqos.errors;

import io.grpc.Status;
import java.nio.file.InvalidPathException;

/**
 * The one place where a failure becomes a gRPC status. Every description passes through
 * {@link Echo#message}, so that whatever a message echoed stays one bounded line in the caller's
 * events and in the driver's log.
 */
public final class StatusMapper {

    private StatusMapper() {
    }

    public static Status toStatus(Throwable failure) {
        if (failure instanceof DriverException driverFailure) {
            return codeOf(driverFailure).toStatus().withDescription(Echo.message(String.valueOf(driverFailure.getMessage())));
        }
        if (failure instanceof InvalidPathException badPath) {
            // only a client's string becomes a Path this way (a NUL in a target path, say): bad input, not a bug
            return Status.INVALID_ARGUMENT.withDescription(Echo.message("path " + Echo.of(badPath.getInput())
                    + " is not a valid path: " + badPath.getReason()));
        }
        return Status.INTERNAL.withDescription(Echo.message("internal error: " + failure));
    }

    /** True when the failure is a bug or an unclassified OS answer, worth a stack trace in the log. */
    public static boolean isUnexpected(Throwable failure) {
        return !(failure instanceof DriverException || failure instanceof InvalidPathException)
                || failure instanceof DriverException.Internal;
    }

    private static Status.Code codeOf(DriverException failure) {
        return switch (failure) {
            case DriverException.InvalidArgument e -> Status.Code.INVALID_ARGUMENT;
            case DriverException.NotFound e -> Status.Code.NOT_FOUND;
            case DriverException.AlreadyExists e -> Status.Code.ALREADY_EXISTS;
            case DriverException.FailedPrecondition e -> Status.Code.FAILED_PRECONDITION;
            case DriverException.ResourceExhausted e -> Status.Code.RESOURCE_EXHAUSTED;
            case DriverException.OutOfRange e -> Status.Code.OUT_OF_RANGE;
            case DriverException.Unavailable e -> Status.Code.UNAVAILABLE;
            case DriverException.Aborted e -> Status.Code.ABORTED;
            case DriverException.DeadlineExceeded e -> Status.Code.DEADLINE_EXCEEDED;
            case DriverException.Internal e -> Status.Code.INTERNAL;
        };
    }
}
