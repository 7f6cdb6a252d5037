package io.lvmqos.mount;

/**
 * The few libc calls the mount boundary makes, bound with jnr-ffi. Every one sets errno on
 * failure; jnr-ffi saves it right after the call (its default), read through
 * {@code Runtime.getLastError()} on the same thread.
 */
public interface LibC {

    /** mount(2); {@code flags} is C's unsigned long, 64 bits on the LP64 platforms the driver runs on. */
    int mount(String source, String target, String fstype, long flags, String data);

    /** umount2(2). */
    int umount2(String target, int flags);

    /** open(2) without a mode: only used with O_PATH, which never creates. */
    int open(String path, int flags);

    int close(int fd);
}
