package io.lvmqos.errors;

/**
 * The driver's failures, one subclass per gRPC status code it can answer with. Code below the
 * gRPC edge throws these; {@link StatusMapper} alone turns them into a status. Messages are meant
 * for a person: which volume, which path, what the command said.
 */
public abstract sealed class DriverException extends RuntimeException {

    private DriverException(String message, Throwable cause) {
        super(message, cause, false, true);
    }

    /** Refuses a request that lacks a required field or carries a malformed one. */
    public static void requireArgument(boolean condition, String message) {
        if (!condition) {
            throw new InvalidArgument(message);
        }
    }

    public static InvalidArgument invalidArgument(String message) {
        return new InvalidArgument(message);
    }

    public static NotFound notFound(String message) {
        return new NotFound(message);
    }

    public static AlreadyExists alreadyExists(String message) {
        return new AlreadyExists(message);
    }

    public static FailedPrecondition failedPrecondition(String message) {
        return new FailedPrecondition(message);
    }

    public static ResourceExhausted resourceExhausted(String message) {
        return new ResourceExhausted(message);
    }

    public static OutOfRange outOfRange(String message) {
        return new OutOfRange(message);
    }

    public static Unavailable unavailable(String message) {
        return new Unavailable(message);
    }

    public static Aborted aborted(String message) {
        return new Aborted(message);
    }

    public static DeadlineExceeded deadlineExceeded(String message) {
        return new DeadlineExceeded(message);
    }

    public static Internal internal(String message, Throwable cause) {
        return new Internal(message, cause);
    }

    public static Internal internal(String message) {
        return new Internal(message, null);
    }

    public static final class InvalidArgument extends DriverException {
        private InvalidArgument(String message) {
            super(message, null);
        }
    }

    public static final class NotFound extends DriverException {
        private NotFound(String message) {
            super(message, null);
        }
    }

    public static final class AlreadyExists extends DriverException {
        private AlreadyExists(String message) {
            super(message, null);
        }
    }

    public static final class FailedPrecondition extends DriverException {
        private FailedPrecondition(String message) {
            super(message, null);
        }
    }

    public static final class ResourceExhausted extends DriverException {
        private ResourceExhausted(String message) {
            super(message, null);
        }
    }

    public static final class OutOfRange extends DriverException {
        private OutOfRange(String message) {
            super(message, null);
        }
    }

    public static final class Unavailable extends DriverException {
        private Unavailable(String message) {
            super(message, null);
        }
    }

    public static final class Aborted extends DriverException {
        private Aborted(String message) {
            super(message, null);
        }
    }

    public static final class DeadlineExceeded extends DriverException {
        private DeadlineExceeded(String message) {
            super(message, null);
        }
    }

    /** A failure nobody anticipated: a bug, or the OS answering in a way we do not understand. */
    public static final class Internal extends DriverException {
        private Internal(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
