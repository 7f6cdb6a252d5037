package io.lvmqos.mount;

import io.lvmqos.device.FsType;
import io.lvmqos.errors.DriverException;
import io.lvmqos.exec.ProcessStarts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * mount(2) and umount2(2) called directly, not through mount(8): publishing is the hot path and a
 * fork and exec costs more than the mount itself.
 *
 * <p>Every target is a path under the kubelet directory, given at construction as a
 * {@link Beneath}: the target is reached one component at a time from a descriptor of the kubelet
 * directory, the mount is made onto that descriptor and checked afterwards (a target moved
 * meanwhile is unmounted again and the call fails), and an unmount is given the pinned parent's
 * descriptor and the last name, then checked to have removed the mount that was meant. An O_PATH
 * descriptor of the mount itself would keep it busy, so the unmount goes through the parent's.
 * Sources outside it (a device node) are {@link HostPath}s: a bind's source is opened with
 * O_PATH|O_NOFOLLOW, its real path read back from /proc/self/fd and compared with the path asked
 * for, and the bind made from /proc/self/fd/N, so a symlink anywhere on it fails the call and a
 * component swapped after the check cannot redirect it (the technique runc uses).
 *
 * <p>Never MNT_DETACH or MNT_FORCE: a lazy unmount of a busy volume would report success while a
 * process still writes to it, and the LV underneath could then be deleted.
 */
public final class Mounter {

    private static final Logger log = LoggerFactory.getLogger(Mounter.class);

    private static final int UMOUNT_NOFOLLOW = 8;
    private static final int O_PATH = 010000000;
    private static final int O_CLOEXEC = 02000000;
    private static final int S_IFMT = 0170000;
    private static final int S_IFLNK = 0120000;
    /** Per-mount flags a bind-remount must repeat, or the kernel clears them. */
    private static final Set<MountFlag> PER_MOUNT =
            EnumSet.of(MountFlag.NOSUID, MountFlag.NODEV, MountFlag.NOEXEC, MountFlag.NOATIME,
                    MountFlag.NODIRATIME, MountFlag.RELATIME, MountFlag.NOSYMFOLLOW);

    private final LibC libc;
    private final IntSupplier lastError;
    private final MountTable mountTable;
    private final ProcessScanner holders;
    private final Beneath under;

    Mounter(LibC libc, IntSupplier lastError, MountTable mountTable, ProcessScanner holders, Beneath under) {
        this.libc = libc;
        this.lastError = lastError;
        this.mountTable = mountTable;
        this.holders = holders;
        this.under = under;
    }

    /** Binds libc; fails at start-up rather than on the first publish. Mounts only under {@code paths}' directory. */
    public static Mounter create(MountTable mountTable, KubeletPaths paths) {
        return new Mounter(NativeLibC.libc(), NativeLibC.lastError(), mountTable, new ProcessScanner(Path.of("/proc")),
                paths.beneath());
    }

    /** What a failed umount2 of {@code target} means: not mounted, not there, or an error naming its cause. */
    static UnmountOutcome unmountFailed(Path target, int errno, MountTable mountTable, ProcessScanner holders) {
        if (errno == Errno.EINVAL.intValue()) {
            return UnmountOutcome.NOT_A_MOUNT_POINT;
        }
        if (errno == Errno.ENOENT.intValue()) {
            return UnmountOutcome.NO_SUCH_PATH;
        }
        if (errno == Errno.EBUSY.intValue()) {
            throw DriverException.failedPrecondition("cannot unmount " + target + ": it is busy; "
                    + describeHolders(target, mountTable, holders));
        }
        throw ErrnoStatus.failure("unmounting " + target, errno);
    }

    /**
     * Mounts a filesystem on a block device (a freshly formatted LV on its staging path) onto a
     * path under the kubelet directory, reached one component at a time and checked again after
     * the mount (see {@link #mountOnto}).
     */
    public void mount(HostPath device, Path target, FsType type, MountOptions options) {
        String fsType = type.kernelName();
        Set<MountFlag> flags = options.flags();
        String data = options.dataString().orElse("");
        requireNewMount(flags);
        mountOnto(target, false, onto -> libc.mount(device.path().toString(), onto, fsType, MountFlag.bits(flags),
                        data.isEmpty() ? null : data),
                () -> "mounting " + fsType + " " + device.path() + " on " + target
                        + (data.isEmpty() ? "" : " with options " + data), pinned -> { });
        log.debug("mounted {} {} on {} flags {} data '{}'", fsType, device.path(), target, flags, data);
    }

