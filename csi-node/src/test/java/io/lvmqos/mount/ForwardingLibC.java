package io.lvmqos.mount;

/** The real libc, for tests that replace one call with a fault or a race at the OS boundary. */
class ForwardingLibC implements LibC {

    final LibC real;

    ForwardingLibC(LibC real) {
        this.real = real;
    }

    @Override
    public int mount(String source, String target, String fstype, long flags, String data) {
        return real.mount(source, target, fstype, flags, data);
    }

    @Override
    public int umount2(String target, int flags) {
        return real.umount2(target, flags);
    }

    @Override
    public int open(String path, int flags) {
        return real.open(path, flags);
    }

    @Override
    public int openat(int dirFd, String path, int flags, int mode) {
        return real.openat(dirFd, path, flags, mode);
    }

    @Override
    public int mkdirat(int dirFd, String path, int mode) {
        return real.mkdirat(dirFd, path, mode);
    }

    @Override
    public int unlinkat(int dirFd, String path, int flags) {
        return real.unlinkat(dirFd, path, flags);
    }

    @Override
    public long syscall(long number, int dirFd, String path, long[] how, long size) {
        return real.syscall(number, dirFd, path, how, size);
    }

    @Override
    public int fstatfs(int fd, long[] buf) {
        return real.fstatfs(fd, buf);
    }

    @Override
    public int close(int fd) {
        return real.close(fd);
    }

    @Override
    public int statx(int dirFd, String path, int flags, int mask, byte[] buf) {
        return real.statx(dirFd, path, flags, mask, buf);
    }

    @Override
    public long syscall(long number, byte[] request, byte[] buf, long size, long flags) {
        return real.syscall(number, request, buf, size, flags);
    }
}
