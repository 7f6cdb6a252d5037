package io.lvmqos.mount;

import io.lvmqos.errors.DriverException;

/**
 * A failed system call of the mount boundary as the driver's error: its errno read as a status
 * (no permission, nothing there, busy, or internal) with the call and the errno's name in the
 * message. One mapping for every class here that calls the C library.
 */
final class ErrnoStatus {

    private ErrnoStatus() {
    }

    /** "{what} failed: ENOENT (No such file or directory)", as the status that errno means. */
    static DriverException failure(String what, int errno) {
        String message = what + " failed: " + Errno.describe(errno);
        if (errno == Errno.EPERM.intValue() || errno == Errno.EACCES.intValue()) {
            return DriverException.failedPrecondition(message
                    + " (the node plugin needs root with CAP_SYS_ADMIN in the host's mount namespace)");
        }
        if (errno == Errno.ENOENT.intValue() || errno == Errno.ENOTDIR.intValue()
                || errno == Errno.ENODEV.intValue() || errno == Errno.ENXIO.intValue()) {
            return DriverException.notFound(message);
        }
        if (errno == Errno.EBUSY.intValue()) {
            return DriverException.failedPrecondition(message);
        }
        return DriverException.internal(message);
    }
}