    /**
     * Binds {@code source} (not its submounts) onto a path under the kubelet directory, reached
     * one component at a time and checked again after the mount (see {@link #mountOnto}). For a
     * raw block volume the source is the device's real path (LVM's /dev/VG/LV is a symlink to
     * /dev/dm-N, and no symlink is followed). A read-only bind takes two calls, because MS_RDONLY
     * is ignored on the first: bind, then remount the new mount read-only (repeating its
     * nosuid/nodev/noexec/atime flags, which a bind-remount would otherwise clear). If the remount
     * fails, or does not leave the mount read-only, the bind is undone, so the caller never gets a
     * writable mount it asked to be read-only.
     */
    public void bindMount(HostPath source, Path target, boolean readOnly) {
        try (PathHandle from = PathHandle.open(libc, lastError, source.path(), "bind source")) {
            mountOnto(target, false, onto -> libc.mount(from.procPath(), onto, null, MountFlag.BIND.bit(), null),
                    () -> "bind-mounting " + source.path() + " on " + target,
                    pinned -> {
                        if (readOnly) {
                            remountReadOnly(target);
                        }
                    });
        }
    }

    /**
     * {@link #bindMount(HostPath, Path, boolean)} of a pinned mount (a staging mount): the bind
     * is made from the pinned descriptor, so it binds the filesystem that was checked, whatever the
     * staging path's name leads to by then. The target directory is made if it is missing (mode
     * 0750, each missing level), on the same walk from the kubelet directory as the mount.
     */
    public void bindMount(PinnedMount source, Path target, boolean readOnly) {
        mountOnto(target, true, onto -> libc.mount(source.fd().procPath(), onto, null, MountFlag.BIND.bit(), null),
                () -> "bind-mounting " + source.entry().mountPoint() + " on " + target,
                pinned -> {
                    if (readOnly) {
                        remountReadOnly(target);
                    }
                });
    }

    private void remountReadOnly(Path target) {
        EnumSet<MountFlag> flags = readOnlyRemountFlags(mountTable, target);
        // opened after the bind, so that the descriptor is the new mount's root
        try (Beneath.Parent parent = under.parent(target);
             Beneath.Fd mounted = under.open(parent, target).orElseThrow(() -> changed("mounted on", target,
                     Optional.empty()))) {
            call(libc.mount(null, mounted.procPath(), null, MountFlag.bits(flags), null),
                    () -> "remounting the bind mount on " + target + " read-only");
        }
        requireReadOnly(mountTable, target);
    }

    /** The guard of every mount(2) that is to make a new mount: binds, remounts and moves have their own calls. */
    static void requireNewMount(Set<MountFlag> flags) {
        if (flags.contains(MountFlag.BIND) || flags.contains(MountFlag.REMOUNT) || flags.contains(MountFlag.MOVE)) {
            throw DriverException.invalidArgument("mount() makes new mounts only; use bindMount for " + flags);
        }
    }

    /** The check after a read-only remount: the caller undoes the bind when it throws. */
    static void requireReadOnly(MountTable mountTable, Path target) {
        if (!mountTable.at(target).map(MountEntry::readOnly).orElse(false)) {
            throw DriverException.internal("the bind mount on " + target + " is still writable after a read-only"
                    + " remount");
        }
    }

    /**
     * The flags of a read-only remount of the bind mount on {@code target}: a remount replaces the
     * per-mount flags, so those the bind took over from its source (nosuid, nodev, ...) are kept.
     */
    static EnumSet<MountFlag> readOnlyRemountFlags(MountTable mountTable, Path target) {
        MountEntry bound = mountTable.at(target).orElseThrow(() -> DriverException.internal(
                "the bind mount on " + target + " is not in the mount table right after mount(2) succeeded"));
        EnumSet<MountFlag> flags = EnumSet.of(MountFlag.REMOUNT, MountFlag.BIND, MountFlag.RDONLY);
        for (MountFlag flag : PER_MOUNT) {
            if (bound.options().contains(optionName(flag))) {
                flags.add(flag);
            }
        }
        return flags;
    }

    /** A mount(2) call given the path that names the target ({@code /proc/self/fd/N}). */
    private interface MountCall {
        int onto(String target);
    }

    /** What follows a mount that was checked; if it throws, the mount is undone. */
    private interface AfterMount {
        void run(Beneath.Fd pinned);
    }

