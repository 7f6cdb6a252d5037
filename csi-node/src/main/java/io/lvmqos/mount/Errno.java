package io.lvmqos.mount;

import java.util.Optional;

/**
 * The errno values the mount boundary tells apart, and a few more for messages: Linux's numbers,
 * the same on x86_64 and arm64 (asm-generic/errno-base.h and errno.h).
 */
enum Errno {
    EPERM(1, "Operation not permitted"),
    ENOENT(2, "No such file or directory"),
    ESRCH(3, "No such process"),
    EINTR(4, "Interrupted system call"),
    EIO(5, "Input/output error"),
    ENXIO(6, "No such device or address"),
    EBADF(9, "Bad file descriptor"),
    EAGAIN(11, "Resource temporarily unavailable"),
    ENOMEM(12, "Cannot allocate memory"),
    EACCES(13, "Permission denied"),
    EFAULT(14, "Bad address"),
    ENOTBLK(15, "Block device required"),
    EBUSY(16, "Device or resource busy"),
    EEXIST(17, "File exists"),
    EXDEV(18, "Invalid cross-device link"),
    ENODEV(19, "No such device"),
    ENOTDIR(20, "Not a directory"),
    EISDIR(21, "Is a directory"),
    EINVAL(22, "Invalid argument"),
    EMFILE(24, "Too many open files"),
    ENOSPC(28, "No space left on device"),
    EROFS(30, "Read-only file system"),
    ENAMETOOLONG(36, "File name too long"),
    ENOSYS(38, "Function not implemented"),
    ENOTEMPTY(39, "Directory not empty"),
    ELOOP(40, "Too many levels of symbolic links"),
    EOVERFLOW(75, "Value too large for defined data type"),
    EOPNOTSUPP(95, "Operation not supported");

    private final int value;
    private final String description;

    Errno(int value, String description) {
        this.value = value;
        this.description = description;
    }

    int intValue() {
        return value;
    }

    static Optional<Errno> of(int value) {
        for (Errno e : values()) {
            if (e.value == value) {
                return Optional.of(e);
            }
        }
        return Optional.empty();
    }

    /** "ENOENT (No such file or directory)", or "errno 123" for a number not listed here. */
    static String describe(int value) {
        return of(value).map(e -> e.name() + " (" + e.description + ")").orElse("errno " + value);
    }
}
