package io.lvmqos.mount;

import io.lvmqos.device.FsType;
import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * mount(2) and umount2(2) called directly, not through mount(8): publishing is the hot path and a
 * fork and exec costs more than the mount itself.
 *
 * <p>Symlinks: every target (and a bind's source) is opened with O_PATH|O_NOFOLLOW, the opened
 * file's real path read back from /proc/self/fd and compared with the path asked for, and the
 * mount made onto /proc/self/fd/N. A symlink anywhere in the path makes the real path differ and
 * the call fail, and swapping a component after the check cannot redirect the mount, because it
 * lands on the inode that was checked (the technique runc uses).
 *
 * <p>Paths under the kubelet directory go through the methods that take a {@link Beneath}: the
 * target is reached one component at a time from a descriptor of the kubelet directory, the mount
 * is made onto that descriptor and checked afterwards (a target moved meanwhile is unmounted again
 * and the call fails), and an unmount is given the pinned parent's descriptor and the last name,
 * then checked to have removed the mount that was meant. An O_PATH descriptor of the mount itself
 * would keep it busy, so the unmount goes through the parent's.
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
    private static final Pattern FS_TYPE = Pattern.compile("[a-z0-9][a-z0-9._-]{0,31}");
    /** Per-mount flags a bind-remount must repeat, or the kernel clears them. */
    private static final Set<MountFlag> PER_MOUNT =
            EnumSet.of(MountFlag.NOSUID, MountFlag.NODEV, MountFlag.NOEXEC, MountFlag.NOATIME,
                    MountFlag.NODIRATIME, MountFlag.RELATIME, MountFlag.NOSYMFOLLOW);

    private final LibC libc;
    private final IntSupplier lastError;
    private final MountTable mountTable;
    private final ProcessScanner holders;
    private final int openFlags;

    Mounter(LibC libc, IntSupplier lastError, MountTable mountTable, ProcessScanner holders) {
        this.libc = libc;
        this.lastError = lastError;
        this.mountTable = mountTable;
        this.holders = holders;
        this.openFlags = O_PATH | O_CLOEXEC | Beneath.O_NOFOLLOW;
    }

    /** Binds libc; fails at start-up rather than on the first publish. */
    public static Mounter create(MountTable mountTable) {
        return new Mounter(NativeLibC.libc(), NativeLibC.lastError(), mountTable, new ProcessScanner(Path.of("/proc")));
    }

    /** Mounts a filesystem on a block device, e.g. a freshly formatted LV on its staging path. */
    public void mount(Path device, Path target, FsType type, MountOptions options) {
        mount(device, target, type.kernelName(), options.flags(), options.dataString().orElse(""));
    }

    /**
     * mount(2) of {@code source} on {@code target}. {@code data} is the filesystem's option
     * string, empty for none. The target must exist and contain no symlink.
     */
    public void mount(Path source, Path target, String fsType, Set<MountFlag> flags, String data) {
        requireCanonical(target, "mount target");
        if (!FS_TYPE.matcher(fsType).matches()) {
            throw DriverException.invalidArgument("filesystem type '" + fsType + "' is not a valid name");
        }
        if (flags.contains(MountFlag.BIND) || flags.contains(MountFlag.REMOUNT) || flags.contains(MountFlag.MOVE)) {
            throw DriverException.invalidArgument("mount() makes new mounts only; use bindMount for " + flags);
        }
        try (PathHandle handle = open(target, "mount target")) {
            call(libc.mount(source.toString(), handle.procPath(), fsType, MountFlag.bits(flags),
                            data.isEmpty() ? null : data),
                    () -> "mounting " + fsType + " " + source + " on " + target
                            + (data.isEmpty() ? "" : " with options " + data));
        }
        log.debug("mounted {} {} on {} flags {} data '{}'", fsType, source, target, flags, data);
    }

    /**
     * Binds {@code source} (not its submounts) onto {@code target}. Both must be real paths with no
     * symlink anywhere: for a raw block volume pass the device's real path (LVM's /dev/VG/LV is a
     * symlink to /dev/dm-N; use {@code toRealPath()} on it first). A read-only bind takes two
     * calls, because MS_RDONLY is ignored on the first: bind, then remount the new mount read-only
     * (repeating its nosuid/nodev/noexec/atime flags, which a bind-remount would otherwise clear).
     * If the remount fails, or does not leave the mount read-only, the bind is undone, so the
     * caller never gets a writable mount it asked to be read-only.
     */
    public void bindMount(Path source, Path target, boolean readOnly) {
        requireCanonical(source, "bind source");
        requireCanonical(target, "bind target");
        try (PathHandle from = open(source, "bind source"); PathHandle to = open(target, "bind target")) {
            call(libc.mount(from.procPath(), to.procPath(), null, MountFlag.BIND.bit(), null),
                    () -> "bind-mounting " + source + " on " + target);
        }
        if (!readOnly) {
            return;
        }
        try {
            EnumSet<MountFlag> flags = readOnlyRemountFlags(target);
            // Reopened after the bind so that the descriptor is the new mount's root, not the
            // directory it covers.
            try (PathHandle mounted = open(target, "bind target")) {
                call(libc.mount(null, mounted.procPath(), null, MountFlag.bits(flags), null),
                        () -> "remounting the bind mount on " + target + " read-only");
            }
            if (!mountTable.at(target).map(MountEntry::readOnly).orElse(false)) {
                throw DriverException.internal("the bind mount on " + target
                        + " is still writable after a read-only remount");
            }
        } catch (RuntimeException e) {
            undo(target, e);
            throw e;
        }
    }

    /**
     * Removes the mount on top of {@code target} (one mount; the caller loops if it stacks them).
     * Not being a mount point and not existing are outcomes, not errors, so that unpublish and
     * unstage stay idempotent.
     *
     * @throws DriverException.FailedPrecondition when the mount is busy, naming what holds it
     */
    public UnmountOutcome unmount(Path target) {
        requireCanonical(target, "unmount target");
        if (libc.umount2(target.toString(), UMOUNT_NOFOLLOW) == 0) {
            log.debug("unmounted {}", target);
            return UnmountOutcome.UNMOUNTED;
        }
        return unmountFailed(target, lastError.getAsInt());
    }

    /** What a failed umount2 of {@code target} means: not mounted, not there, or an error naming its cause. */
    private UnmountOutcome unmountFailed(Path target, int errno) {
        if (errno == Errno.EINVAL.intValue()) {
            return UnmountOutcome.NOT_A_MOUNT_POINT;
        }
        if (errno == Errno.ENOENT.intValue()) {
            return UnmountOutcome.NO_SUCH_PATH;
        }
        if (errno == Errno.EBUSY.intValue()) {
            throw DriverException.failedPrecondition("cannot unmount " + target + ": it is busy; "
                    + describeHolders(target));
        }
        throw failure("unmounting " + target, errno);
    }

    /**
     * {@link #mount(Path, Path, FsType, MountOptions)} onto a path under {@code under}'s directory,
     * reached one component at a time and checked again after the mount (see {@link #mountOnto}).
     */
    public void mount(Path device, Beneath under, Path target, FsType type, MountOptions options) {
        String fsType = type.kernelName();
        Set<MountFlag> flags = options.flags();
        String data = options.dataString().orElse("");
        if (flags.contains(MountFlag.BIND) || flags.contains(MountFlag.REMOUNT) || flags.contains(MountFlag.MOVE)) {
            throw DriverException.invalidArgument("mount() makes new mounts only; use bindMount for " + flags);
        }
        mountOnto(under, target, onto -> libc.mount(device.toString(), onto, fsType, MountFlag.bits(flags),
                        data.isEmpty() ? null : data),
                () -> "mounting " + fsType + " " + device + " on " + target
                        + (data.isEmpty() ? "" : " with options " + data), pinned -> { });
        log.debug("mounted {} {} on {} flags {} data '{}'", fsType, device, target, flags, data);
    }

    /**
     * {@link #bindMount(Path, Path, boolean)} onto a path under {@code under}'s directory, reached
     * one component at a time and checked again after the mount (see {@link #mountOnto}).
     */
    public void bindMount(Path source, Beneath under, Path target, boolean readOnly) {
        requireCanonical(source, "bind source");
        try (PathHandle from = open(source, "bind source")) {
            mountOnto(under, target, onto -> libc.mount(from.procPath(), onto, null, MountFlag.BIND.bit(), null),
                    () -> "bind-mounting " + source + " on " + target,
                    pinned -> {
                        if (readOnly) {
                            remountReadOnly(under, target);
                        }
                    });
        }
    }

    /**
     * {@link #bindMount(Path, Beneath, Path, boolean)} of a pinned mount (a staging mount): the bind
     * is made from the pinned descriptor, so it binds the filesystem that was checked, whatever the
     * staging path's name leads to by then.
     */
    public void bindMount(PinnedMount source, Beneath under, Path target, boolean readOnly) {
        mountOnto(under, target, onto -> libc.mount(source.fd().procPath(), onto, null, MountFlag.BIND.bit(), null),
                () -> "bind-mounting " + source.entry().mountPoint() + " on " + target,
                pinned -> {
                    if (readOnly) {
                        remountReadOnly(under, target);
                    }
                });
    }

    private void remountReadOnly(Beneath under, Path target) {
        EnumSet<MountFlag> flags = readOnlyRemountFlags(target);
        // opened after the bind, so that the descriptor is the new mount's root
        try (Beneath.Parent parent = under.parent(target);
             Beneath.Fd mounted = under.open(parent, target).orElseThrow(() -> changed("mounted on", target,
                     Optional.empty()))) {
            call(libc.mount(null, mounted.procPath(), null, MountFlag.bits(flags), null),
                    () -> "remounting the bind mount on " + target + " read-only");
        }
        if (!mountTable.at(target).map(MountEntry::readOnly).orElse(false)) {
            throw DriverException.internal("the bind mount on " + target + " is still writable after a read-only"
                    + " remount");
        }
    }

    /**
     * The flags of a read-only remount of the bind mount on {@code target}: a remount replaces the
     * per-mount flags, so those the bind took over from its source (nosuid, nodev, ...) are kept.
     */
    private EnumSet<MountFlag> readOnlyRemountFlags(Path target) {
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
    private void mountOnto(Beneath under, Path target, MountCall mount, Supplier<String> what, AfterMount then) {
        requireCanonical(target, "mount target");
        try (Beneath.Parent parent = under.parent(target);
             Beneath.Fd pinned = under.open(parent, target).orElseThrow(() -> DriverException.notFound(
                     "mount target " + target + " does not exist"))) {
            long below = mountTable.idOf(pinned);
            call(mount.onto(pinned.procPath()), what);
            try {
                requireMountedAt(under, target, pinned, below);
                then.run(pinned);
            } catch (RuntimeException e) {
                undoOnto(pinned, target, e);
                throw e;
            }
        }
    }

    private void requireMountedAt(Beneath under, Path target, Beneath.Fd pinned, long below) {
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
        if (libc.umount2(pinned.procPath(), 0) != 0) {
            int errno = lastError.getAsInt();
            cause.addSuppressed(failure("undoing the mount made on " + target, errno));
            log.error("a mount made on {} (the directory is now at {}) could not be undone: {}", target,
                    pinned.currentPath().map(Path::toString).orElse("a removed directory"), describe(errno));
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
     * {@link #unmount(Path)} of a path under {@code under}'s directory, through descriptors: the
     * target's parent is reached one component at a time and pinned, the mount on the target's
     * name is identified by its mount id, and umount2 is given /proc/self/fd/P/name (the parent's
     * descriptor and the last name, UMOUNT_NOFOLLOW), so that no swapped component can redirect it
     * outside. Afterwards the mount meant must be gone from the mount table.
     */
    public UnmountOutcome unmount(Beneath under, Path target) {
        return unmount(under, target, OptionalLong.empty());
    }

    /**
     * {@link #unmount(Beneath, Path)} of the mount that an earlier {@link #pin} found there: if
     * the path now leads to another mount, nothing is unmounted and the call fails, so that what
     * was read from the pinned mount (its device, whose limits are lifted next) is what went.
     */
    public UnmountOutcome unmount(Beneath under, Path target, OptionalLong expectedMount) {
        requireCanonical(target, "unmount target");
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
            if (libc.umount2(parent.procPath(), UMOUNT_NOFOLLOW) != 0) {
                int errno = lastError.getAsInt();
                boolean stillThere = mountTable.located(meant).isPresent();
                if ((errno == Errno.EINVAL.intValue() || errno == Errno.ENOENT.intValue()) && stillThere) {
                    throw DriverException.failedPrecondition("path " + target + " changed while it was being"
                            + " unmounted (its last name no longer leads to mount " + meant + "); nothing was"
                            + " unmounted; retry once the path is a plain directory again");
                }
                return unmountFailed(target, errno);
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
     * The mount on top of {@code path} (under {@code under}'s directory), pinned by a descriptor
     * reached one component at a time, with its mount table line found by the descriptor's mount
     * id. Empty when the path is not a mount point; NOT_FOUND when it does not exist;
     * FAILED_PRECONDITION when the mount found is no longer at {@code path} (a directory on the
     * path was swapped or renamed meanwhile).
     */
    public Optional<PinnedMount> pin(Beneath under, Path path) {
        requireCanonical(path, "volume path");
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

    private String describeHolders(Path target) {
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

    private void undo(Path target, RuntimeException cause) {
        if (libc.umount2(target.toString(), UMOUNT_NOFOLLOW) != 0) {
            int errno = lastError.getAsInt();
            cause.addSuppressed(failure("undoing the bind mount on " + target + " after the read-only remount failed",
                    errno));
            log.error("a bind mount on {} that should have been read-only could not be undone: {}", target,
                    describe(errno));
        }
    }

    private PathHandle open(Path path, String role) {
        int fd = libc.open(path.toString(), openFlags);
        if (fd < 0) {
            int errno = lastError.getAsInt();
            if (errno == Errno.ENOENT.intValue()) {
                throw DriverException.notFound(role + " " + path + " does not exist");
            }
            throw failure("opening " + role + " " + path, errno);
        }
        PathHandle handle = new PathHandle(fd);
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

    /**
     * errno is read first, before anything else runs on this thread. NativeLibC saves it per thread
     * (a virtual one included) right after the call, so nothing in between can overwrite it.
     */
    private void call(int rc, Supplier<String> what) {
        if (rc != 0) {
            int errno = lastError.getAsInt();
            throw failure(what.get(), errno);
        }
    }

    static DriverException failure(String what, int errno) {
        String message = what + " failed: " + describe(errno);
        if (errno == Errno.EPERM.intValue() || errno == Errno.EACCES.intValue()) {
            return DriverException.failedPrecondition(message
                    + " (the node plugin needs root with CAP_SYS_ADMIN in the host's mount namespace)");
        }
        if (errno == Errno.ENOENT.intValue() || errno == Errno.ENOTDIR.intValue()
                || errno == Errno.ENODEV.intValue() || errno == Errno.ENXIO.intValue()) {
            return DriverException.notFound(message);
        }
        if (errno == Errno.EBUSY.intValue()) {
            return DriverException.failedPrecondition(message);
        }
        return DriverException.internal(message);
    }

    static String describe(int errno) {
        return Errno.describe(errno);
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

    private static void requireCanonical(Path path, String role) {
        if (!path.isAbsolute() || !path.normalize().equals(path)) {
            throw DriverException.invalidArgument(role + " " + path + " must be an absolute path without . or ..");
        }
    }

    /** An O_PATH descriptor, which pins the inode it was opened on but grants no access to it. */
    private final class PathHandle implements AutoCloseable {
        private final int fd;

        PathHandle(int fd) {
            this.fd = fd;
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