    /**
     * Mounts onto {@code target} through an O_PATH descriptor of it, reached from the kubelet
     * directory one component at a time, so the mount lands on the inode that was checked even if
     * a component is swapped for a symlink meanwhile. Then checks that the path still leads there:
     * the pinned directory is still at {@code target}, and walking the path again from the top
     * reaches a mount made on the pinned directory's mount at {@code target}. If not, the target
     * changed under the call: the mount is undone through the same descriptor and the call fails
     * with FAILED_PRECONDITION, leaving nothing mounted wherever the directory went.
     */
    private void mountOnto(Path target, boolean create, MountCall mount, Supplier<String> what, AfterMount then) {
        HostPath.requireCanonical(target, "mount target");
        try (Beneath.Parent parent = create ? under.createDirectoryIn(target) : under.parent(target);
             Beneath.Fd pinned = create ? under.openDirectory(parent, target)
                     : under.open(parent, target).orElseThrow(() -> DriverException.notFound(
                             "mount target " + target + " does not exist"))) {
            long below = mountTable.idOf(pinned);
            call(mount.onto(pinned.procPath()), what);
            try {
                requireMountedAt(target, pinned, below);
                then.run(pinned);
            } catch (RuntimeException e) {
                undoOnto(pinned, target, e);
                throw e;
            }
        }
    }

    private void requireMountedAt(Path target, Beneath.Fd pinned, long below) {
        Optional<Path> now = pinned.currentPath();
        if (now.isEmpty() || !now.get().equals(target)) {
            throw changed("mounted on", target, now);
        }
        long top;
        try (Beneath.Parent again = under.parent(target);
             Beneath.Fd reached = under.open(again, target).orElseThrow(() -> changed("mounted on", target,
                     Optional.empty()))) {
            top = mountTable.idOf(reached);
        } catch (DriverException.InvalidArgument | DriverException.NotFound e) {
            throw changed("mounted on", target, pinned.currentPath());
        }
        Optional<StatMount.Found> made = mountTable.located(top);
        if (top == below || made.isEmpty() || made.get().parentId() != below
                || !made.get().entry().mountPoint().equals(target)) {
            throw changed("mounted on", target, pinned.currentPath());
        }
    }

    /**
     * Undoes a mount made onto a pinned descriptor. umount2 follows the magic link
     * /proc/self/fd/N to the pinned directory and takes the mount on top of it: the one just made,
     * wherever a rename has moved the directory. No user symlink is followed on the way.
     */
    private void undoOnto(Beneath.Fd pinned, Path target, RuntimeException cause) {
        if (ProcessStarts.unmounting(() -> libc.umount2(pinned.procPath(), 0)) != 0) {
            int errno = lastError.getAsInt();
            cause.addSuppressed(ErrnoStatus.failure("undoing the mount made on " + target, errno));
            log.error("a mount made on {} (the directory is now at {}) could not be undone: {}", target,
                    pinned.currentPath().map(Path::toString).orElse("a removed directory"), Errno.describe(errno));
        }
    }

    private static DriverException changed(String doing, Path target, Optional<Path> now) {
        return DriverException.failedPrecondition("path " + target + " changed while it was being " + doing
                + ": the directory checked is now "
                + now.map(p -> "at " + p).orElse("gone from it")
                + " (was a directory on the path swapped for a symlink or renamed?); the mount was undone,"
                + " nothing is left mounted; retry once the path is a plain directory again");
    }

    /**
     * Removes the mount on top of a path under the kubelet directory (one mount; the caller loops
     * if it stacks them), through descriptors: the target's parent is reached one component at a time and pinned, the mount on the target's
     * name is identified by its mount id, and umount2 is given /proc/self/fd/P/name (the parent's
     * descriptor and the last name, UMOUNT_NOFOLLOW), so that no swapped component can redirect it
     * outside. Afterwards the mount meant must be gone from the mount table. Not being a mount
     * point and not existing are outcomes, not errors, so that unpublish and unstage stay
     * idempotent.
     *
     * @throws DriverException.FailedPrecondition when the mount is busy, naming what holds it
     */
    public UnmountOutcome unmount(Path target) {
        return unmount(target, OptionalLong.empty());
    }

