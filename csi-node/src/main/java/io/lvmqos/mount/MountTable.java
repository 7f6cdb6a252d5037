package io.lvmqos.mount;

import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The mount table as the kernel sees it for this process: /proc/self/mountinfo. It is the truth
 * about what is mounted where; the driver keeps no list of its own.
 */
public final class MountTable {

    public static final Path SELF_MOUNTINFO = Path.of("/proc/self/mountinfo");

    private static final Set<String> PROPAGATION_TAGS = Set.of("shared", "master", "propagate_from");

    private final Path mountinfo;
    /** Present where one mount is looked up by its unique id rather than in the whole table. */
    private final Optional<StatMount> statMount;

    /** The table in {@code mountinfo}; mounts are looked up by unique id only in this process's own table. */
    public MountTable(Path mountinfo) {
        this(mountinfo, mountinfo.equals(SELF_MOUNTINFO) ? StatMount.system() : Optional.empty());
    }

    MountTable(Path mountinfo, Optional<StatMount> statMount) {
        this.mountinfo = mountinfo;
        this.statMount = statMount;
    }

    /** How one mount is found: "statmount" by unique id, or "mountinfo" by reading the table. */
    public String lookup() {
        return statMount.isPresent() ? "statmount" : "mountinfo";
    }

    /**
     * The id of the mount a descriptor is on, in the numbering {@link #located} takes: the unique
     * id (statx) where statmount is used, else mountinfo's (fdinfo). Mounter compares only ids of
     * one numbering with each other.
     */
    long idOf(Beneath.Fd fd) {
        return statMount.isPresent() ? fd.uniqueMountId() : fd.mountId();
    }

    /**
     * One mount by an id from {@link #idOf}, with its parent's id in the same numbering: one
     * statmount(2) call where the kernel has it, else the line of one read of mountinfo.
     */
    Optional<StatMount.Found> located(long id) {
        if (statMount.isPresent()) {
            return statMount.get().byId(id);
        }
        return byId(Math.toIntExact(id)).map(e -> new StatMount.Found(e, e.mountId(), e.parentId()));
    }

    public MountTable() {
        this(SELF_MOUNTINFO);
    }

    public List<MountEntry> read() {
        return parse(text());
    }

