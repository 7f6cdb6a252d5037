package io.lvmqos.mount;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The mount table as the kernel sees it for this process: /proc/self/mountinfo. It is the truth
 * about what is mounted where; the driver keeps no list of its own.
 */
public final class MountTable {

    public static final Path SELF_MOUNTINFO = Path.of("/proc/self/mountinfo");

    private final Path mountinfo;

    public MountTable(Path mountinfo) {
        this.mountinfo = mountinfo;
    }

    public MountTable() {
        this(SELF_MOUNTINFO);
    }

    public List<MountEntry> read() {
        try {
            return parse(Files.readString(mountinfo, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw DriverException.internal("cannot read " + mountinfo + ": " + e, e);
        }
    }

    /**
     * The mount that is visible at {@code mountPoint}: when several are stacked there, the one on
     * top, which is the one that is not the parent of another mount at the same place. The path is
     * compared as given (normalized): mountinfo holds real paths, so pass one without symlinks.
     */
    public Optional<MountEntry> at(Path mountPoint) {
        return topAt(read(), mountPoint);
    }

    /** As {@link #at}, in entries already read: several questions about one moment cost one read. */
    public static Optional<MountEntry> topAt(List<MountEntry> entries, Path mountPoint) {
        Path wanted = mountPoint.toAbsolutePath().normalize();
        List<MountEntry> here = entries.stream().filter(e -> e.mountPoint().equals(wanted)).toList();
        Set<Integer> covered = here.stream().map(MountEntry::parentId).collect(Collectors.toSet());
        List<MountEntry> top = here.stream().filter(e -> !covered.contains(e.mountId())).toList();
        // Only one can be on top; if the table changed under us, the latest listed wins.
        return top.isEmpty() ? Optional.empty() : Optional.of(top.getLast());
    }

    /** Every mount of a filesystem on this device (the device itself and its bind mounts). */
    public List<MountEntry> mountsOf(DeviceNumber device) {
        return read().stream().filter(e -> e.device().equals(device)).toList();
    }

    /** Mounts strictly below {@code path}: these keep it busy. */
    public List<MountEntry> mountsBelow(Path path) {
        Path top = path.toAbsolutePath().normalize();
        return read().stream().filter(e -> e.mountPoint().startsWith(top) && !e.mountPoint().equals(top)).toList();
    }

    public static List<MountEntry> parse(String text) {
        List<MountEntry> entries = new ArrayList<>();
        int lineNumber = 0;
        for (String line : text.split("\n")) {
            lineNumber++;
            if (line.isBlank()) {
                continue;
            }
            try {
                entries.add(parseLine(line));
            } catch (RuntimeException e) {
                throw DriverException.internal("mountinfo line " + lineNumber + " is not understood: '" + line
                        + "': " + e.getMessage(), e);
            }
        }
        return entries;
    }

    /**
     * {@code 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue}: six
     * fixed fields, zero or more optional fields ended by "-", then type, source and super options.
     * Fields are separated by single spaces; spaces, tabs, newlines and backslashes inside a field
     * are escaped as \040, \011, \012 and \134.
     */
    static MountEntry parseLine(String line) {
        String[] fields = line.split(" ");
        int separator = Arrays.asList(fields).indexOf("-");
        if (fields.length < 10 || separator < 6 || fields.length - separator != 4) {
            throw new IllegalArgumentException("expected 6 fields, optional fields, '-' and 3 more");
        }
        return new MountEntry(
                Integer.parseInt(fields[0]),
                Integer.parseInt(fields[1]),
                DeviceNumber.parse(fields[2]),
                unescape(fields[3]),
                Path.of(unescape(fields[4])),
                splitOptions(fields[5]),
                List.of(Arrays.copyOfRange(fields, 6, separator)),
                unescape(fields[separator + 1]),
                unescape(fields[separator + 2]),
                splitOptions(fields[separator + 3]));
    }

    private static List<String> splitOptions(String field) {
        return Arrays.stream(field.split(",")).map(MountTable::unescape).toList();
    }

    /** Decodes the kernel's \ooo escapes; the result is UTF-8 bytes, as the path was. */
    static String unescape(String field) {
        if (field.indexOf('\\') < 0) {
            return field;
        }
        byte[] raw = field.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length);
        for (int i = 0; i < raw.length; i++) {
            if (raw[i] == '\\' && i + 3 < raw.length && isOctal(raw[i + 1]) && isOctal(raw[i + 2])
                    && isOctal(raw[i + 3])) {
                out.write(((raw[i + 1] - '0') << 6) | ((raw[i + 2] - '0') << 3) | (raw[i + 3] - '0'));
                i += 3;
            } else {
                out.write(raw[i]);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static boolean isOctal(byte b) {
        return b >= '0' && b <= '7';
    }
}
