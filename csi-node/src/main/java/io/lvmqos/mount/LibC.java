package io.lvmqos.mount;

/**
 * The few libc calls the mount boundary makes, bound with the JDK's foreign-function API
 * ({@link NativeLibC}). Every one sets errno on failure; the binding saves it right after the call,
 * read through {@link NativeLibC#lastError()} on the same thread. Arrays are copied in before the
 * call ("in") or out after it ("out"), never both.
 */
public interface LibC {

    /** mount(2); {@code flags} is C's unsigned long, 64 bits on the LP64 platforms the driver runs on. */
    int mount(String source, String target, String fstype, long flags, String data);

    /** umount2(2). */
    int umount2(String target, int flags);

    /** open(2) without a mode: only used with O_PATH, which never creates. */
    int open(String path, int flags);

    /** openat(2); {@code mode} matters only with O_CREAT. */
    int openat(int dirFd, String path, int flags, int mode);

    int mkdirat(int dirFd, String path, int mode);

    int unlinkat(int dirFd, String path, int flags);

    /**
     * syscall(2), for openat2(2), which glibc 2.36 does not wrap: {@code how} (in) is struct open_how
     * (flags, mode, resolve: three 64-bit fields) and {@code size} its size, 24.
     */
    long syscall(long number, int dirFd, String path, long[] how, long size);

    /**
     * fstatfs(2), which works on an O_PATH descriptor (Linux 3.12 and later). {@code buf} receives
     * struct statfs of the 64-bit ABIs (x86_64 and arm64 alike): eleven 64-bit words, f_type,
     * f_bsize, f_blocks, f_bfree, f_bavail, f_files, f_ffree, f_fsid, f_namelen, f_frsize, f_flags,
     * then four spare ones.
     */
    int fstatfs(int fd, long[] buf);

    /**
     * statx(2); {@code buf} (out) receives struct statx, 256 bytes. With AT_EMPTY_PATH and an empty path
     * it describes the descriptor itself, an O_PATH one included.
     */
    int statx(int dirFd, String path, int flags, int mask, byte[] buf);

    /**
     * syscall(2), for statmount(2), which glibc 2.36 does not wrap: {@code request} (in) is struct
     * mnt_id_req, {@code buf} (out) receives struct statmount and its strings.
     */
    long syscall(long number, byte[] request, byte[] buf, long size, long flags);

    int close(int fd);
}