    private String text() {
        try {
            return Files.readString(mountinfo, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw DriverException.internal("cannot read " + mountinfo + ": " + e, e);
        }
    }

    /**
     * The line of one mount, found by its id (as /proc/self/fdinfo and mountinfo number mounts).
     * Only that line is parsed, but the kernel still formats the whole table for the read, so
     * the call still grows with the mounts on the node (ScaleBenchmark); {@link #located} uses
     * statmount(2) instead where the kernel has it.
     */
    public Optional<MountEntry> byId(int mountId) {
        String text = text();
        String prefix = mountId + " ";
        int start;
        if (text.startsWith(prefix)) {
            start = 0;
        } else {
            int newline = text.indexOf("\n" + prefix);
            if (newline < 0) {
                return Optional.empty();
            }
            start = newline + 1;
        }
        int end = text.indexOf('\n', start);
        return Optional.of(parseKnownLine(text.substring(start, end < 0 ? text.length() : end)));
    }

    /**
     * The mount that is visible at {@code mountPoint}: when several are stacked there, the one on
     * top, which is the one that is not the parent of another mount at the same place. The path is
     * compared as given (normalized): mountinfo holds real paths, so pass one without symlinks.
     * Only the lines that name the path are parsed.
     */
    public Optional<MountEntry> at(Path mountPoint) {
        Path wanted = mountPoint.toAbsolutePath().normalize();
        return topAt(selected(List.of(wanted), Optional.empty(), false), wanted);
    }

    /**
     * The mounts at any of {@code mountPoints}, the mounts of {@code device} if given, and with
     * {@code deviceNodes} every devtmpfs mount (a raw block publish binds a device node out of
     * devtmpfs): what a publish needs to know, without parsing the rest of the table. A line is
     * picked by its raw text and then parsed and checked in full, so the pick may take too many
     * lines but never misses one.
     */
    public List<MountEntry> selected(List<Path> mountPoints, Optional<DeviceNumber> device, boolean deviceNodes) {
        return selected(text(), mountPoints, device, deviceNodes);
    }

    /** One read of the table, so that several questions about the same moment cost one read. */
    public Snapshot snapshot() {
        return new Snapshot(text());
    }

    /** The table's text as read once; {@link #selected} and {@link #mentioning} on it parse only what they pick. */
    public static final class Snapshot {
        private final String text;

        private Snapshot(String text) {
            this.text = text;
        }

        /** As {@link MountTable#selected}, in this read. */
        public List<MountEntry> selected(List<Path> mountPoints, Optional<DeviceNumber> device, boolean deviceNodes) {
            return MountTable.selected(text, mountPoints, device, deviceNodes);
        }

        /** As {@link MountTable#mentioning}, in this read. */
        public List<MountEntry> mentioning(String wanted) {
            return MountTable.mentioning(text, wanted);
        }
    }

    private static List<MountEntry> selected(String table, List<Path> mountPoints, Optional<DeviceNumber> device,
                                             boolean deviceNodes) {
        List<Path> points = mountPoints.stream().map(p -> p.toAbsolutePath().normalize()).toList();
        List<String> escapedPoints = points.stream()
                .map(p -> " " + MountinfoEscapes.escape(p.toString()) + " ").toList();
        String deviceField = device.map(d -> " " + d + " ").orElse(null);
        List<String> needles = new ArrayList<>(escapedPoints);
        if (deviceField != null) {
            needles.add(deviceField);
        }
        if (deviceNodes) {
            needles.add(" - devtmpfs ");
        }
        List<MountEntry> entries = new ArrayList<>();
        for (String line : linesContaining(table, needles)) {
            MountEntry entry = parseKnownLine(line);
            if (points.contains(entry.mountPoint())
                    || device.map(entry.device()::equals).orElse(false)
                    || (deviceNodes && entry.fsType().equals("devtmpfs"))) {
                entries.add(entry);
            }
        }
        return entries;
    }

    /**
     * The mounts whose line names {@code text} anywhere (a pod's UID, say), parsed; lines with
     * escapes are parsed and searched decoded. The rest of the table is not parsed.
     */
    public List<MountEntry> mentioning(String text) {
        return mentioning(text(), text);
    }

    private static List<MountEntry> mentioning(String table, String text) {
        List<MountEntry> entries = new ArrayList<>();
        for (String line : linesContaining(table, List.of(text))) {
            if (line.indexOf('\\') < 0) {
                entries.add(parseKnownLine(line));
            } else {
                MountEntry entry = parseKnownLine(line);
                if (entry.mountPoint().toString().contains(text) || entry.root().contains(text)
                        || entry.source().contains(text) || line.contains(text)) {
                    entries.add(entry);
                }
            }
        }
        return entries;
    }

    /**
     * The lines of {@code table} that contain any of {@code needles}, and every line with an
     * escape (its raw text need not match a decoded needle), in table order, each once. Each
     * needle is searched through the whole text at once rather than line by line, so that no
     * string is made for the lines that are not picked.
     */
    static List<String> linesContaining(String table, List<String> needles) {
        TreeSet<Integer> starts = new TreeSet<>();
        List<String> all = new ArrayList<>(needles);
        all.add("\\");
        for (String needle : all) {
            int at = table.indexOf(needle);
            while (at >= 0) {
                starts.add(table.lastIndexOf('\n', at) + 1);
                int end = table.indexOf('\n', at);
                at = end < 0 ? -1 : table.indexOf(needle, end + 1);
            }
        }
        List<String> lines = new ArrayList<>(starts.size());
        for (int start : starts) {
            int end = table.indexOf('\n', start);
            String line = table.substring(start, end < 0 ? table.length() : end);
            if (!line.isBlank()) {
                lines.add(line);
            }
        }
        return lines;
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
        return selected(List.of(), Optional.of(device), false);
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
            } catch (IllegalArgumentException e) {
                throw DriverException.internal("mountinfo line " + lineNumber + " is not understood: '" + line
                        + "': " + e.getMessage(), e);
            }
        }
        return entries;
    }

    private static MountEntry parseKnownLine(String line) {
        try {
            return parseLine(line);
        } catch (IllegalArgumentException e) {
            throw DriverException.internal("mountinfo line is not understood: '" + line + "': " + e.getMessage(), e);
        }
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
        List<String> optionalFields = List.of(Arrays.copyOfRange(fields, 6, separator));
        optionalFields.forEach(MountTable::requireNumberedTag);
        return new MountEntry(
                Integer.parseInt(fields[0]),
                Integer.parseInt(fields[1]),
                DeviceNumber.parse(fields[2]),
                MountinfoEscapes.unescape(fields[3]),
                Path.of(MountinfoEscapes.unescape(fields[4])),
                splitOptions(fields[5]),
                optionalFields,
                MountinfoEscapes.unescape(fields[separator + 1]),
                MountinfoEscapes.unescape(fields[separator + 2]),
                splitOptions(fields[separator + 3]));
    }

    /**
     * The propagation tags carry a peer group's number (proc(5)); one that does not is refused here,
     * with its line, rather than failing later in {@link MountEntry#sharedPeerGroup} with a bare
     * NumberFormatException (found by MountTableFuzzTest). Fields of other kinds are kept unread.
     */
    private static void requireNumberedTag(String field) {
        int colon = field.indexOf(':');
        if (colon > 0 && PROPAGATION_TAGS.contains(field.substring(0, colon))) {
            try {
                Integer.parseInt(field.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("optional field '" + field + "' is not a tag and a peer group number");
            }
        }
    }

    private static List<String> splitOptions(String field) {
        return Arrays.stream(field.split(",")).map(MountinfoEscapes::unescape).toList();
    }
}