    /**
     * {@link #unmount(Path)} of the mount that an earlier {@link #pin} found there: if
     * the path now leads to another mount, nothing is unmounted and the call fails, so that what
     * was read from the pinned mount (its device, whose limits are lifted next) is what went.
     */
    public UnmountOutcome unmount(Path target, OptionalLong expectedMount) {
        HostPath.requireCanonical(target, "unmount target");
        Beneath.Parent parent;
        try {
            parent = under.parent(target);
        } catch (DriverException.NotFound gone) {
            return UnmountOutcome.NO_SUCH_PATH;
        }
        try (parent) {
            long meant;
            // closed before umount2: an open descriptor on the mount would keep it busy
            try (Beneath.Fd top = under.open(parent, target).orElse(null)) {
                if (top == null) {
                    return UnmountOutcome.NO_SUCH_PATH;
                }
                meant = mountTable.idOf(top);
            }
            if (meant == mountTable.idOf(parent.dir())) {
                return UnmountOutcome.NOT_A_MOUNT_POINT;
            }
            if (expectedMount.isPresent() && meant != expectedMount.getAsLong()) {
                throw DriverException.failedPrecondition("path " + target + " changed while it was being unmounted:"
                        + " it leads to mount " + meant + ", not to mount " + expectedMount.getAsLong() + " read a moment"
                        + " before; nothing was unmounted; retry once the path is a plain directory again");
            }
            Optional<MountEntry> entry = mountTable.located(meant).map(StatMount.Found::entry);
            if (entry.isEmpty() || !entry.get().mountPoint().equals(target)) {
                throw DriverException.failedPrecondition("path " + target + " changed while it was being unmounted:"
                        + " the mount found there (id " + meant + ") is "
                        + entry.map(e -> "now at " + e.mountPoint()).orElse("gone")
                        + "; nothing was unmounted; retry once the path is a plain directory again");
            }
            // no child of the driver may still hold a copy of a descriptor on the mount (ProcessStarts)
            if (ProcessStarts.unmounting(() -> libc.umount2(parent.procPath(), UMOUNT_NOFOLLOW)) != 0) {
                int errno = lastError.getAsInt();
                boolean stillThere = mountTable.located(meant).isPresent();
                if ((errno == Errno.EINVAL.intValue() || errno == Errno.ENOENT.intValue()) && stillThere) {
                    throw DriverException.failedPrecondition("path " + target + " changed while it was being"
                            + " unmounted (its last name no longer leads to mount " + meant + "); nothing was"
                            + " unmounted; retry once the path is a plain directory again");
                }
                return unmountFailed(target, errno, mountTable, holders);
            }
            Optional<MountEntry> left = mountTable.located(meant).map(StatMount.Found::entry);
            if (left.isPresent()) {
                throw DriverException.failedPrecondition("path " + target + " changed while it was being unmounted:"
                        + " another mount took the place of mount " + meant + " (now at " + left.get().mountPoint()
                        + ") and was unmounted instead; retry once the path is a plain directory again");
            }
            log.debug("unmounted {} (mount {})", target, meant);
            return UnmountOutcome.UNMOUNTED;
        }
    }

    /**
     * The mount on top of {@code path} (under the kubelet directory), pinned by a descriptor
     * reached one component at a time, with its mount table line found by the descriptor's mount
     * id. Empty when the path is not a mount point; NOT_FOUND when it does not exist;
     * FAILED_PRECONDITION when the mount found is no longer at {@code path} (a directory on the
     * path was swapped or renamed meanwhile).
     */
    public Optional<PinnedMount> pin(Path path) {
        HostPath.requireCanonical(path, "volume path");
        try (Beneath.Parent parent = under.parent(path)) {
            Beneath.Fd top = under.open(parent, path).orElseThrow(() -> DriverException.notFound(
                    "volume path " + path + " does not exist"));
            try {
                long id = mountTable.idOf(top);
                if (id == mountTable.idOf(parent.dir())) {
                    top.close();
                    return Optional.empty();
                }
                Optional<MountEntry> entry = mountTable.located(id).map(StatMount.Found::entry);
                if (entry.isEmpty() || !entry.get().mountPoint().equals(path)) {
                    throw DriverException.failedPrecondition("path " + path + " changed while it was being read:"
                            + " the mount found there (id " + id + ") is "
                            + entry.map(e -> "now at " + e.mountPoint()).orElse("gone")
                            + "; retry once the path is a plain directory again");
                }
                return Optional.of(new PinnedMount(top, entry.get(), id));
            } catch (RuntimeException e) {
                top.close();
                throw e;
            }
        } catch (DriverException.NotFound noParent) {
            throw DriverException.notFound("volume path " + path + " does not exist");
        }
    }

