package io.lvmqos.device;

import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A block device's number as the kernel names it in mountinfo, io.max and the blkio files:
 * "MAJ:MIN". The kernel keeps 12 bits of major and 20 of minor; both are checked here so that a
 * number that cannot exist is never written to a cgroup file.
 */
public record DeviceNumber(int major, int minor) {

    /** Largest major the kernel can represent internally (MINORBITS = 20 leaves 12 bits). */
    public static final int MAX_MAJOR = (1 << 12) - 1;
    public static final int MAX_MINOR = (1 << 20) - 1;

    private static final int S_IFMT = 0170000;
    private static final int S_IFBLK = 0060000;
    private static final Pattern TEXT = Pattern.compile("(\\d{1,4}):(\\d{1,7})");

    public DeviceNumber {
        if (major < 0 || major > MAX_MAJOR) {
            throw new IllegalArgumentException("major " + major + " is outside 0.." + MAX_MAJOR);
        }
        if (minor < 0 || minor > MAX_MINOR) {
            throw new IllegalArgumentException("minor " + minor + " is outside 0.." + MAX_MINOR);
        }
    }

    /**
     * Splits a user-space dev_t (st_rdev) the way glibc's gnu_dev_major/minor do. The minor's low
     * 8 bits sit below the major and its high bits above it, so dividing by 256 is wrong for every
     * minor over 255.
     */
    public static DeviceNumber fromDev(long dev) {
        long major = ((dev >>> 8) & 0xfffL) | ((dev >>> 32) & ~0xfffL);
        long minor = (dev & 0xffL) | ((dev >>> 12) & ~0xffL);
        if (major > MAX_MAJOR || minor > MAX_MINOR) {
            throw new IllegalArgumentException("dev_t 0x" + Long.toHexString(dev)
                    + " has a major or minor the kernel cannot represent");
        }
        return new DeviceNumber((int) major, (int) minor);
    }

    /** Parses "MAJ:MIN" as it appears in mountinfo and cgroup files. */
    public static DeviceNumber parse(String text) {
        Matcher m = TEXT.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a MAJ:MIN device number: '" + text + "'");
        }
        return new DeviceNumber(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
    }

    /**
     * The number of the block device at {@code device}, or empty when nothing is there: an LV that is
     * not active has no device node, and nothing can have it mounted or open.
     *
     * @throws DriverException.FailedPrecondition when it is not a block device
     */
    public static Optional<DeviceNumber> ofActive(Path device) {
        try {
            return Optional.of(of(device));
        } catch (DriverException.NotFound e) {
            return Optional.empty();
        }
    }

    /**
     * The number of the block device at {@code device} (symlinks such as /dev/vg/lv are followed
     * on purpose: they are how LVM names its devices).
     *
     * @throws DriverException.NotFound when nothing is there
     * @throws DriverException.FailedPrecondition when it is not a block device
     */
    public static DeviceNumber of(Path device) {
        try {
            // one stat: the type and the number are of the same node, whatever the path leads to next
            Map<String, Object> attributes = Files.readAttributes(device, "unix:mode,rdev");
            int mode = (Integer) attributes.get("mode");
            if ((mode & S_IFMT) != S_IFBLK) {
                throw DriverException.failedPrecondition(device + " is not a block device (mode "
                        + Integer.toOctalString(mode) + ")");
            }
            return fromDev((Long) attributes.get("rdev"));
        } catch (NoSuchFileException e) {
            throw DriverException.notFound("block device " + device + " does not exist");
        } catch (IOException e) {
            throw DriverException.internal("cannot stat " + device + ": " + e, e);
        }
    }

    @Override
    public String toString() {
        return major + ":" + minor;
    }
}
