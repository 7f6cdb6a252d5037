package io.lvmqos.mount;

/** What {@link Mounter#unmount} found; every one of these leaves nothing mounted at the path. */
public enum UnmountOutcome {
    /** A mount was there and has been removed. */
    UNMOUNTED,
    /** The path exists but nothing is mounted on it (the kernel said EINVAL). */
    NOT_A_MOUNT_POINT,
    /** The path does not exist. */
    NO_SUCH_PATH
}
