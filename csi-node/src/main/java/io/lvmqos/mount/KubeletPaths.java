package io.lvmqos.mount;

import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Paths the kubelet hands the node plugin (staging and target paths), checked before the driver
 * creates, mounts on or removes anything there.
 *
 * <p>The rule: a path must be absolute, already normalized (no "." or ".."), under the kubelet
 * directory, and no existing component below that directory may be a symlink. Kubelet never puts
 * symlinks on these paths, so one there is either a mistake or an attempt to make a root process
 * mount on, or delete, something outside the kubelet directory; both are refused. The kubelet
 * directory itself may be a symlink (e.g. /var/lib/kubelet to a data disk): it is resolved once,
 * here, and paths are accepted under either spelling and returned under the real one, which is the
 * spelling the mount table uses.
 *
 * <p>The check and the later mkdir, mount or delete are separate system calls; {@link Mounter}
 * closes that gap for mounts by mounting through an O_PATH descriptor. For creation and removal
 * the operations themselves never follow a final symlink (mkdir and unlink do not; files are
 * created with O_NOFOLLOW), and the kubelet directory is writable only by root, so no pod can
 * swap a parent directory in between.
 */
public final class KubeletPaths {

    private final Path root;
    private final Path realRoot;

    public KubeletPaths(Path kubeletDir) {
        if (!kubeletDir.isAbsolute()) {
            throw DriverException.invalidArgument("kubelet directory " + kubeletDir + " must be absolute");
        }
        this.root = kubeletDir.normalize();
        try {
            this.realRoot = root.toRealPath();
        } catch (IOException e) {
            throw DriverException.failedPrecondition("kubelet directory " + kubeletDir + " is not usable: " + e);
        }
    }

    public Path root() {
        return realRoot;
    }

    /**
     * Checks {@code requested} and returns it under the real kubelet directory. Components that do
     * not exist yet are fine; existing ones must not be symlinks.
     *
     * @throws DriverException.InvalidArgument for a path outside the kubelet directory or not normalized
     * @throws DriverException.InvalidArgument for a symlink on the path, as for a path outside the directory
     */
    public Path check(Path requested) {
        if (!requested.isAbsolute() || !requested.normalize().equals(requested)) {
            throw DriverException.invalidArgument("path " + requested + " must be absolute and contain no . or ..");
        }
        Path relative;
        if (requested.startsWith(realRoot)) {
            relative = realRoot.relativize(requested);
        } else if (requested.startsWith(root)) {
            relative = root.relativize(requested);
        } else {
            throw DriverException.invalidArgument("path " + requested + " is outside the kubelet directory " + root);
        }
        if (relative.toString().isEmpty()) {
            throw DriverException.invalidArgument("path " + requested + " is the kubelet directory itself");
        }
        Path current = realRoot;
        for (Path name : relative) {
            current = current.resolve(name);
            BasicFileAttributes attributes;
            try {
                attributes = Files.readAttributes(current, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException e) {
                break;
            } catch (IOException e) {
                throw DriverException.internal("cannot inspect " + current + ": " + e, e);
            }
            if (attributes.isSymbolicLink()) {
                throw DriverException.invalidArgument("path " + requested + " goes through the symlink " + current
                        + "; the driver does not follow symlinks under the kubelet directory");
            }
        }
        return realRoot.resolve(relative);
    }

    /**
     * Creates the directory and any missing parents (mode 0750), one level at a time so that
     * nothing is created through a symlink; an existing directory is fine.
     */
    public Path createDirectory(Path requested) {
        Path checked = check(requested);
        Path current = realRoot;
        for (Path name : realRoot.relativize(checked)) {
            current = current.resolve(name);
            try {
                Files.createDirectory(current, PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rwxr-x---")));
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(current, LinkOption.NOFOLLOW_LINKS)) {
                    throw DriverException.failedPrecondition(current + " exists and is not a directory");
                }
            } catch (IOException e) {
                throw DriverException.internal("cannot create directory " + current + ": " + e, e);
            }
        }
        return checked;
    }

    /**
     * Creates an empty regular file (the target of a raw block publish, bind-mounted over by the
     * device); an existing regular file is fine. Its parent must exist.
     */
    public Path createFile(Path requested) {
        Path checked = check(requested);
        try {
            Files.newByteChannel(checked, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS).close();
        } catch (FileAlreadyExistsException e) {
            if (!Files.isRegularFile(checked, LinkOption.NOFOLLOW_LINKS)) {
                throw DriverException.failedPrecondition(checked + " exists and is not a regular file");
            }
        } catch (NoSuchFileException e) {
            throw DriverException.notFound("the parent directory of " + checked + " does not exist");
        } catch (IOException e) {
            throw DriverException.internal("cannot create file " + checked + ": " + e, e);
        }
        return checked;
    }

    /**
     * Removes an empty directory or a file; a symlink on the path is refused like everywhere else,
     * never followed. Returns false when nothing was there. A mount point cannot be removed
     * (EBUSY), so unmount first.
     */
    public boolean remove(Path requested) {
        Path checked = check(requested);
        try {
            return Files.deleteIfExists(checked);
        } catch (DirectoryNotEmptyException e) {
            throw DriverException.failedPrecondition("cannot remove " + checked
                    + ": the directory is not empty (is a volume still mounted there, or were files written"
                    + " into the unmounted directory?)");
        } catch (IOException e) {
            throw DriverException.failedPrecondition("cannot remove " + checked + ": " + e);
        }
    }
}
