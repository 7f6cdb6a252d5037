package io.lvmqos.cgroup;

import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/** Reading and writing cgroupfs files, for every writer of this package. */
final class CgroupFiles {

    private CgroupFiles() {
    }

    /**
     * One write(2) of the whole line: cgroup files act on each write call separately. Opened as
     * the shell's "echo line > file" opens it; cgroupfs ignores the truncation.
     */
    static void write(Path file, String line) {
        byte[] bytes = line.getBytes(StandardCharsets.US_ASCII);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            int written = channel.write(ByteBuffer.wrap(bytes));
            if (written != bytes.length) {
                throw DriverException.internal("short write of '" + line + "' to " + file + ": " + written + " of "
                        + bytes.length + " bytes");
            }
        } catch (NoSuchFileException e) {
            throw DriverException.unavailable("cannot write '" + line + "' to " + file
                    + ": the file does not exist (cgroup removed, or controller not enabled)");
        } catch (IOException e) {
            throw DriverException.internal("writing '" + line + "' to " + file + " failed: " + reason(e));
        }
    }

    /**
     * The refusal of a line of a cgroup file that this package cannot read, with the line and why:
     * INTERNAL, since the kernel answered in a way the driver does not understand. The readers
     * throw only this, never the NumberFormatException of a field, so a caller and the fuzz
     * targets can tell a refused file from a defect in the reader.
     */
    static DriverException.Internal notUnderstood(String file, String line, IllegalArgumentException why) {
        return DriverException.internal(file + " line is not understood: '" + line + "': " + why.getMessage(), why);
    }

    /** The file's text; empty when it does not exist. */
    static Optional<String> read(Path file) {
        try {
            return Optional.of(Files.readString(file, StandardCharsets.US_ASCII));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw DriverException.internal("reading " + file + " failed: " + reason(e));
        }
    }

    /**
     * Turns on the io controller for every cgroup between the root and {@code cgroup}. Each
     * "+io" goes in top-down: a cgroup can only enable what its parent passed down, and once the
     * parent has, the kernel lists io in the child's cgroup.controllers by itself.
     */
    static void enableIoController(Path root, Path cgroup) {
        if (!controllers(root, "cgroup.controllers").contains("io")) {
            throw DriverException.unavailable("the cgroup v2 io controller is not available at " + root
                    + " (its cgroup.controllers has no 'io'): it is bound to a cgroup v1 hierarchy or disabled on"
                    + " the kernel command line");
        }
        Path current = root;
        Path relative = root.relativize(cgroup);
        for (int i = 0; i < relative.getNameCount(); i++) {
            if (!controllers(current, "cgroup.subtree_control").contains("io")) {
                write(current.resolve("cgroup.subtree_control"), "+io");
            }
            current = current.resolve(relative.getName(i));
        }
    }

    private static List<String> controllers(Path cgroup, String file) {
        String text = read(cgroup.resolve(file)).orElseThrow(() -> DriverException.unavailable(
                cgroup.resolve(file) + " does not exist: " + cgroup + " is not a cgroup v2 directory"));
        return Arrays.asList(text.strip().split("\\s+"));
    }

    static String reason(IOException e) {
        return e instanceof FileSystemException fs && fs.getReason() != null ? fs.getReason()
                : String.valueOf(e.getMessage());
    }
}
