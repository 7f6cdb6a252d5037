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
                // The C library this JVM already runs on (dlsym with RTLD_DEFAULT). load("c") opens the
                // libc.so.6 it finds on its search path by file name: a second copy of the C library, of
                // another version, where the JVM runs on one of its own (the Debian 13 JDK that
                // scripts/lib.sh fetches onto Debian 12, and the image built with it); its calls then fail
                // (mkdirat said ENOENT under the kubelet directory).
                return LibraryLoader.create(LibC.class).failImmediately().load(LibraryLoader.DEFAULT_LIBRARY);
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
