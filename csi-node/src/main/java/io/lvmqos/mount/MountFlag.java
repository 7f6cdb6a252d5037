package io.lvmqos.mount;

/** The mount(2) flags the driver passes; values from linux/mount.h. */
public enum MountFlag {
    RDONLY(1L),
    NOSUID(2L),
    NODEV(4L),
    NOEXEC(8L),
    SYNCHRONOUS(16L),
    REMOUNT(32L),
    MANDLOCK(64L),
    DIRSYNC(128L),
    NOSYMFOLLOW(256L),
    NOATIME(1024L),
    NODIRATIME(2048L),
    BIND(4096L),
    MOVE(8192L),
    REC(16384L),
    SILENT(32768L),
    RELATIME(1L << 21),
    STRICTATIME(1L << 24),
    LAZYTIME(1L << 25);

    private final long bit;

    MountFlag(long bit) {
        this.bit = bit;
    }

    public long bit() {
        return bit;
    }

    public static long bits(Iterable<MountFlag> flags) {
        long bits = 0;
        for (MountFlag flag : flags) {
            bits |= flag.bit;
        }
        return bits;
    }
}
