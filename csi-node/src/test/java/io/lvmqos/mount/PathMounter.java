package io.lvmqos.mount;

import io.lvmqos.device.FsType;
import io.lvmqos.errors.DriverException;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * mount(2) and umount2(2) by path, anywhere on the host, for tests and benchmarks that mount
 * outside a kubelet directory (a tmpfs source, a loop device's filesystem, a bind to measure).
 * The driver itself mounts only through {@link Mounter}, under the kubelet directory. Targets and
 * bind sources are opened with O_PATH|O_NOFOLLOW and checked to have no symlink on them
 * ({@link Mounter.PathHandle}); the guards and the read-only remount are {@link Mounter}'s own.
 */
public final class PathMounter {

    private static final int UMOUNT_NOFOLLOW = 8;
    private static final Pattern FS_TYPE = Pattern.compile("[a-z0-9][a-z0-9._-]{0,31}");

    private final LibC libc;
    private final IntSupplier lastError;
    private final MountTable mountTable;
    private final ProcessScanner holders;

    PathMounter(LibC libc, IntSupplier lastError, MountTable mountTable, ProcessScanner holders) {
        this.libc = libc;
        this.lastError = lastError;
        this.mountTable = mountTable;
        this.holders = holders;
    }

    public static PathMounter create() {
        return new PathMounter(NativeLibC.libc(), NativeLibC.lastError(), new MountTable(),
                new ProcessScanner(Path.of("/proc")));
    }

    /** Mounts a filesystem on a block device, e.g. a freshly formatted loop device. */
    public void mount(Path device, Path target, FsType type, MountOptions options) {
        mount(device, target, type.kernelName(), options.flags(), options.dataString().orElse(""));
    }

    /**
     * mount(2) of {@code source} on {@code target}. {@code data} is the filesystem's option
     * string, empty for none. The target must exist and contain no symlink.
     */
    public void mount(Path source, Path target, String fsType, Set<MountFlag> flags, String data) {
        HostPath.requireCanonical(target, "mount target");
        if (!FS_TYPE.matcher(fsType).matches()) {
            throw DriverException.invalidArgument("filesystem type '" + fsType + "' is not a valid name");
        }
        Mounter.requireNewMount(flags);
        try (Mounter.PathHandle handle = Mounter.PathHandle.open(libc, lastError, target, "mount target")) {
            call(libc.mount(source.toString(), handle.procPath(), fsType, MountFlag.bits(flags),
                            data.isEmpty() ? null : data),
                    () -> "mounting " + fsType + " " + source + " on " + target
                            + (data.isEmpty() ? "" : " with options " + data));
        }
    }

    /**
     * Binds {@code source} (not its submounts) onto {@code target}, both real paths with no
     * symlink anywhere; read-only as {@link Mounter#bindMount(HostPath, Path, boolean)} does it,
     * the bind undone if the remount fails or leaves it writable.
     */
    public void bindMount(Path source, Path target, boolean readOnly) {
        HostPath.requireCanonical(source, "bind source");
        HostPath.requireCanonical(target, "bind target");
        try (Mounter.PathHandle from = Mounter.PathHandle.open(libc, lastError, source, "bind source");
             Mounter.PathHandle to = Mounter.PathHandle.open(libc, lastError, target, "bind target")) {
            call(libc.mount(from.procPath(), to.procPath(), null, MountFlag.BIND.bit(), null),
                    () -> "bind-mounting " + source + " on " + target);
        }
        if (!readOnly) {
            return;
        }
        try {
            EnumSet<MountFlag> flags = Mounter.readOnlyRemountFlags(mountTable, target);
            // reopened after the bind so that the descriptor is the new mount's root
            try (Mounter.PathHandle mounted = Mounter.PathHandle.open(libc, lastError, target, "bind target")) {
                call(libc.mount(null, mounted.procPath(), null, MountFlag.bits(flags), null),
                        () -> "remounting the bind mount on " + target + " read-only");
            }
            Mounter.requireReadOnly(mountTable, target);
        } catch (RuntimeException e) {
            if (libc.umount2(target.toString(), UMOUNT_NOFOLLOW) != 0) {
                e.addSuppressed(ErrnoStatus.failure("undoing the bind mount on " + target, lastError.getAsInt()));
            }
            throw e;
        }
    }

    /**
     * Removes the mount on top of {@code target} (one mount). Not being a mount point and not
     * existing are outcomes, as for {@link Mounter#unmount(Path)}; a busy mount is
     * FAILED_PRECONDITION naming what holds it.
     */
    public UnmountOutcome unmount(Path target) {
        HostPath.requireCanonical(target, "unmount target");
        if (libc.umount2(target.toString(), UMOUNT_NOFOLLOW) == 0) {
            return UnmountOutcome.UNMOUNTED;
        }
        return Mounter.unmountFailed(target, lastError.getAsInt(), mountTable, holders);
    }

    private void call(int rc, Supplier<String> what) {
        if (rc != 0) {
            throw ErrnoStatus.failure(what.get(), lastError.getAsInt());
        }
    }
}
