package io.lvmqos.mount;

import io.lvmqos.errors.DriverException;
import java.util.function.IntSupplier;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;

/** libc bound once for the process, with the errno reader that goes with it. */
final class NativeLibC {

    private NativeLibC() {
    }

    private static final class Holder {
        static final LibC LIBC = load();
        static final IntSupplier LAST_ERROR = Runtime.getRuntime(LIBC)::getLastError;

        private static LibC load() {
            try {
                return LibraryLoader.create(LibC.class).failImmediately().load("c");
            } catch (LinkageError | RuntimeException e) {
                throw DriverException.internal("cannot bind mount(2), umount2(2) and openat(2) from libc through"
                        + " jnr-ffi: " + e, e);
            }
        }
    }

    static LibC libc() {
        return Holder.LIBC;
    }

    static IntSupplier lastError() {
        return Holder.LAST_ERROR;
    }
}