    /** {@link #pin}, with a path that does not exist taken as nothing mounted there. */
    public Optional<PinnedMount> pinIfPresent(Path path) {
        try {
            return pin(path);
        } catch (DriverException.NotFound gone) {
            return Optional.empty();
        }
    }

    private static String describeHolders(Path target, MountTable mountTable, ProcessScanner holders) {
        StringBuilder why = new StringBuilder();
        var below = mountTable.mountsBelow(target);
        if (!below.isEmpty()) {
            why.append("mounts below it: ").append(below.stream().map(m -> m.mountPoint().toString()).toList())
                    .append("; ");
        }
        Optional<MountEntry> mount = mountTable.at(target);
        if (mount.isEmpty()) {
            return why.append("it is no longer in the mount table").toString();
        }
        ProcessScanner.Holders found = holders.using(mount.get().device());
        if (found.processes().isEmpty()) {
            why.append("no process has a file, working directory or root on its filesystem (")
                    .append(mount.get().device()).append(")");
            why.append(found.complete() ? "; it may be held by a memory mapping, a loop device or another mount"
                    : " among the processes scanned before the scan's limit");
        } else {
            why.append("processes using its filesystem (").append(mount.get().device()).append("): ")
                    .append(String.join(", ", found.processes().stream().map(ProcessScanner.Holder::toString).toList()));
            if (!found.complete()) {
                why.append(" (scan stopped at its limit; there may be more)");
            }
        }
        return why.toString();
    }

    /**
     * errno is read first, before anything else runs on this thread. NativeLibC saves it per thread
     * (a virtual one included) right after the call, so nothing in between can overwrite it.
     */
    private void call(int rc, Supplier<String> what) {
        if (rc != 0) {
            int errno = lastError.getAsInt();
            throw ErrnoStatus.failure(what.get(), errno);
        }
    }

    private static String optionName(MountFlag flag) {
        return switch (flag) {
            case NOSUID -> "nosuid";
            case NODEV -> "nodev";
            case NOEXEC -> "noexec";
            case NOATIME -> "noatime";
            case NODIRATIME -> "nodiratime";
            case RELATIME -> "relatime";
            case NOSYMFOLLOW -> "nosymfollow";
            default -> throw new IllegalArgumentException(flag + " is not a per-mount option");
        };
    }

    /**
     * An O_PATH descriptor of a path outside the kubelet directory, opened by name: it pins the
     * inode it was opened on but grants no access to it. The opened file's real path is read back
     * from /proc/self/fd and compared with the path asked for, so a symlink anywhere on the path
     * fails the open (the technique runc uses).
     */
    static final class PathHandle implements AutoCloseable {
        private static final int OPEN_FLAGS = O_PATH | O_CLOEXEC | Beneath.O_NOFOLLOW;

        private final LibC libc;
        private final int fd;

        private PathHandle(LibC libc, int fd) {
            this.libc = libc;
            this.fd = fd;
        }

        static PathHandle open(LibC libc, IntSupplier lastError, Path path, String role) {
            HostPath.requireCanonical(path, role);
            int fd = libc.open(path.toString(), OPEN_FLAGS);
            if (fd < 0) {
                int errno = lastError.getAsInt();
                if (errno == Errno.ENOENT.intValue()) {
                    throw DriverException.notFound(role + " " + path + " does not exist");
                }
                throw ErrnoStatus.failure("opening " + role + " " + path, errno);
            }
            PathHandle handle = new PathHandle(libc, fd);
            try {
                Path proc = Path.of(handle.procPath());
                Path real = Files.readSymbolicLink(proc);
                // With O_NOFOLLOW a final symlink is opened as itself, so its path reads back unchanged.
                if (((Integer) Files.getAttribute(proc, "unix:mode") & S_IFMT) == S_IFLNK) {
                    throw DriverException.failedPrecondition(role + " " + path
                            + " is a symlink, and the driver never mounts through one");
                }
                if (!real.equals(path)) {
                    throw DriverException.failedPrecondition(role + " " + path + " resolves to " + real
                            + ": a symlink is on the path, and the driver never mounts through one");
                }
                return handle;
            } catch (IOException e) {
                handle.close();
                throw DriverException.internal("cannot read back where " + path + " was opened: " + e, e);
            } catch (RuntimeException e) {
                handle.close();
                throw e;
            }
        }

        String procPath() {
            return "/proc/self/fd/" + fd;
        }

        @Override
        public void close() {
            libc.close(fd);
        }
    }
}
