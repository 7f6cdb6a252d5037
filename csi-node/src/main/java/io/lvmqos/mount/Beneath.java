package io.lvmqos.mount;

import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.DirectoryStream;
import java.nio.file.NoSuchFileException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.IntSupplier;

/**
 * Paths under one directory (the kubelet directory), resolved one component at a time from a
 * descriptor opened on that directory, never by name from "/". Each component is opened with
 * openat2(2) and RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS, relative to the
 * descriptor of the one before it; on a kernel without openat2 (before 5.6: ENOSYS), with
 * openat(2) and O_NOFOLLOW, which for a single name refuses the same things. Where openat2 is
 * there, the directories above a path's last name are first opened by one call with the same
 * resolve flags, and walked one at a time only when that fails. A symlink anywhere
 * below the directory, or a component swapped for one after any earlier check, ends the walk with
 * INVALID_ARGUMENT, so whatever is then created, mounted on, unmounted or removed is reached through
 * descriptors of directories that were inside the kubelet directory when they were opened.
 */
public final class Beneath {

    static final long SYS_OPENAT2 = 437; // x86_64
    static final int O_WRONLY = 01;
    static final int O_CREAT = 0100;
    static final int O_EXCL = 0200;
    static final int O_DIRECTORY = 0200000;
    static final int O_NOFOLLOW = 0400000;
    static final int O_CLOEXEC = 02000000;
    static final int O_PATH = 010000000;
    static final int AT_REMOVEDIR = 0x200;
    static final long RESOLVE_NO_MAGICLINKS = 0x02;
    static final long RESOLVE_NO_SYMLINKS = 0x04;
    static final long RESOLVE_BENEATH = 0x08;
    private static final int S_IFMT = 0170000;
    static final int AT_EMPTY_PATH = 0x1000;
    static final int AT_SYMLINK_NOFOLLOW = 0x100;
    static final int STATX_TYPE = 0x1;
    static final int STATX_MNT_ID_UNIQUE = 0x4000;
    /** struct statx's size, and the offsets of stx_mode and stx_mnt_id in it. */
    static final int STATX_SIZE = 256;
    static final int STX_MODE = 28;
    static final int STX_MNT_ID = 0x90;
    static final int S_IFDIR = 0040000;
    static final int S_IFREG = 0100000;
    static final int S_IFLNK = 0120000;

    private final LibC libc;
    private final IntSupplier lastError;
    private final Path root;
    private volatile boolean noOpenat2;

    Beneath(LibC libc, IntSupplier lastError, Path root) {
        this.libc = libc;
        this.lastError = lastError;
        this.root = root;
    }

    public Path root() {
        return root;
    }

    /** An open descriptor; O_PATH ones pin an inode without granting access to it. */
    public final class Fd implements AutoCloseable {
        private final int fd;
        /**
         * The unique id of the mount the descriptor is on, once read: a descriptor stays on the
         * mount it was opened on whatever is mounted or unmounted around it later.
         */
        private OptionalLong uniqueMountId = OptionalLong.empty();

        private Fd(int fd) {
            this.fd = fd;
        }

        int number() {
            return fd;
        }

        /** The magic link that names this descriptor's file to system calls that take a path. */
        public String procPath() {
            return "/proc/self/fd/" + fd;
        }

        /** Where the file is now, as the kernel names it; empty if it was removed. */
        public Optional<Path> currentPath() {
            try {
                String now = Files.readSymbolicLink(Path.of(procPath())).toString();
                return now.endsWith(" (deleted)") ? Optional.empty() : Optional.of(Path.of(now));
            } catch (IOException e) {
                throw DriverException.internal("cannot read where descriptor " + fd + " points: " + e, e);
            }
        }

        /** The id of the mount this descriptor is on, as /proc/self/mountinfo numbers mounts. */
        public int mountId() {
            try {
                return parseMountId(Files.readString(Path.of("/proc/self/fdinfo/" + fd), StandardCharsets.US_ASCII));
            } catch (IOException e) {
                throw DriverException.internal("cannot read the mount id of descriptor " + fd + ": " + e, e);
            }
        }

