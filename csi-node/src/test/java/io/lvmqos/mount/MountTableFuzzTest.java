package io.lvmqos.mount;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.lvmqos.device.DeviceNumber;
import io.lvmqos.errors.DriverException;
import io.lvmqos.fuzz.FuzzReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fuzzes the reading of /proc/self/mountinfo: {@link MountTable#parse}, its line parser and escapes,
 * and the publish path's partial read ({@link MountTable.Snapshot#selected}).
 *
 * <p>Property: for any text, {@code parse} returns entries or refuses with DriverException.Internal
 * "mountinfo line N is not understood: 'LINE': WHY", where LINE is the text's line N and the cause
 * the field's IllegalArgumentException, never another exception; an entry it returns answers
 * {@code readOnly} and {@code sharedPeerGroup} (which start-up asks of the kubelet directory's
 * mounts) without throwing. A table written as the kernel writes it (six fields, optional fields,
 * "-", three more; space, tab, newline and backslash as \ooo escapes; any other character as
 * itself) parses back to the entries it was written from; {@code unescape} undoes {@code escape} for
 * any text; and picking the lines of a mount point, a device or devtmpfs from the raw text finds
 * exactly the entries a full parse finds.
 */
class MountTableFuzzTest {

    private static final FuzzReport REPORT = new FuzzReport(MountTableFuzzTest.class);
    private static final Pattern LINE_NUMBER = Pattern.compile("mountinfo line (\\d{1,9}) ");
    private static final String[] NAMES = {"var", "lib", "kubelet", "pods", "a b", "tab\there", "new\nline",
            "back\\slash", "\\040", "é", "x", "-", "shared:1", " ", "\\", "\r"};
    private static final String[] OPTIONS = {"rw", "ro", "nosuid", "nodev", "relatime", "errors=remount-ro",
            "size=1024k", "mode=755", "a b", "x\\y"};
    private static final String[] OPTIONAL_FIELDS = {"shared:1", "master:2", "propagate_from:3", "unbindable",
            "shared:2147483647"};

    @TempDir
    Path dir;
    /** The table {@code selected} reads: in memory (/dev/shm) where there is one, a file write per execution costs. */
    Path mountinfo;

    @BeforeEach
    void placeTheTable() throws IOException {
        Path shm = Path.of("/dev/shm");
        mountinfo = Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempFile(shm, "mountinfo", "")
                : dir.resolve("mountinfo");
    }

    @AfterEach
    void removeTheTable() throws IOException {
        Files.deleteIfExists(mountinfo);
    }

    @FuzzTest
    void readsOrRefusesEveryTable(FuzzedDataProvider data) throws IOException {
        REPORT.count();
        switch (data.consumeInt(0, 3)) {
            case 0 -> readOrRefuse(data.consumeRemainingAsString());
            case 1 -> {
                String text = data.consumeRemainingAsString();
                // paths are bytes: text with a lone surrogate has no UTF-8 form to come back to
                if (new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8).equals(text)) {
                    assertEquals(text, MountinfoEscapes.unescape(MountinfoEscapes.escape(text)));
                }
            }
            default -> {
                List<MountEntry> entries = new ArrayList<>();
                StringBuilder table = new StringBuilder();
                for (int n = data.consumeInt(1, 6); n > 0; n--) {
                    MountEntry entry = entry(data);
                    entries.add(entry);
                    table.append(line(entry)).append('\n');
                }
                String text = table.toString();
                if (data.consumeBoolean()) {
                    assertEquals(entries, MountTable.parse(text), text);
                    if (data.consumeInt(0, 3) == 0) {
                        picksWhatAFullParseFinds(data, text, entries);
                    }
                } else {
                    int at = data.consumeInt(0, text.length() - 1);
                    readOrRefuse(text.substring(0, at) + data.consumeChar() + text.substring(at + 1));
                }
            }
        }
    }

    @AfterAll
    static void report() {
        REPORT.write();
    }

    private static void readOrRefuse(String text) {
        List<MountEntry> entries;
        try {
            entries = MountTable.parse(text);
        } catch (DriverException.Internal refused) {
            // exactly "mountinfo line N is not understood: 'LINE N': the field's reason"
            Throwable why = assertInstanceOf(IllegalArgumentException.class, refused.getCause(), refused::getMessage);
            Matcher number = LINE_NUMBER.matcher(refused.getMessage());
            assertTrue(number.lookingAt(), refused::getMessage);
            String[] lines = text.split("\n");
            int n = Integer.parseInt(number.group(1));
            assertTrue(n >= 1 && n <= lines.length, refused::getMessage);
            assertEquals("mountinfo line " + n + " is not understood: '" + lines[n - 1] + "': " + why.getMessage(),
                    refused.getMessage());
            return;
        }
        for (MountEntry entry : entries) {
            entry.readOnly();
            entry.sharedPeerGroup();
        }
    }

    private void picksWhatAFullParseFinds(FuzzedDataProvider data, String text, List<MountEntry> entries)
            throws IOException {
        Path file = Files.writeString(mountinfo, text);
        MountEntry some = data.pickValue(entries);
        Path point = data.consumeBoolean() ? some.mountPoint() : Path.of("/" + data.pickValue(NAMES));
        Optional<DeviceNumber> device = data.consumeBoolean() ? Optional.of(data.pickValue(entries).device())
                : Optional.empty();
        boolean deviceNodes = data.consumeBoolean();
        List<MountEntry> expected = entries.stream().filter(e -> e.mountPoint().equals(point)
                || device.map(e.device()::equals).orElse(false)
                || (deviceNodes && e.fsType().equals("devtmpfs"))).toList();
        assertEquals(expected, new MountTable(file).snapshot().selected(List.of(point), device, deviceNodes), text);
    }

    private static MountEntry entry(FuzzedDataProvider data) {
        List<String> optional = new ArrayList<>();
        for (int n = data.consumeInt(0, 3); n > 0; n--) {
            optional.add(data.pickValue(OPTIONAL_FIELDS));
        }
        return new MountEntry(data.consumeInt(0, Integer.MAX_VALUE), data.consumeInt(0, Integer.MAX_VALUE),
                new DeviceNumber(data.consumeInt(0, DeviceNumber.MAX_MAJOR), data.consumeInt(0, DeviceNumber.MAX_MINOR)),
                data.consumeBoolean() ? "/" : path(data), Path.of(path(data)), options(data), optional,
                data.pickValue(new String[] {"ext4", "xfs", "tmpfs", "devtmpfs", "fuse.sshfs", "a b"}),
                data.consumeBoolean() ? "/dev/" + name(data) : name(data), options(data));
    }

    /** An absolute path as the kernel prints one: no empty, "." or ".." component, no trailing slash. */
    private static String path(FuzzedDataProvider data) {
        StringBuilder path = new StringBuilder();
        for (int n = data.consumeInt(1, 5); n > 0; n--) {
            path.append('/').append(name(data));
        }
        return path.toString();
    }

    private static String name(FuzzedDataProvider data) {
        if (data.consumeBoolean()) {
            return data.pickValue(NAMES);
        }
        StringBuilder name = new StringBuilder();
        for (int n = data.consumeInt(1, 8); n > 0; n--) {
            char c = data.consumeCharNoSurrogates();
            name.append(c == '/' || c == 0 ? 'x' : c);
        }
        String text = name.toString();
        return text.equals(".") || text.equals("..") ? "dot" : text;
    }

    private static List<String> options(FuzzedDataProvider data) {
        List<String> options = new ArrayList<>();
        for (int n = data.consumeInt(1, 4); n > 0; n--) {
            options.add(data.pickValue(OPTIONS));
        }
        return options;
    }

    private static String line(MountEntry entry) {
        return entry.mountId() + " " + entry.parentId() + " " + entry.device() + " "
                + MountinfoEscapes.escape(entry.root())
                + " " + MountinfoEscapes.escape(entry.mountPoint().toString()) + " " + options(entry.options())
                + (entry.optionalFields().isEmpty() ? "" : " " + String.join(" ", entry.optionalFields()))
                + " - " + MountinfoEscapes.escape(entry.fsType()) + " " + MountinfoEscapes.escape(entry.source()) + " "
                + options(entry.superOptions());
    }

    private static String options(List<String> options) {
        return String.join(",", options.stream().map(MountinfoEscapes::escape).toList());
    }
}
