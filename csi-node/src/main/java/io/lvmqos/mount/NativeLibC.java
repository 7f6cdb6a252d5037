package io.lvmqos.mount;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.lvmqos.errors.DriverException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.function.IntSupplier;

/**
 * libc bound once for the process through the JDK's foreign-function API, with the errno reader
 * that goes with it.
 *
 * <p>The symbols come from {@link Linker#defaultLookup()}: the C library this JVM already runs on.
 * Opening a libc.so.6 by file name could load a second copy of the C library, of another version,
 * where the JVM runs on one of its own (the Debian 13 JDK that scripts/lib.sh fetches onto Debian
 * 12, and the image built with it); its calls then fail (mkdirat said ENOENT under the kubelet
 * directory when jnr-ffi did that).
 *
 * <p>errno is captured by the linker right after each call ({@code captureCallState("errno")}) and
 * kept per thread, so the JVM's own work between the call and the read cannot overwrite it.
 */
final class NativeLibC implements LibC {

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final ThreadLocal<int[]> LAST_ERROR = ThreadLocal.withInitial(() -> new int[1]);

    private final MethodHandle mount;
    private final MethodHandle umount2;
    private final MethodHandle open;
    private final MethodHandle openat;
    private final MethodHandle mkdirat;
    private final MethodHandle unlinkat;
    private final MethodHandle syscallOpenat2;
    private final MethodHandle fstatfs;
    private final MethodHandle statx;
    private final MethodHandle syscallStatmount;
    private final MethodHandle close;

    private NativeLibC(Linker linker) {
        mount = bind(linker, "mount", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
        umount2 = bind(linker, "umount2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        // open(2) and openat(2) are variadic (the mode); open is called without one, openat always with it
        open = bind(linker, "open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        openat = bind(linker, "openat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
                Linker.Option.firstVariadicArg(3));
        mkdirat = bind(linker, "mkdirat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
        unlinkat = bind(linker, "unlinkat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
        // syscall(2) passes every argument on as a 64-bit word: all are given as longs or addresses
        syscallOpenat2 = bind(linker, "syscall",
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG),
                Linker.Option.firstVariadicArg(1));
        fstatfs = bind(linker, "fstatfs", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        statx = bind(linker, "statx", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS));
        syscallStatmount = bind(linker, "syscall",
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG),
                Linker.Option.firstVariadicArg(1));
        close = bind(linker, "close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    }

    private static MethodHandle bind(Linker linker, String name, FunctionDescriptor descriptor,
            Linker.Option... options) {
        MemorySegment symbol = linker.defaultLookup().find(name)
                .orElseThrow(() -> new IllegalStateException("libc has no " + name));
        Linker.Option[] all = new Linker.Option[options.length + 1];
        System.arraycopy(options, 0, all, 0, options.length);
        all[options.length] = Linker.Option.captureCallState("errno");
        return linker.downcallHandle(symbol, descriptor, all);
    }

    private static final class Holder {
        static final NativeLibC LIBC = load();

        private static NativeLibC load() {
            try {
                return new NativeLibC(Linker.nativeLinker());
            } catch (LinkageError | RuntimeException e) {
                throw DriverException.internal("cannot bind mount(2), umount2(2) and openat(2) from libc: " + e, e);
            }
        }
    }

    static LibC libc() {
        return Holder.LIBC;
    }

    static IntSupplier lastError() {
        return () -> LAST_ERROR.get()[0];
    }

    /** Keeps the errno the call left in {@code state}; returns {@code rc}. */
    private static long saved(long rc, MemorySegment state) {
        LAST_ERROR.get()[0] = (int) ERRNO.get(state, 0L);
        return rc;
    }

    private static MemorySegment string(Arena arena, String s) {
        return s == null ? MemorySegment.NULL : arena.allocateFrom(s);
    }

    /** A handle's invocation can throw only what the linker does for a broken binding: an error, never a checked one. */
    private static RuntimeException failed(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    @Override
    public int mount(String source, String target, String fstype, long flags, String data) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            return (int) saved((int) mount.invokeExact(state, string(arena, source), string(arena, target),
                    string(arena, fstype), flags, string(arena, data)), state);
        } catch (Throwable t) {
            throw failed(t);
        }
    }

    @Override
    public int umount2(String target, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            return (int) saved((int) umount2.invokeExact(state, string(arena, target), flags), state);
        } catch (Throwable t) {
            throw failed(t);
        }
    }

    @Override
    public int open(String path, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            return (int) saved((int) open.invokeExact(state, string(arena, path), flags), state);
        } catch (Throwable t) {
            throw failed(t);
        }
    }

    @Override
    public int openat(int dirFd, String path, int flags, int mode) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            return (int) saved((int) openat.invokeExact(state, dirFd, string(arena, path), flags, mode), state);
        } catch (Throwable t) {
            throw failed(t);
        }
    }

    @Override
    public int mkdirat(int dirFd, String path, int mode) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            return (int) saved((int) mkdirat.invokeExact(state, dirFd, string(arena, path), mode), state);
        } catch (Throwable t) {
            throw failed(t);
        }
    }

    @Override
    public int unlinkat(int dirFd, String path, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            return (int) saved((int) unlinkat.invokeExact(state, dirFd, string(arena, path), flags), state);
        } catch (Throwable t) {
            throw failed(t);
        }
    }

    @Override
    public long syscall(long number, int dirFd, String path, long[] how, long size) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            MemorySegment howIn = arena.allocateFrom(JAVA_LONG, how);
            return saved((long) syscallOpenat2.invokeExact(state, number, (long) dirFd, string(arena, path), howIn,
                    size), state);
        } catch (Throwable t) {
            throw failed(t);
        }
    }

    @Override
    public int fstatfs(int fd, long[] buf) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            MemorySegment out = arena.allocate(JAVA_LONG, buf.length);
            int rc = (int) saved((int) fstatfs.invokeExact(state, fd, out), state);
            MemorySegment.copy(out, JAVA_LONG, 0, buf, 0, buf.length);
            return rc;
        } catch (Throwable t) {
            throw failed(t);
        }
    }

    @Override
    public int statx(int dirFd, String path, int flags, int mask, byte[] buf) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            MemorySegment out = arena.allocate(buf.length, 8);
            int rc = (int) saved((int) statx.invokeExact(state, dirFd, string(arena, path), flags, mask, out), state);
            MemorySegment.copy(out, JAVA_BYTE, 0, buf, 0, buf.length);
            return rc;
        } catch (Throwable t) {
            throw failed(t);
        }
    }

    @Override
    public long syscall(long number, byte[] request, byte[] buf, long size, long flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            MemorySegment in = arena.allocate(request.length, 8);
            MemorySegment.copy(request, 0, in, JAVA_BYTE, 0, request.length);
            MemorySegment out = arena.allocate(buf.length, 8);
            long rc = saved((long) syscallStatmount.invokeExact(state, number, in, out, size, flags), state);
            MemorySegment.copy(out, JAVA_BYTE, 0, buf, 0, buf.length);
            return rc;
        } catch (Throwable t) {
            throw failed(t);
        }
    }

    @Override
    public int close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            return (int) saved((int) close.invokeExact(state, fd), state);
        } catch (Throwable t) {
            throw failed(t);
        }
    }
}