        /**
         * The file type bits (S_IFMT) of what the descriptor is open on, a symlink included. The
         * same statx(2) asks for the unique id of its mount (Linux 6.8+), which a pin reads next
         * ({@link #uniqueMountId}).
         */
        public int type() {
            ByteBuffer statx = statx(STATX_TYPE | STATX_MNT_ID_UNIQUE);
            if ((statx.getInt(0) & STATX_MNT_ID_UNIQUE) != 0) {
                uniqueMountId = OptionalLong.of(statx.getLong(STX_MNT_ID));
            }
            return Short.toUnsignedInt(statx.getShort(STX_MODE)) & S_IFMT;
        }

        /** The unique id of the mount the descriptor is on (statx, STATX_MNT_ID_UNIQUE), read once. */
        long uniqueMountId() {
            if (uniqueMountId.isEmpty()) {
                ByteBuffer statx = statx(STATX_MNT_ID_UNIQUE);
                if ((statx.getInt(0) & STATX_MNT_ID_UNIQUE) == 0) {
                    throw DriverException.internal("statx did not report a unique mount id (a kernel before 6.8)");
                }
                uniqueMountId = OptionalLong.of(statx.getLong(STX_MNT_ID));
            }
            return uniqueMountId.getAsLong();
        }

        /** statx(2) of the descriptor itself (not following a symlink it is open on): struct statx. */
        private ByteBuffer statx(int mask) {
            byte[] buf = new byte[STATX_SIZE];
            if (libc.statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, mask, buf) != 0) {
                throw ErrnoStatus.failure("statx of descriptor " + fd, lastError.getAsInt());
            }
            return ByteBuffer.wrap(buf).order(ByteOrder.nativeOrder());
        }

        /** fstatfs(2) of the filesystem the descriptor is on; INTERNAL with the errno when it fails. */
        public FilesystemUsage usage() {
            long[] statfs = new long[15];
            if (libc.fstatfs(fd, statfs) != 0) {
                throw ErrnoStatus.failure("statfs of descriptor " + fd, lastError.getAsInt());
            }
            return new FilesystemUsage(statfs[1], statfs[2], statfs[3], statfs[4], statfs[5], statfs[6]);
        }

        @Override
        public void close() {
            libc.close(fd);
        }
    }

    /** A descriptor opened elsewhere, closed with the {@link Fd}. */
    Fd adopt(int fd) {
        return new Fd(fd);
    }

    /** The directory a path's last name is in, opened, and that name. */
    public record Parent(Fd dir, String name) implements AutoCloseable {
        /** The name through the pinned directory, for calls that take a path: only the last name is looked up. */
        public String procPath() {
            return dir.procPath() + "/" + name;
        }

        @Override
        public void close() {
            dir.close();
        }
    }

    /** The relative names of {@code path}, which must be strictly below the root and normalized. */
    List<String> names(Path path) {
        if (!path.isAbsolute() || !path.normalize().equals(path) || !path.startsWith(root) || path.equals(root)) {
            throw DriverException.invalidArgument("path " + path + " is not a normalized path below " + root);
        }
        return components(root.relativize(path));
    }

    static List<String> components(Path relative) {
        List<String> names = new ArrayList<>();
        for (Path name : relative) {
            String s = name.toString();
            if (s.isEmpty() || s.equals(".") || s.equals("..") || s.indexOf('/') >= 0 || s.indexOf('\0') >= 0) {
                throw DriverException.invalidArgument("path component '" + s + "' is not a plain name");
            }
            names.add(s);
        }
        return names;
    }

    private Fd openRoot() {
        int fd = libc.open(root.toString(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            throw ErrnoStatus.failure("opening the kubelet directory " + root, lastError.getAsInt());
        }
        return new Fd(fd);
    }

    /** Opens the directory {@code path}'s last name is in, walking from the root. */
    public Parent parent(Path path) {
        List<String> names = names(path);
        Fd dir = walk(names.subList(0, names.size() - 1), path, false);
        return new Parent(dir, names.getLast());
    }

    /**
     * The directory {@code names} lead to below the root: as much of it as one openat2 reaches
     * ({@link #deepestAtOnce}), the rest one name at a time, each made first (mode 0750) if
     * {@code create} and missing. The walk fails on a symlink, a name that is not a directory, or
     * (unless {@code create}) a missing name, naming it.
     */
    private Fd walk(List<String> names, Path whole, boolean create) {
        Fd dir = openRoot();
        try {
            int reached = 0;
            Optional<Reached> atOnce = deepestAtOnce(dir, names);
            if (atOnce.isPresent()) {
                dir.close();
                dir = atOnce.get().dir();
                reached = atOnce.get().names();
            }
            Path walked = root;
            for (String name : names.subList(0, reached)) {
                walked = walked.resolve(name);
            }
            for (String name : names.subList(reached, names.size())) {
                walked = walked.resolve(name);
                Fd next = create ? openOrCreate(dir, name, walked, whole)
                        : openName(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, walked, whole);
                dir.close();
                dir = next;
            }
            return dir;
        } catch (RuntimeException e) {
            dir.close();
            throw e;
        }
    }

    /**
     * How many of {@code dir}'s names below the root lead, all of them directories and none a
     * symlink, to a directory that one openat2 reaches ({@link #deepestAtOnce}): all of them, or
     * fewer where the last ones are missing, or none when that cannot be told at once (no openat2,
     * a symlink, a swapped name), which the caller then finds out name by name.
     */
    public int directoriesAtOnce(Path dir) {
        List<String> names = names(dir);
        if (noOpenat2) {
            return 0;
        }
        Fd top;
        try {
            top = openRoot();
        } catch (DriverException noRoot) {
            return 0; // the name-by-name look says what is missing
        }
        try (top) {
            Optional<Reached> opened = deepestAtOnce(top, names);
            opened.ifPresent(reached -> reached.dir().close());
            return opened.map(Reached::names).orElse(0);
        }
    }

    /** The last name of a parent opened O_PATH without following it; empty when nothing is there. */
    public Optional<Fd> open(Parent parent, Path path) {
        try {
            return Optional.of(openName(parent.dir(), parent.name(), O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, path, path));
        } catch (DriverException.NotFound missing) {
            return Optional.empty();
        }
    }

    /** The last name of a parent, opened O_PATH as a directory: FAILED_PRECONDITION for anything else, NOT_FOUND if gone. */
    public Fd openDirectory(Parent parent, Path path) {
        return openName(parent.dir(), parent.name(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, path, path);
    }

    /** The directory at {@code path}, opened O_PATH; not a symlink, not anything else. */
    public Fd openDirectory(Path path) {
        try (Parent parent = parent(path)) {
            return openName(parent.dir(), parent.name(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, path, path);
        }
    }

    /**
     * The names in the directory at {@code path}, read through a descriptor of it reached one
     * component at a time (the directory listed is the one walked to, whatever its name leads to
     * by then); empty when it does not exist.
     */
    public List<String> list(Path path) {
        Optional<Fd> dir = openDirectoryIfPresent(path);
        if (dir.isEmpty()) {
            return List.of();
        }
        try (Fd opened = dir.get()) {
            return entries(opened, path);
        }
    }

    /**
     * The paths two levels below the directory at {@code path} ({@code path/a/b}): the directory
     * walked to once, each child opened relative to its descriptor and listed through its own;
     * children that are not directories are skipped, a symlink among them is refused. Empty when
     * the directory does not exist.
     */
    public List<Path> listTwoLevels(Path path) {
        Optional<Fd> opened = openDirectoryIfPresent(path);
        if (opened.isEmpty()) {
            return List.of();
        }
        try (Fd dir = opened.get()) {
            List<Path> found = new ArrayList<>();
            for (String child : entries(dir, path)) {
                Path walked = path.resolve(child);
                Fd sub;
                try {
                    sub = openName(dir, child, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, walked, walked);
                } catch (DriverException.NotFound | DriverException.FailedPrecondition goneOrNotADirectory) {
                    continue;
                }
                try (sub) {
                    entries(sub, walked).forEach(leaf -> found.add(walked.resolve(leaf)));
                }
            }
            return found;
        }
    }

    private Optional<Fd> openDirectoryIfPresent(Path path) {
        try {
            return Optional.of(openDirectory(path));
        } catch (DriverException.NotFound missing) {
            return Optional.empty();
        }
    }

    /** The names in an opened directory, read through its magic link (the pinned directory, not a name). */
    private static List<String> entries(Fd dir, Path path) {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(Path.of(dir.procPath()))) {
            List<String> names = new ArrayList<>();
            for (Path entry : entries) {
                names.add(entry.getFileName().toString());
            }
            return names;
        } catch (NoSuchFileException removed) {
            return List.of();
        } catch (IOException e) {
            throw DriverException.internal("cannot list " + path + ": " + e, e);
        }
    }

    /** A directory opened at once, and how many names below the root it is. */
    private record Reached(Fd dir, int names) {
    }

    /** How many names shorter than a whole path a missing name lets {@link #deepestAtOnce} try. */
    static final int SHORTER_TRIES = 2;

    /**
     * The directory that {@code names} lead to below {@code dir}, opened by one openat2(2) of the
     * relative path they make: RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS refuse for the whole path at
     * once what the walk refuses one name at a time (a symlink, a magic link, a way out of the
     * directory), so it reaches the directory the walk would reach, in one system call instead of
     * two per name. Under user-mode Linux, where every system call traps to the host, that is most
     * of a publish's walks. When a name on the way is missing (ENOENT), as a publish's
     * {@code <pv>} directory is when its caller has not made it, the path one and then two names
     * shorter is tried, so that the walk after it has the missing names only to look at or make.
     * Empty when there is nothing to resolve, when the kernel has no openat2, and when no try
     * succeeds or one fails for any other reason (a symlink, a rename racing the resolution,
     * which openat2 answers with EAGAIN): the caller then walks one name at a time from the top,
     * which fails, or creates, with the error that names the component.
     */
    private Optional<Reached> deepestAtOnce(Fd dir, List<String> names) {
        for (int count = names.size(); count > 0 && count >= names.size() - SHORTER_TRIES && !noOpenat2; count--) {
            long[] how = {O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0,
                    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
            int fd = (int) libc.syscall(SYS_OPENAT2, dir.number(), String.join("/", names.subList(0, count)), how, 24L);
            if (fd >= 0) {
                return Optional.of(new Reached(new Fd(fd), count));
            }
            int errno = lastError.getAsInt();
            if (errno == Errno.ENOSYS.intValue()) {
                noOpenat2 = true;
            }
            if (errno != Errno.ENOENT.intValue()) {
                break;
            }
        }
        return Optional.empty();
    }

    private Fd openName(Fd dir, String name, int flags, int mode, Path walked, Path whole) {
        int fd = -1;
        int errno = 0;
        if (!noOpenat2) {
            long[] how = {flags, mode, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
            fd = (int) libc.syscall(SYS_OPENAT2, dir.number(), name, how, 24L);
            if (fd < 0) {
                errno = lastError.getAsInt();
                if (errno == Errno.ENOSYS.intValue()) {
                    noOpenat2 = true;
                }
            }
        }
        if (noOpenat2) {
            fd = libc.openat(dir.number(), name, flags, mode);
            errno = fd < 0 ? lastError.getAsInt() : 0;
        }
        if (fd >= 0) {
            Fd opened = new Fd(fd);
            if ((flags & O_DIRECTORY) == 0 && (flags & O_PATH) != 0 && opened.type() == S_IFLNK) {
                opened.close();
                throw symlink(walked, whole);
            }
            return opened;
        }
        if (errno == Errno.ENOENT.intValue()) {
            throw DriverException.notFound(walked + " does not exist");
        }
        if (errno == Errno.ELOOP.intValue() || errno == Errno.EXDEV.intValue()) {
            throw symlink(walked, whole);
        }
        if (errno == Errno.ENOTDIR.intValue()) {
            throw notADirectory(dir, name, walked, whole);
        }
        if (errno == Errno.EEXIST.intValue()) {
            throw DriverException.alreadyExists(walked + " already exists");
        }
        throw ErrnoStatus.failure("opening " + walked, errno);
    }

    /** ENOTDIR: openat with O_NOFOLLOW says so for a symlink too; tell the two apart for the message. */
    private DriverException notADirectory(Fd dir, String name, Path walked, Path whole) {
        int fd = libc.openat(dir.number(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
        if (fd >= 0) {
            try (Fd what = new Fd(fd)) {
                if (what.type() == S_IFLNK) {
                    return symlink(walked, whole);
                }
            }
        }
        return DriverException.failedPrecondition(walked + " exists and is not a directory, on the path " + whole);
    }

    private static DriverException symlink(Path walked, Path whole) {
        return DriverException.invalidArgument("path " + whole + " goes through the symlink " + walked
                + "; the driver does not follow symlinks under the kubelet directory");
    }

    /** mkdir -p, one level at a time relative to the directory above (mode 0750). */
    public void createDirectories(Path path) {
        walk(names(path), path, true).close();
    }

    /**
     * {@link #createDirectories} of {@code path}'s parent, then its last name made in it if
     * missing, handing back the parent opened and that name: a mount onto the new directory needs
     * no second walk from the root.
     */
    public Parent createDirectoryIn(Path path) {
        List<String> names = names(path);
        Fd dir = walk(names.subList(0, names.size() - 1), path, true);
        try {
            makeDirectory(dir, names.getLast(), path);
            return new Parent(dir, names.getLast());
        } catch (RuntimeException e) {
            dir.close();
            throw e;
        }
    }

    /** The directory {@code name} in {@code dir}, made first (mode 0750) if it is missing. */
    private Fd openOrCreate(Fd dir, String name, Path walked, Path whole) {
        try {
            return openName(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, walked, whole);
        } catch (DriverException.NotFound missing) {
            makeDirectory(dir, name, walked);
            return openName(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, walked, whole);
        }
    }

    /** mkdirat(2) relative to {@code dir}; one that exists already is fine (what it is, the open after says). */
    private void makeDirectory(Fd dir, String name, Path walked) {
        if (libc.mkdirat(dir.number(), name, 0750) != 0) {
            int errno = lastError.getAsInt();
            if (errno != Errno.EEXIST.intValue()) {
                throw ErrnoStatus.failure("creating directory " + walked, errno);
            }
        }
    }

    /** Creates an empty regular file (mode 0640) in its existing parent; an existing regular file is fine. */
    public void createFile(Path path) {
        try (Parent parent = parent(path)) {
            int fd = libc.openat(parent.dir().number(), parent.name(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
                    | O_CLOEXEC, 0640);
            if (fd >= 0) {
                libc.close(fd);
                return;
            }
            int errno = lastError.getAsInt();
            if (errno != Errno.EEXIST.intValue()) {
                throw ErrnoStatus.failure("creating file " + path, errno);
            }
            try (Fd existing = open(parent, path).orElseThrow(() -> DriverException.aborted(path
                    + " was removed while it was being created; retry"))) {
                if (existing.type() != S_IFREG) {
                    throw DriverException.failedPrecondition(path + " exists and is not a regular file");
                }
            }
        } catch (DriverException.NotFound noParent) {
            throw DriverException.notFound("the parent directory of " + path + " does not exist");
        }
    }

    /**
     * Removes an empty directory or a regular file with unlinkat(2) relative to its parent's
     * descriptor. False when nothing was there. A symlink is refused, never followed or removed.
     */
    public boolean remove(Path path) {
        Parent parent;
        try {
            parent = parent(path);
        } catch (DriverException.NotFound noParent) {
            return false;
        }
        try (parent) {
            if (libc.unlinkat(parent.dir().number(), parent.name(), AT_REMOVEDIR) == 0) {
                return true;
            }
            int errno = lastError.getAsInt();
            if (errno == Errno.ENOENT.intValue()) {
                return false;
            }
            if (errno == Errno.ENOTEMPTY.intValue() || errno == Errno.EEXIST.intValue()) {
                throw DriverException.failedPrecondition("cannot remove " + path
                        + ": the directory is not empty (is a volume still mounted there, or were files written"
                        + " into the unmounted directory?)");
            }
            if (errno == Errno.EBUSY.intValue()) {
                throw DriverException.failedPrecondition("cannot remove " + path + ": something is mounted on it");
            }
            if (errno != Errno.ENOTDIR.intValue()) {
                throw DriverException.failedPrecondition("cannot remove " + path + ": " + Errno.describe(errno));
            }
            try (Fd file = open(parent, path).orElse(null)) {
                if (file == null) {
                    return false;
                }
                if (file.type() != S_IFREG) {
                    throw DriverException.invalidArgument("path " + path + " is neither a directory nor a regular"
                            + " file; the driver removes nothing else under the kubelet directory");
                }
            }
            if (libc.unlinkat(parent.dir().number(), parent.name(), 0) == 0) {
                return true;
            }
            errno = lastError.getAsInt();
            if (errno == Errno.ENOENT.intValue()) {
                return false;
            }
            throw DriverException.failedPrecondition("cannot remove " + path + ": " + Errno.describe(errno));
        }
    }

    /** The "mnt_id:" line of /proc/self/fdinfo/N (present since Linux 3.15). */
    static int parseMountId(String fdinfo) {
        for (String line : fdinfo.split("\n")) {
            if (line.startsWith("mnt_id:")) {
                return Integer.parseInt(line.substring("mnt_id:".length()).trim());
            }
        }
        throw DriverException.internal("no mnt_id in fdinfo: " + fdinfo.replace('\n', ' '));
    }
}
